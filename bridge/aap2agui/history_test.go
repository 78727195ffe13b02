package aap2agui_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
)

// historyProblems checks a session's history against AAP's rule that
// every tool result follows its tool_use: each tool message answers a call
// made earlier (by an assistant message), no call has two results, and
// only the calls of the last turn may still be waiting.
func historyProblems(msgs []aap.Message) []string {
	var problems []string
	called := map[string]bool{}
	answered := map[string]bool{}
	var open []string // calls without a result, in order
	for i, m := range msgs {
		switch m := m.(type) {
		case *aap.UserMessage:
			for _, id := range open {
				if !answered[id] {
					problems = append(problems, fmt.Sprintf("messages[%d]: a user message while tool call %q has no result", i, id))
				}
			}
			open = nil
		case *aap.AssistantMessage:
			for _, b := range m.Content.Blocks {
				if tu, ok := b.(*aap.ToolUseBlock); ok {
					if called[tu.ToolCallID] {
						problems = append(problems, fmt.Sprintf("messages[%d]: tool call %q made twice", i, tu.ToolCallID))
					}
					called[tu.ToolCallID] = true
					open = append(open, tu.ToolCallID)
				}
			}
		case *aap.ToolMessage:
			switch {
			case !called[m.ToolCallID]:
				problems = append(problems, fmt.Sprintf("messages[%d]: tool result for %q, which no tool_use before it made", i, m.ToolCallID))
			case answered[m.ToolCallID]:
				problems = append(problems, fmt.Sprintf("messages[%d]: a second tool result for %q", i, m.ToolCallID))
			}
			answered[m.ToolCallID] = true
		}
	}
	return problems
}

func (e *env) historyMessages(t *testing.T, id string) []aap.Message {
	t.Helper()
	msgs, err := e.Client.History(bridgetest.Context(t), id, aap.HistoryFull)
	require.NoError(t, err)
	return msgs
}

// The events below are exactly the shapes @ag-ui/mastra 1.1.2 (with
// @mastra/core 1.71.0) sends for a tool that suspends for approval, as
// recorded from the real packages (interop/mastra runs them in CI): the
// suspended call is never streamed (no TOOL_CALL_START/ARGS/END), a CUSTOM
// on_interrupt event carries the suspension, RUN_FINISHED names the call in
// an interrupt (reason "mastra:tool_suspend", id "<runId>::<toolCallId>",
// tool name and arguments under metadata.mastra), and after the resume the
// next run starts with a TOOL_CALL_RESULT for that call, then the answer as
// TEXT_MESSAGE_CHUNKs, then a RUN_FINISHED carrying token usage.
const (
	mastraSuspendSchema = `{"type":"object","properties":{"approved":{"type":"boolean"},"reason":{"type":"string"}},"required":["approved"],"additionalProperties":false,"$schema":"http://json-schema.org/draft-07/schema#"}`
	mastraInterrupt     = `{"id":"r1::call-pub-3","reason":"mastra:tool_suspend","toolCallId":"call-pub-3",` +
		`"responseSchema":` + mastraSuspendSchema + `,` +
		`"metadata":{"mastra":{"type":"mastra_suspend","toolName":"publish","suspendPayload":{"message":"Publish \"hello world\"?"},` +
		`"args":{"text":"hello world"},"resumeSchema":"{\"type\":\"object\"}","runId":"r1"}}}`
)

func mastraSuspendRun(in *runInput) []string {
	return []string{
		runStarted(in),
		`{"type":"CUSTOM","name":"on_interrupt","value":"{\"type\":\"mastra_suspend\",\"toolCallId\":\"call-pub-3\",\"toolName\":\"publish\",\"suspendPayload\":{\"message\":\"Publish \\\"hello world\\\"?\"},\"args\":{\"text\":\"hello world\"},\"resumeSchema\":\"{}\",\"runId\":\"r1\"}"}`,
		interruptFinish(in, "["+mastraInterrupt+"]"),
	}
}

