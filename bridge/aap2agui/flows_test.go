package aap2agui_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/demo"
)

// interruptFinish is a RUN_FINISHED with an interrupt outcome.
func interruptFinish(in *runInput, interrupts string) string {
	return fmt.Sprintf(`{"type":"RUN_FINISHED","threadId":%q,"runId":%q,"outcome":{"type":"interrupt","interrupts":%s}}`, in.ThreadID, in.RunID, interrupts)
}

// TestMixedAnswer checks the AAP rule that a client answers a client tool
// call and an untrusted server tool call of the same turn together: the
// result becomes an AG-UI tool message, the permission a resume entry.
func TestMixedAnswer(t *testing.T) {
	up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
		if n == 0 {
			sseEvents(w, concat([]string{runStarted(in)},
				toolCallEvents("call_w", "get_weather", "m0", `{"location":"Oslo"}`),
				toolCallEvents("call_s", "web_search", "m0", `{"query":"oslo"}`),
				[]string{interruptFinish(in, `[{"id":"int-s","reason":"tool_call","toolCallId":"call_s"}]`)})...)
			return
		}
		sseEvents(w, concat([]string{runStarted(in),
			`{"type":"TOOL_CALL_RESULT","messageId":"result-call_s","toolCallId":"call_s","content":"Oslo pages","role":"tool"}`},
			textMessage("m1", "Cold ", "and pages."), []string{runFinished(in)})...)
	})
	e := newEnv(t, up.URL)
	id := e.createSession(t, aap.PostSessionsRequest{
		Agent: aap.AgentConfig{Tools: []aap.ServerToolRef{{Name: demo.SearchTool}}},
		Tools: []aap.ToolSpec{weatherSpec},
	})
	_, err := e.stream(t, id, userTurn(aap.StreamDelta, "go"))
	require.NoError(t, err)

	evs, err := e.stream(t, id, aap.PostSessionTurnRequest{Stream: aap.StreamDelta, Messages: []aap.Message{
		&aap.ToolPermissionMessage{ToolCallID: "call_s", Granted: true},
		&aap.ToolMessage{ToolCallID: "call_w", Content: aap.TextContent("-5°C")},
	}})
	require.NoError(t, err)
	assert.Equal(t, []string{
		`turn_start {}`,
		`tool_result {"toolCallId":"call_s","content":"Oslo pages"}`,
		`text_delta {"delta":"Cold "}`, `text_delta {"delta":"and pages."}`,
		`turn_stop {"stopReason":"end_turn"}`,
	}, eventLines(t, evs))

	in := up.input(t, 1)
	assert.JSONEq(t, `[{"interruptId":"int-s","status":"resolved","payload":{"approved":true}}]`, string(in.Raw["resume"]))
	last := in.Messages[len(in.Messages)-1]
	assert.Equal(t, "tool", string(last.Role))
	assert.Equal(t, "call_w", last.ToolCallID)
	assert.Equal(t, "-5°C", last.Content)
	assert.Equal(t, []string{
		`{"role":"user","content":"go"}`,
		`{"role":"assistant","content":[{"type":"tool_use","toolCallId":"call_w","name":"get_weather","input":{"location":"Oslo"}},{"type":"tool_use","toolCallId":"call_s","name":"web_search","input":{"query":"oslo"}}]}`,
		toolMessage("call_w", "-5°C"),
		toolMessage("call_s", "Oslo pages"),
		assistantText("Cold and pages."),
	}, e.history(t, id, aap.HistoryFull))
}

