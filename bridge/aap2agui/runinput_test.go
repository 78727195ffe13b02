package aap2agui_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/demo"
)

// TestRunAgentInput checks what each turn sends upstream: threadId is the
// UUID derived from the session id, a new runId per turn, the whole
// history with the same AG-UI id for a message on every run (the agent's
// own ids for what it said), the client tools, the state, and the session's server tools and options
// under forwardedProps.aap.agent.
func TestRunAgentInput(t *testing.T) {
	up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
		sseEvents(w, textRun(in, fmt.Sprintf("up-m%d", n), "reply ", fmt.Sprint(n))...)
	})
	e := newEnv(t, up.URL, func(c *aap2agui.Config) {
		c.UpstreamHeader = http.Header{"X-Agent-Key": {"agent-side-key"}}
		c.APIKeys = []string{"caller-key-123"}
	})
	id := e.createSession(t, aap.PostSessionsRequest{
		Agent: aap.AgentConfig{
			Tools:   []aap.ServerToolRef{{Name: demo.SearchTool, Trust: true}},
			Options: map[string]string{"language": "French", "api_key": "sk-agent-secret"},
		},
		Messages: []aap.Message{
			&aap.SystemMessage{Content: "Be brief."},
			aap.UserText("earlier question"),
			&aap.AssistantMessage{Content: aap.TextContent("earlier answer")},
		},
		Tools: []aap.ToolSpec{weatherSpec},
	})

	var prev []string // the message ids of the previous run
	for n, text := range []string{"first", "second", "third"} {
		_, err := e.Client.Turn(bridgetest.Context(t), id, &aap.PostSessionTurnRequest{Messages: []aap.Message{aap.UserText(text)}})
		require.NoError(t, err)
		in := up.input(t, n)

		assert.Equal(t, aap2agui.ThreadID(id), in.ThreadID, "threadId is the UUID derived from the session id")
		assert.NotEmpty(t, in.RunID)
		for k := range n {
			assert.NotEqual(t, up.input(t, k).RunID, in.RunID, "run %d has a new runId", n)
		}
		assert.JSONEq(t, `[{"name":"get_weather","description":"Get the current weather for a place.","parameters":{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}}]`,
			string(in.Raw["tools"]))
		assert.JSONEq(t, `{}`, string(in.Raw["state"]))
		assert.JSONEq(t, `[]`, string(in.Raw["context"]))
		assert.JSONEq(t, `{"aap":{"agent":{"name":"agent","tools":[{"name":"web_search","trust":true}],"options":{"api_key":"sk-agent-secret","language":"French"}}}}`,
			string(in.Raw["forwardedProps"]), "the agent gets the real option values, secrets included")
		assert.NotContains(t, in.Raw, "resume")
		assert.Equal(t, "agent-side-key", in.Header.Get("X-Agent-Key"), "UpstreamHeader is sent")
		assert.Empty(t, in.Header.Get("Authorization"), "the caller's key is never forwarded")

		ids := in.messageIDs()
		wantRoles := []string{"system", "user", "assistant", "user"}
		for range n {
			wantRoles = append(wantRoles, "assistant", "user")
		}
		var roles []string
		for _, m := range in.Messages {
			roles = append(roles, string(m.Role))
		}
		assert.Equal(t, wantRoles, roles)
		assert.Equal(t, text, in.Messages[len(in.Messages)-1].Content)
		seen := map[string]bool{}
		for _, mid := range ids {
			assert.NotEmpty(t, mid)
			assert.False(t, seen[mid], "message id %q is unique", mid)
			seen[mid] = true
		}
		if prev != nil {
			want := append(append([]string{}, prev...), fmt.Sprintf("up-m%d", n-1))
			assert.Equal(t, want, ids[:len(ids)-1], "run %d resends the history under the same ids, the agent's reply under its own id", n)
		}
		prev = ids
	}
}

// TestState checks that STATE_SNAPSHOT and STATE_DELTA (JSON Patch) update
// the session's state, which the next run gets as RunAgentInput.state; a
// patch that does not apply leaves it unchanged and the turn goes on.
func TestState(t *testing.T) {
	responses := [][]string{
		{
			`{"type":"STATE_SNAPSHOT","snapshot":{"count":1,"items":["a"],"user":{"name":"Ann"}}}`,
			`{"type":"STATE_DELTA","delta":[{"op":"replace","path":"/count","value":2},{"op":"add","path":"/items/-","value":"b"},{"op":"remove","path":"/user"}]}`,
		},
		{`{"type":"STATE_DELTA","delta":[{"op":"add","path":"/done","value":true}]}`},
		{`{"type":"STATE_DELTA","delta":[{"op":"test","path":"/count","value":99},{"op":"replace","path":"/count","value":100}]}`},
		nil,
	}
	wantState := []string{
		`{}`,
		`{"count":2,"items":["a","b"]}`,
		`{"count":2,"items":["a","b"],"done":true}`,
		`{"count":2,"items":["a","b"],"done":true}`,
	}
	up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
		sseEvents(w, concat([]string{runStarted(in)}, responses[n], textMessage(fmt.Sprintf("m%d", n), "done"), []string{runFinished(in)})...)
	})
	e := newEnv(t, up.URL)
	id := e.createSession(t, aap.PostSessionsRequest{})
	for n := range responses {
		evs, err := e.stream(t, id, userTurn(aap.StreamDelta, fmt.Sprint("turn ", n)))
		require.NoError(t, err)
		assert.Equal(t, []string{`turn_start {}`, `text_delta {"delta":"done"}`, `turn_stop {"stopReason":"end_turn"}`}, eventLines(t, evs),
			"state events are not shown to the AAP client")
		assert.JSONEq(t, wantState[n], string(up.input(t, n).Raw["state"]), "run %d", n)
	}
}