func mastraResumedRun(in *runInput) []string {
	return []string{
		runStarted(in),
		`{"type":"TOOL_CALL_RESULT","toolCallId":"call-pub-3","content":"{\"published\":\"hello world\"}","messageId":"981cd37e-da92-4b02-88f6-5a2565ab209f","role":"tool"}`,
		`{"type":"TEXT_MESSAGE_CHUNK","role":"assistant","messageId":"0ca34961-cefa-4bbe-8a82-d9046c1861fa","delta":"Published "}`,
		`{"type":"TEXT_MESSAGE_CHUNK","role":"assistant","messageId":"0ca34961-cefa-4bbe-8a82-d9046c1861fa","delta":"it."}`,
		fmt.Sprintf(`{"type":"RUN_FINISHED","threadId":%q,"runId":%q,"usage":[{"provider":"mock-provider","model":"mock-model-id","inputTokens":2,"outputTokens":2,"totalTokens":4}]}`, in.ThreadID, in.RunID),
	}
}

// TestResultForInterruptedCall checks that a TOOL_CALL_RESULT for a call
// the stream never showed, which an earlier interrupt named (a Mastra tool
// that suspended for approval), gets its tool_use from that interrupt: in
// the AAP stream (tool_call before tool_result), in history, and in what
// the agent is sent next, so that history stays valid AAP and the agent
// never sees a result without its call.
func TestResultForInterruptedCall(t *testing.T) {
	tests := []struct {
		name   string
		answer aap.Message
		stored string // the history entry the answer leaves for the agui_interrupt call
	}{
		{"answered with a tool_permission", &aap.ToolPermissionMessage{ToolCallID: "r1::call-pub-3", Granted: true}, toolMessage("r1::call-pub-3", "Tool call granted; the agent did not report its result.")},
		{"answered with a tool result", &aap.ToolMessage{ToolCallID: "r1::call-pub-3", Content: aap.TextContent(`{"approved":true}`)}, toolMessage("r1::call-pub-3", `{"approved":true}`)},
	}
	for _, tt := range tests {
		for _, mode := range []aap.StreamMode{aap.StreamDelta, aap.StreamMessage, aap.StreamNone} {
			t.Run(tt.name+"/"+string(mode), func(t *testing.T) {
				up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
					switch n {
					case 0:
						sseEvents(w, mastraSuspendRun(in)...)
					case 1:
						sseEvents(w, mastraResumedRun(in)...)
					default:
						sseEvents(w, textRun(in, "m9", "You're welcome.")...)
					}
				})
				e := newEnv(t, up.URL)
				id := e.createSession(t, aap.PostSessionsRequest{})
				_, err := e.Client.Turn(bridgetest.Context(t), id, &aap.PostSessionTurnRequest{Stream: mode, Messages: []aap.Message{aap.UserText("publish hello world")}})
				require.NoError(t, err)

				var got []aap.Message
				if mode == aap.StreamNone {
					resp, err := e.Client.Turn(bridgetest.Context(t), id, &aap.PostSessionTurnRequest{Messages: []aap.Message{tt.answer}})
					require.NoError(t, err)
					assert.Equal(t, aap.StopEndTurn, resp.StopReason)
					got = resp.Messages
				} else {
					evs, err := e.stream(t, id, aap.PostSessionTurnRequest{Stream: mode, Messages: []aap.Message{tt.answer}})
					require.NoError(t, err)
					text := part{kind: "text", text: "Published it.", deltas: []string{"Published ", "it."}}
					assert.Equal(t, eventsOf(t, mode, []part{
						call("call-pub-3", "publish", `{"text":"hello world"}`),
						result("call-pub-3", `{"published":"hello world"}`),
						text,
					}, aap.StopEndTurn), eventLines(t, evs))
				}
				if got != nil {
					assert.Equal(t, []string{
						toolUse("call-pub-3", "publish", `{"text":"hello world"}`),
						toolMessage("call-pub-3", `{"published":"hello world"}`),
						assistantText("Published it."),
					}, messageLines(t, got), "none-mode response")
				}

				_, err = e.stream(t, id, userTurn(aap.StreamDelta, "thanks"))
				require.NoError(t, err)
				assert.Equal(t, []string{
					`{"role":"user","content":"publish hello world"}`,
					toolUse("r1::call-pub-3", "agui_interrupt", mastraInterrupt),
					tt.stored,
					toolUse("call-pub-3", "publish", `{"text":"hello world"}`),
					toolMessage("call-pub-3", `{"published":"hello world"}`),
					assistantText("Published it."),
					`{"role":"user","content":"thanks"}`,
					assistantText("You're welcome."),
				}, e.history(t, id, aap.HistoryFull))
				assert.Empty(t, historyProblems(e.historyMessages(t, id)))

				// The agent is sent the call with its result, never a result
				// alone (which Mastra would turn into a call named "unknown").
				in := up.input(t, 2)
				assert.Empty(t, toolMessageProblems(in))
				raw := string(in.Raw["messages"])
				assert.Contains(t, raw, `"toolCalls":[{"id":"call-pub-3","type":"function","function":{"name":"publish","arguments":"{\"text\":\"hello world\"}"}}]`)
				assert.NotContains(t, raw, "agui_interrupt")
			})
		}
	}
}