// TestOtherInterrupt checks an AG-UI interrupt that is not a tool call's
// permission: it shows as a call of the reserved agui_interrupt tool,
// answered by a tool result (the resume payload) or a denial (cancelled).
func TestOtherInterrupt(t *testing.T) {
	tests := []struct {
		name       string
		answer     aap.Message
		wantResume string
	}{
		{
			name:       "answered with a JSON result",
			answer:     &aap.ToolMessage{ToolCallID: "confirm-1", Content: aap.TextContent(`{"confirmed":true,"note":"go <ahead> & do it"}`)},
			wantResume: `[{"interruptId":"confirm-1","status":"resolved","payload":{"confirmed":true,"note":"go <ahead> & do it"}}]`,
		},
		{
			name:       "denied",
			answer:     &aap.ToolPermissionMessage{ToolCallID: "confirm-1", Granted: false, Reason: "changed my mind"},
			wantResume: `[{"interruptId":"confirm-1","status":"cancelled","payload":{"reason":"changed my mind"}}]`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
				if n == 0 {
					sseEvents(w, runStarted(in), interruptFinish(in, `[{"id":"confirm-1","reason":"confirmation","message":"Deploy to production?"}]`))
					return
				}
				sseEvents(w, textRun(in, "m1", "done")...)
			})
			e := newEnv(t, up.URL)
			id := e.createSession(t, aap.PostSessionsRequest{})
			evs, err := e.stream(t, id, userTurn(aap.StreamDelta, "deploy"))
			require.NoError(t, err)
			lines := eventLines(t, evs)
			require.Len(t, lines, 3)
			assert.Equal(t, `turn_stop {"stopReason":"tool_use"}`, lines[2])
			var call struct {
				ToolCallID string          `json:"toolCallId"`
				Name       string          `json:"name"`
				Input      json.RawMessage `json:"input"`
			}
			require.True(t, strings.HasPrefix(lines[1], "tool_call "), lines[1])
			require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(lines[1], "tool_call ")), &call))
			assert.Equal(t, "confirm-1", call.ToolCallID)
			assert.Equal(t, "agui_interrupt", call.Name)
			assert.Contains(t, string(call.Input), `"Deploy to production?"`, "the application sees what is asked")

			evs, err = e.stream(t, id, aap.PostSessionTurnRequest{Stream: aap.StreamDelta, Messages: []aap.Message{tt.answer}})
			require.NoError(t, err)
			assert.Equal(t, []string{`turn_start {}`, `text_delta {"delta":"done"}`, `turn_stop {"stopReason":"end_turn"}`}, eventLines(t, evs))
			assert.JSONEq(t, tt.wantResume, string(up.input(t, 1).Raw["resume"]))

			// The conversation goes on with a valid history.
			_, err = e.stream(t, id, userTurn(aap.StreamDelta, "next"))
			require.NoError(t, err)
			assert.Empty(t, toolMessageProblems(up.input(t, 2)))
			// The agent never sees its interrupt as a tool call of its own.
			for _, run := range []int{1, 2} {
				assert.NotContains(t, string(up.input(t, run).Raw["messages"]), "agui_interrupt", "run %d", run)
				assert.NotContains(t, string(up.input(t, run).Raw["messages"]), `"toolCallId":"confirm-1"`, "run %d", run)
			}
		})
	}
}

// TestToolInputBytes checks that tool input stays byte for byte what the
// agent streamed (no key reordering, float rounding or HTML escaping), on
// the AAP side and when the call is sent back to the agent, and that
// arguments that are not a JSON object are kept, not dropped.
func TestToolInputBytes(t *testing.T) {
	const args = `{"z":"a<b>&c","a":1.50,"n":[1e3,-0.0],"u":"é\u00e9"}`
	up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
		if n == 0 {
			sseEvents(w, concat([]string{runStarted(in)},
				toolCallEvents("call_1", "get_weather", "m0", args),
				toolCallEvents("call_2", "get_weather", "m0", `{"location":`),
				[]string{runFinished(in)})...)
			return
		}
		sseEvents(w, textRun(in, "m1", "ok")...)
	})
	e := newEnv(t, up.URL)
	id := e.createSession(t, aap.PostSessionsRequest{Tools: []aap.ToolSpec{weatherSpec}})
	evs, err := e.stream(t, id, userTurn(aap.StreamDelta, "go <now> & fast"))
	require.NoError(t, err)
	assert.Equal(t, []string{
		`turn_start {}`,
		`tool_call {"toolCallId":"call_1","name":"get_weather","input":` + args + `}`,
		`tool_call {"toolCallId":"call_2","name":"get_weather","input":{"_raw_arguments":"{\"location\":"}}`,
		`turn_stop {"stopReason":"tool_use"}`,
	}, eventLines(t, evs))

	_, err = e.stream(t, id, aap.PostSessionTurnRequest{Stream: aap.StreamDelta, Messages: []aap.Message{
		&aap.ToolMessage{ToolCallID: "call_1", Content: aap.TextContent("<b>sunny</b> & warm")},
		&aap.ToolMessage{ToolCallID: "call_2", Content: aap.TextContent("bad arguments")},
	}})
	require.NoError(t, err)
	in := up.input(t, 1)
	require.Len(t, in.Messages, 4)
	assert.Equal(t, "go <now> & fast", in.Messages[0].Content)
	require.Len(t, in.Messages[1].ToolCalls, 2)
	assert.Equal(t, args, in.Messages[1].ToolCalls[0].Function.Arguments)
	assert.Equal(t, "<b>sunny</b> & warm", in.Messages[2].Content)
	r := doRaw(t, http.MethodGet, e.URL+"/sessions/"+id+"/history?type=full", "", "")
	assert.Contains(t, r.Body, `"input":`+args, "history keeps the bytes")
	assert.Contains(t, r.Body, `"<b>sunny</b> & warm"`, "no HTML escaping")
}