// TestSkippedEvents checks that AG-UI events with no AAP meaning (steps,
// activity, custom, raw) and event types newer than the bridge are skipped
// without ending the stream.
func TestSkippedEvents(t *testing.T) {
	up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, _ int) {
		sseEvents(w,
			runStarted(in),
			`{"type":"STEP_STARTED","stepName":"plan"}`,
			`{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}`,
			`{"type":"CUSTOM","name":"progress","value":{"pct":50}}`,
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"one "}`,
			`{"type":"RAW","event":{"anything":true},"source":"provider"}`,
			`{"type":"A_FUTURE_EVENT","payload":{"x":[1,2,3]}}`,
			`{"type":"ACTIVITY_SNAPSHOT","messageId":"act1","activityType":"progress","content":{"step":1}}`,
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"two"}`,
			`{"type":"TEXT_MESSAGE_END","messageId":"m1"}`,
			`{"type":"STEP_FINISHED","stepName":"plan"}`,
			runFinished(in),
		)
	})
	e := newEnv(t, up.URL)
	tests := []struct {
		mode aap.StreamMode
		want []string
	}{
		{aap.StreamDelta, []string{`turn_start {}`, `text_delta {"delta":"one "}`, `text_delta {"delta":"two"}`, `turn_stop {"stopReason":"end_turn"}`}},
		{aap.StreamMessage, []string{`turn_start {}`, `text {"text":"one two"}`, `turn_stop {"stopReason":"end_turn"}`}},
	}
	for _, tt := range tests {
		t.Run(string(tt.mode), func(t *testing.T) {
			id := e.createSession(t, aap.PostSessionsRequest{})
			evs, err := e.stream(t, id, userTurn(tt.mode, "go"))
			require.NoError(t, err)
			assert.Equal(t, tt.want, eventLines(t, evs))
			assert.Equal(t, []string{`{"role":"user","content":"go"}`, assistantText("one two")}, e.history(t, id, aap.HistoryFull))
		})
	}
}

// TestMessagesSnapshot checks that a MESSAGES_SNAPSHOT becomes the
// session's history, with the snapshot's ids sent on the next run, except
// that the message the application sent in the turn, which this snapshot
// (one that compacts the thread) leaves out, is kept: right before the
// run's first message the snapshot holds, else after the snapshot.
func TestMessagesSnapshot(t *testing.T) {
	const snapshot = `{"type":"MESSAGES_SNAPSHOT","messages":[` +
		`{"id":"s-user","role":"user","content":"summary of what came before"},` +
		`{"id":"s-answer","role":"assistant","content":"noted"}]}`
	const two = `{"role":"user","content":"two"}`
	tests := []struct {
		name   string
		events []string // between RUN_STARTED and RUN_FINISHED
		want   []string // the history after the turn
		ids    []string // the ids of that history on the next run ("" the turn's message's own)
		skip   string
	}{
		{
			name:   "a snapshot replaces the history, but for the turn's own message",
			events: []string{snapshot},
			want:   []string{`{"role":"user","content":"summary of what came before"}`, assistantText("noted"), two},
			ids:    []string{"s-user", "s-answer", ""},
		},
		{
			name:   "what the run says after the snapshot is added to it",
			events: concat([]string{snapshot}, textMessage("after", "and ", "more")),
			want:   []string{`{"role":"user","content":"summary of what came before"}`, assistantText("noted"), two, assistantText("and more")},
			ids:    []string{"s-user", "s-answer", "", "after"},
		},
		{
			// The common shape (LangGraph and others): the run streams its
			// answer, then a snapshot of the whole thread that includes it.
			name:   "a snapshot that includes the message just streamed",
			events: concat(textMessage("s-answer", "no", "ted"), []string{snapshot}),
			want:   []string{`{"role":"user","content":"summary of what came before"}`, two, assistantText("noted")},
			ids:    []string{"s-user", "", "s-answer"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.skip != "" {
				t.Skip(tt.skip)
			}
			up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
				if n == 1 {
					sseEvents(w, concat([]string{runStarted(in)}, tt.events, []string{runFinished(in)})...)
					return
				}
				sseEvents(w, textRun(in, fmt.Sprint("m", n), "ok")...)
			})
			e := newEnv(t, up.URL)
			id := e.createSession(t, aap.PostSessionsRequest{})
			for _, text := range []string{"one", "two", "three"} {
				_, err := e.Client.Turn(bridgetest.Context(t), id, &aap.PostSessionTurnRequest{Messages: []aap.Message{aap.UserText(text)}})
				require.NoError(t, err)
				if text == "two" {
					assert.Equal(t, tt.want, e.history(t, id, aap.HistoryFull))
				}
			}
			ids := up.input(t, 2).messageIDs()
			ids = ids[:len(ids)-1]
			for i, id := range tt.ids {
				if id == "" && i < len(ids) && strings.HasPrefix(ids[i], "msg-") {
					ids[i] = ""
				}
			}
			assert.Equal(t, tt.ids, ids, "the next run sends the snapshot's ids")
		})
	}
}