// TestOrphanResults checks the shapes that would put a tool result in
// history without its tool_use before it, whatever the agent sends: each
// such result is left out of the stream and of history, with a warning
// naming the call and the session, and the turn goes on.
func TestOrphanResults(t *testing.T) {
	tests := []struct {
		name     string
		first    func(in *runInput) []string // the first run, if the case needs one before
		events   func(in *runInput) []string
		wantWarn string
		want     []string // history after the turn under test
	}{
		{
			name: "a result for a call nothing named",
			events: func(in *runInput) []string {
				return concat([]string{runStarted(in),
					`{"type":"TOOL_CALL_RESULT","toolCallId":"ghost","content":"boo","messageId":"r-ghost","role":"tool"}`},
					textMessage("m1", "Done."), []string{runFinished(in)})
			},
			wantWarn: `"tool_call_id":"ghost"`,
			want:     []string{`{"role":"user","content":"go"}`, assistantText("Done.")},
		},
		{
			name: "a second result for the same call",
			events: func(in *runInput) []string {
				return concat([]string{runStarted(in)},
					toolCallEvents("c1", "lookup", "m0", `{}`),
					[]string{
						`{"type":"TOOL_CALL_RESULT","toolCallId":"c1","content":"one","messageId":"r1","role":"tool"}`,
						`{"type":"TOOL_CALL_RESULT","toolCallId":"c1","content":"two","messageId":"r2","role":"tool"}`,
					},
					textMessage("m1", "Done."), []string{runFinished(in)})
			},
			wantWarn: `"tool_call_id":"c1"`,
			want: []string{`{"role":"user","content":"go"}`, toolUse("c1", "lookup", `{}`),
				toolMessage("c1", "one"), assistantText("Done.")},
		},
		{
			name: "a result, in a later run, for a call that already has one",
			first: func(in *runInput) []string {
				return concat([]string{runStarted(in)}, toolCallEvents("c1", "lookup", "m0", `{}`),
					[]string{`{"type":"TOOL_CALL_RESULT","toolCallId":"c1","content":"one","messageId":"r1","role":"tool"}`, runFinished(in)})
			},
			events: func(in *runInput) []string {
				return concat([]string{runStarted(in),
					`{"type":"TOOL_CALL_RESULT","toolCallId":"c1","content":"again","messageId":"r2","role":"tool"}`},
					textMessage("m1", "Done."), []string{runFinished(in)})
			},
			wantWarn: `"tool_call_id":"c1"`,
			want: []string{`{"role":"user","content":"first"}`, toolUse("c1", "lookup", `{}`), toolMessage("c1", "one"),
				`{"role":"user","content":"go"}`, assistantText("Done.")},
		},
		{
			name: "a MESSAGES_SNAPSHOT holding a tool message without its call",
			events: func(in *runInput) []string {
				return concat([]string{runStarted(in),
					`{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"u1","role":"user","content":"go"},` +
						`{"id":"t1","role":"tool","toolCallId":"lost","content":"orphan"},{"id":"a1","role":"assistant","content":"Fine."}]}`},
					textMessage("m1", "Done."), []string{runFinished(in)})
			},
			wantWarn: `"tool_call_id":"lost"`,
			want:     []string{`{"role":"user","content":"go"}`, assistantText("Fine."), assistantText("Done.")},
		},
	}
	for _, tt := range tests {
		for _, mode := range []aap.StreamMode{aap.StreamDelta, aap.StreamMessage, aap.StreamNone} {
			t.Run(tt.name+"/"+string(mode), func(t *testing.T) {
				up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
					if tt.first != nil && n == 0 {
						sseEvents(w, tt.first(in)...)
						return
					}
					sseEvents(w, tt.events(in)...)
				})
				var logs bridgetest.SyncBuffer
				e := newEnv(t, up.URL, func(c *aap2agui.Config) { c.Logger = zerolog.New(&logs) })
				id := e.createSession(t, aap.PostSessionsRequest{})
				if tt.first != nil {
					_, err := e.stream(t, id, userTurn(aap.StreamDelta, "first"))
					require.NoError(t, err)
				}
				r := doRaw(t, http.MethodPost, e.URL+"/sessions/"+id+"/turns", "", `{"stream":"`+string(mode)+`","messages":[{"role":"user","content":"go"}]}`)
				require.Equal(t, http.StatusOK, r.Status, r.Body)
				assert.Contains(t, r.Body, "Done.")
				assert.NotContains(t, r.Body, `"stopReason":"error"`)
				for _, orphan := range []string{"boo", "two", "again", "orphan"} {
					assert.NotContains(t, r.Body, orphan, "the dropped result is not shown")
				}
				assert.Equal(t, tt.want, e.history(t, id, aap.HistoryFull))
				assert.Empty(t, historyProblems(e.historyMessages(t, id)))
				var warned bool
				for _, line := range strings.Split(logs.String(), "\n") {
					if strings.Contains(line, `"level":"warn"`) && strings.Contains(line, tt.wantWarn) && strings.Contains(line, `"session":"`+id+`"`) {
						warned = true
					}
				}
				assert.True(t, warned, "a warning naming the call and the session; logs:\n%s", logs.String())
			})
		}
	}
}