// TestLargeEvent checks that events far over go-sse's 64 KiB default pass
// with the default configuration.
func TestLargeEvent(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", 64<<10) // 1 MiB
	up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, _ int) {
		sseEvents(w, concat(
			[]string{runStarted(in), `{"type":"STATE_SNAPSHOT","snapshot":{"blob":"` + big + `"}}`},
			textRun(in, "m1", big)[1:],
		)...)
	})
	e := newEnv(t, up.URL)
	id := e.createSession(t, aap.PostSessionsRequest{})
	evs, err := e.stream(t, id, userTurn(aap.StreamDelta, "big"))
	require.NoError(t, err)
	require.Len(t, evs, 3)
	assert.Equal(t, big, evs[1].(*aap.TextDelta).Delta)
	assert.Equal(t, &aap.TurnStop{StopReason: aap.StopEndTurn}, evs[2])
}

// TestSeededToolCall checks tool call resumption: a session seeded with a
// call that has no result takes that result as its first turn.
func TestSeededToolCall(t *testing.T) {
	e := newEnv(t, demoAgent(t))
	id := e.createSession(t, aap.PostSessionsRequest{
		Messages: []aap.Message{
			aap.UserText("weather in Rome"),
			&aap.AssistantMessage{Content: aap.BlockContent(&aap.ToolUseBlock{ToolCallID: "call_seed", Name: "get_weather", Input: json.RawMessage(`{"location":"Rome"}`)})},
		},
		Tools: []aap.ToolSpec{weatherSpec},
	})
	evs, err := e.stream(t, id, aap.PostSessionTurnRequest{Stream: aap.StreamMessage, Messages: []aap.Message{
		&aap.ToolMessage{ToolCallID: "call_seed", Content: aap.TextContent("Hot")},
	}})
	require.NoError(t, err)
	assert.Equal(t, eventsOf(t, aap.StreamMessage, []part{say(demo.WeatherText("Rome", "Hot"))}, aap.StopEndTurn), eventLines(t, evs))
}

// TestConcurrentSessions runs turns on many sessions at once.
func TestConcurrentSessions(t *testing.T) {
	e := newEnv(t, demoAgent(t))
	const sessions, turns = 12, 3
	var wg sync.WaitGroup
	errs := make(chan error, sessions)
	ids := make([]string, sessions)
	for i := range ids {
		ids[i] = e.createSession(t, aap.PostSessionsRequest{})
	}
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range turns {
				text := fmt.Sprintf("session %d turn %d", i, j)
				var got strings.Builder
				for ev, err := range e.Client.StreamTurn(bridgetest.Context(t), id, &aap.PostSessionTurnRequest{Stream: aap.StreamDelta, Messages: []aap.Message{aap.UserText(text)}}) {
					if err != nil {
						errs <- err
						return
					}
					if d, ok := ev.(*aap.TextDelta); ok {
						got.WriteString(d.Delta)
					}
				}
				if got.String() != demo.EchoText(text) {
					errs <- fmt.Errorf("session %d turn %d: got %q", i, j, got.String())
					return
				}
			}
			msgs, err := e.Client.History(bridgetest.Context(t), id, aap.HistoryFull)
			if err == nil && len(msgs) != 2*turns {
				err = fmt.Errorf("session %d: %d history messages", i, len(msgs))
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}
}