// TestNewMessageClosesOpenCalls checks a user message sent while a client
// tool call and a permission interrupt are open: the run resumes the
// interrupt as cancelled and closes in its history only the call no
// interrupt speaks for; the stored history gets tool messages saying both
// calls were not answered (so it stays valid).
func TestNewMessageClosesOpenCalls(t *testing.T) {
	up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
		if n > 0 {
			sseEvents(w, textRun(in, fmt.Sprint("m", n), "ok")...)
			return
		}
		sseEvents(w, concat(
			[]string{runStarted(in)},
			toolCallEvents("call_w", "get_weather", "m0", `{"location":"Paris"}`),
			toolCallEvents("call_s", "web_search", "m0", `{"query":"news"}`),
			[]string{fmt.Sprintf(`{"type":"RUN_FINISHED","threadId":%q,"runId":%q,"outcome":{"type":"interrupt","interrupts":[{"id":"int-1","reason":"tool_call","toolCallId":"call_s","message":"Allow web_search?"}]}}`, in.ThreadID, in.RunID)},
		)...)
	})
	e := newEnv(t, up.URL)
	id := e.createSession(t, aap.PostSessionsRequest{
		Agent: aap.AgentConfig{Tools: []aap.ServerToolRef{{Name: demo.SearchTool}}},
		Tools: []aap.ToolSpec{weatherSpec},
	})

	evs, err := e.stream(t, id, userTurn(aap.StreamDelta, "start"))
	require.NoError(t, err)
	require.Equal(t, []string{
		`turn_start {}`,
		`tool_call {"toolCallId":"call_w","name":"get_weather","input":{"location":"Paris"}}`,
		`tool_call {"toolCallId":"call_s","name":"web_search","input":{"query":"news"}}`,
		`turn_stop {"stopReason":"tool_use"}`,
	}, eventLines(t, evs))

	evs, err = e.stream(t, id, userTurn(aap.StreamDelta, "never mind"))
	require.NoError(t, err)
	assert.Equal(t, []string{`turn_start {}`, `text_delta {"delta":"ok"}`, `turn_stop {"stopReason":"end_turn"}`}, eventLines(t, evs))

	notAnswered := "Tool call was not answered: the user sent a new message instead."
	cancelled := "Tool call was not answered: the user sent a new message instead." // the same wording for every open call
	assert.Equal(t, []string{
		`{"role":"user","content":"start"}`,
		`{"role":"assistant","content":[{"type":"tool_use","toolCallId":"call_w","name":"get_weather","input":{"location":"Paris"}},{"type":"tool_use","toolCallId":"call_s","name":"web_search","input":{"query":"news"}}]}`,
		toolMessage("call_w", notAnswered),
		toolMessage("call_s", cancelled),
		`{"role":"user","content":"never mind"}`,
		assistantText("ok"),
	}, e.history(t, id, aap.HistoryFull))

	// The run answers call_s once, by its interrupt's cancelled resume
	// entry (the agent writes its result); only call_w, which no
	// interrupt speaks for, is closed in the history it carries. The
	// stored history closes call_s after the run, the agent having
	// written no result for it.
	in := up.input(t, 1)
	assert.JSONEq(t, `[{"interruptId":"int-1","status":"cancelled"}]`, string(in.Raw["resume"]))
	assert.Equal(t, []string{`tool call "call_s" has no result`}, toolMessageProblems(in))
	var msgs []map[string]any
	require.NoError(t, json.Unmarshal(in.Raw["messages"], &msgs))
	require.Len(t, msgs, 4)
	assert.Equal(t, map[string]any{"id": msgs[2]["id"], "role": "tool", "toolCallId": "call_w", "content": notAnswered}, msgs[2])
	assert.Equal(t, "user", msgs[3]["role"])
	assert.Empty(t, historyProblems(e.historyMessages(t, id)))

	// The interrupt is closed: the next turn has nothing to resume.
	_, err = e.stream(t, id, userTurn(aap.StreamDelta, "again"))
	require.NoError(t, err)
	assert.NotContains(t, up.input(t, 2).Raw, "resume")
}