// TestInterruptNamingCallWithoutTool checks an interrupt that names a
// toolCallId but not the tool: the result that follows the resume cannot
// get a tool_use, so it is left out of history with a warning.
func TestInterruptNamingCallWithoutTool(t *testing.T) {
	up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
		if n == 0 {
			sseEvents(w, runStarted(in), interruptFinish(in, `[{"id":"ask-1","reason":"confirmation","toolCallId":"hidden-1","message":"Go on?"}]`))
			return
		}
		sseEvents(w, concat([]string{runStarted(in),
			`{"type":"TOOL_CALL_RESULT","toolCallId":"hidden-1","content":"ran","messageId":"r-h","role":"tool"}`},
			textMessage("m1", "Done."), []string{runFinished(in)})...)
	})
	var logs bridgetest.SyncBuffer
	e := newEnv(t, up.URL, func(c *aap2agui.Config) { c.Logger = zerolog.New(&logs) })
	id := e.createSession(t, aap.PostSessionsRequest{})
	_, err := e.stream(t, id, userTurn(aap.StreamDelta, "go"))
	require.NoError(t, err)
	evs, err := e.stream(t, id, aap.PostSessionTurnRequest{Stream: aap.StreamDelta, Messages: []aap.Message{&aap.ToolPermissionMessage{ToolCallID: "ask-1", Granted: true}}})
	require.NoError(t, err)
	assert.Equal(t, []string{`turn_start {}`, `text_delta {"delta":"Done."}`, `turn_stop {"stopReason":"end_turn"}`}, eventLines(t, evs))
	assert.Empty(t, historyProblems(e.historyMessages(t, id)))
	assert.NotContains(t, strings.Join(e.history(t, id, aap.HistoryFull), "\n"), `"hidden-1","content"`)
	assert.Contains(t, logs.String(), `"tool_call_id":"hidden-1"`)
}