// TestDeniedWithoutResult checks a denial the agent acknowledges without a
// TOOL_CALL_RESULT for the call: AAP says the server stores a tool message
// with a denial description ("Tool call denied: <reason>"), so that the
// history stays valid and no later turn thinks the call is still open.
func TestDeniedWithoutResult(t *testing.T) {
	up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
		if n == 0 {
			sseEvents(w, concat([]string{runStarted(in)},
				toolCallEvents("call_s", "web_search", "m0", `{"query":"x"}`),
				[]string{interruptFinish(in, `[{"id":"int-s","reason":"tool_call","toolCallId":"call_s"}]`)})...)
			return
		}
		sseEvents(w, textRun(in, fmt.Sprint("m", n), "OK")...)
	})
	e := newEnv(t, up.URL)
	id := e.createSession(t, aap.PostSessionsRequest{Agent: aap.AgentConfig{Tools: []aap.ServerToolRef{{Name: demo.SearchTool}}}})
	_, err := e.stream(t, id, userTurn(aap.StreamDelta, "search x"))
	require.NoError(t, err)
	_, err = e.stream(t, id, aap.PostSessionTurnRequest{Stream: aap.StreamDelta, Messages: []aap.Message{
		&aap.ToolPermissionMessage{ToolCallID: "call_s", Granted: false, Reason: "not now"},
	}})
	require.NoError(t, err)
	_, err = e.stream(t, id, userTurn(aap.StreamDelta, "thanks"))
	require.NoError(t, err)
	assert.Empty(t, toolMessageProblems(up.input(t, 2)))
	assert.Equal(t, []string{
		`{"role":"user","content":"search x"}`,
		toolUse("call_s", "web_search", `{"query":"x"}`),
		toolMessage("call_s", "Tool call denied: not now"),
		assistantText("OK"),
		`{"role":"user","content":"thanks"}`,
		assistantText("OK"),
	}, e.history(t, id, aap.HistoryFull))
}

// toolMessageProblems checks the tool calls of a run's messages the way
// LLM APIs do: every call has a tool message, and tool messages follow the
// assistant message holding their call (other tool messages aside).
func toolMessageProblems(in *runInput) []string {
	var problems []string
	answered := map[string]bool{}
	var calls map[string]bool // the calls of the last assistant message
	for i, m := range in.Messages {
		switch m.Role {
		case "assistant":
			calls = map[string]bool{}
			for _, c := range m.ToolCalls {
				calls[c.ID] = true
			}
		case "tool":
			if !calls[m.ToolCallID] {
				problems = append(problems, fmt.Sprintf("messages[%d]: tool message for %q does not follow its call", i, m.ToolCallID))
			}
			answered[m.ToolCallID] = true
		default:
			calls = nil
		}
	}
	for _, m := range in.Messages {
		for _, c := range m.ToolCalls {
			if !answered[c.ID] {
				problems = append(problems, fmt.Sprintf("tool call %q has no result", c.ID))
			}
		}
	}
	return problems
}

// TestStopReasons checks how the end of a run becomes the turn's stop
// reason.
func TestStopReasons(t *testing.T) {
	tests := []struct {
		name   string
		events func(in *runInput) []string
		want   aap.StopReason
	}{
		{"success outcome", func(in *runInput) []string {
			return concat(textRun(in, "m", "hi")[:4], []string{fmt.Sprintf(`{"type":"RUN_FINISHED","threadId":%q,"runId":%q,"outcome":{"type":"success"}}`, in.ThreadID, in.RunID)})
		}, aap.StopEndTurn},
		{"no outcome", func(in *runInput) []string { return textRun(in, "m", "hi") }, aap.StopEndTurn},
		{"max_tokens in result", func(in *runInput) []string {
			return concat(textRun(in, "m", "hi")[:4], []string{fmt.Sprintf(`{"type":"RUN_FINISHED","threadId":%q,"runId":%q,"result":{"stopReason":"max_tokens"}}`, in.ThreadID, in.RunID)})
		}, aap.StopMaxTokens},
		{"refusal in result", func(in *runInput) []string {
			return concat(textRun(in, "m", "hi")[:4], []string{fmt.Sprintf(`{"type":"RUN_FINISHED","threadId":%q,"runId":%q,"result":{"stopReason":"refusal"}}`, in.ThreadID, in.RunID)})
		}, aap.StopRefusal},
		{"a client tool call without a result", func(in *runInput) []string {
			return concat([]string{runStarted(in)}, toolCallEvents("c1", "get_weather", "m", `{}`), []string{runFinished(in)})
		}, aap.StopToolUse},
		{"an agent-run tool call with its result", func(in *runInput) []string {
			return concat([]string{runStarted(in)}, toolCallEvents("c1", "lookup", "m", `{}`),
				[]string{`{"type":"TOOL_CALL_RESULT","messageId":"r1","toolCallId":"c1","content":"42"}`}, textMessage("m2", "It is 42."), []string{runFinished(in)})
		}, aap.StopEndTurn},
		{"RUN_ERROR", func(in *runInput) []string {
			return concat(textRun(in, "m", "hi")[:4], []string{`{"type":"RUN_ERROR","message":"boom"}`})
		}, aap.StopError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, _ int) { sseEvents(w, tt.events(in)...) })
			e := newEnv(t, up.URL)
			id := e.createSession(t, aap.PostSessionsRequest{Tools: []aap.ToolSpec{weatherSpec}})
			resp, err := e.Client.Turn(bridgetest.Context(t), id, &aap.PostSessionTurnRequest{Messages: []aap.Message{aap.UserText("go")}})
			require.NoError(t, err)
			assert.Equal(t, tt.want, resp.StopReason)
		})
	}
}

// TestSSEFraming checks that the bridge reads SSE as the specification
// allows servers to write it, not only as the Go and Node encoders do:
// CRLF line ends, "data:" without a space, event names, ids, comments
// (keep-alive pings), retry fields and data split over several lines.
func TestSSEFraming(t *testing.T) {
	up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, _ int) {
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		_, _ = fmt.Fprint(w,
			"\ufeff: stream opened\r\n\r\n"+
				"retry: 1000\r\nevent: RUN_STARTED\r\nid: 1\r\ndata:"+runStarted(in)+"\r\n\r\n"+
				"data: {\"type\":\"TEXT_MESSAGE_START\",\r\ndata: \"messageId\":\"m1\",\"role\":\"assistant\"}\r\n\r\n"+
				": ping\n\n"+
				"event: message\ndata: {\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m1\",\"delta\":\"line one\\nline two\"}\n\n"+
				"data:{\"type\":\"TEXT_MESSAGE_END\",\"messageId\":\"m1\"}\r\r"+
				"data: "+runFinished(in)+"\n\n")
	})
	e := newEnv(t, up.URL)
	id := e.createSession(t, aap.PostSessionsRequest{})
	evs, err := e.stream(t, id, userTurn(aap.StreamDelta, "go"))
	require.NoError(t, err)
	assert.Equal(t, []string{`turn_start {}`, `text_delta {"delta":"line one\nline two"}`, `turn_stop {"stopReason":"end_turn"}`}, eventLines(t, evs))
}

// TestInterruptInputBytes checks that the input of an agui_interrupt call
// is the interrupt byte for byte as the agent sent it (only insignificant
// whitespace removed): nested keys keep their order, numbers their
// spelling, fields the AG-UI SDK does not know are kept, nothing is
// HTML-escaped; in the stream, in the none-mode response and in history.
func TestInterruptInputBytes(t *testing.T) {
	const sent = `{"reason":"confirmation", "id":"confirm-1","message":"Deploy <prod> & go?",` +
		`"responseSchema":{"type":"object","required":["approved"],"properties":{"reason":{"type":"string"},"approved":{"type":"boolean"}}},` +
		`"metadata":{"zeta":1.50,"alpha":{"y":[1e3,-0.0],"b":"é\u00e9"}},"vendorField":true}`
	compact := strings.NewReplacer(`"confirmation", "id"`, `"confirmation","id"`).Replace(sent)
	for _, mode := range []aap.StreamMode{aap.StreamDelta, aap.StreamMessage, aap.StreamNone} {
		t.Run(string(mode), func(t *testing.T) {
			up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
				sseEvents(w, runStarted(in), interruptFinish(in, "[ "+sent+" ]"))
			})
			e := newEnv(t, up.URL)
			id := e.createSession(t, aap.PostSessionsRequest{})
			wantCall := `{"toolCallId":"confirm-1","name":"agui_interrupt","input":` + compact + `}`
			r := doRaw(t, http.MethodPost, e.URL+"/sessions/"+id+"/turns", "", `{"stream":"`+string(mode)+`","messages":[{"role":"user","content":"deploy"}]}`)
			require.Equal(t, http.StatusOK, r.Status, r.Body)
			if mode == aap.StreamNone {
				assert.Contains(t, r.Body, `{"type":"tool_use",`+strings.TrimPrefix(wantCall, "{"), "none-mode response")
			} else {
				assert.Contains(t, r.Body, "data: "+wantCall+"\n", "stream")
			}
			h := doRaw(t, http.MethodGet, e.URL+"/sessions/"+id+"/history?type=full", "", "")
			assert.Contains(t, h.Body, `"input":`+compact+`}`, "history")
		})
	}
}
