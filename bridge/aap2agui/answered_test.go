package aap2agui_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/demo"
)

// An agent that, once its interrupt is approved, answers without a
// TOOL_CALL_RESULT for the call: the call was answered and the run went on,
// so it is never "not answered" when the user says something new. The
// history gets a tool message right after the call, saying the call was
// granted and no result came, so that it stays valid for the agent's model.
func TestGrantedWithoutResult(t *testing.T) {
	for _, mode := range []aap.StreamMode{aap.StreamDelta, aap.StreamMessage, aap.StreamNone} {
		t.Run(string(mode), func(t *testing.T) {
			up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
				if n == 0 {
					sseEvents(w, concat([]string{runStarted(in)},
						toolCallEvents("call_s", "web_search", "m0", `{"query":"x"}`),
						[]string{interruptFinish(in, `[{"id":"int-s","reason":"tool_call","toolCallId":"call_s"}]`)})...)
					return
				}
				sseEvents(w, textRun(in, fmt.Sprint("m", n), "Found it.")...)
			})
			e := newEnv(t, up.URL)
			id := e.createSession(t, aap.PostSessionsRequest{Agent: aap.AgentConfig{Tools: []aap.ServerToolRef{{Name: demo.SearchTool}}}})
			_, err := e.Client.Turn(bridgetest.Context(t), id, &aap.PostSessionTurnRequest{Stream: aap.StreamNone, Messages: []aap.Message{aap.UserText("search x")}})
			require.NoError(t, err)
			perm := aap.PostSessionTurnRequest{Stream: mode, Messages: []aap.Message{&aap.ToolPermissionMessage{ToolCallID: "call_s", Granted: true}}}
			if mode == aap.StreamNone {
				_, err = e.Client.Turn(bridgetest.Context(t), id, &perm)
			} else {
				_, err = e.stream(t, id, perm)
			}
			require.NoError(t, err)
			runs := up.count()
			_, err = e.stream(t, id, userTurn(aap.StreamDelta, "thanks"))
			require.NoError(t, err)
			assert.Empty(t, toolMessageProblems(up.input(t, runs)))
			assert.Equal(t, []string{
				`{"role":"user","content":"search x"}`,
				toolUse("call_s", "web_search", `{"query":"x"}`),
				toolMessage("call_s", "Tool call granted; the agent did not report its result."),
				assistantText("Found it."),
				`{"role":"user","content":"thanks"}`,
				assistantText("Found it."),
			}, e.history(t, id, aap.HistoryFull))
		})
	}
}

// A user message while a client tool call is open closes the call with a
// tool message placed right after the assistant message holding the call
// (after the results already there), never after later messages: here
// the agent called a client tool and its own server tool, got the server
// tool's result and said something before stopping for the client tool.
func TestClosingResultRightAfterItsCall(t *testing.T) {
	up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
		if n == 0 {
			sseEvents(w, concat([]string{runStarted(in)},
				toolCallEvents("call_w", "get_weather", "m0", `{"location":"Oslo"}`),
				toolCallEvents("call_s", "web_search", "m0", `{"query":"oslo"}`),
				[]string{`{"type":"TOOL_CALL_RESULT","messageId":"result-call_s","toolCallId":"call_s","content":"Oslo pages","role":"tool"}`},
				textMessage("m1", "Checking the weather."),
				[]string{runFinished(in)})...)
			return
		}
		sseEvents(w, textRun(in, fmt.Sprint("m", n+1), "OK")...)
	})
	e := newEnv(t, up.URL)
	id := e.createSession(t, aap.PostSessionsRequest{
		Agent: aap.AgentConfig{Tools: []aap.ServerToolRef{{Name: demo.SearchTool, Trust: true}}},
		Tools: []aap.ToolSpec{weatherSpec},
	})
	evs, err := e.stream(t, id, userTurn(aap.StreamDelta, "weather in Oslo"))
	require.NoError(t, err)
	assert.Equal(t, `turn_stop {"stopReason":"tool_use"}`, eventLines(t, evs)[len(evs)-1])
	_, err = e.stream(t, id, userTurn(aap.StreamDelta, "never mind"))
	require.NoError(t, err)
	assert.Empty(t, toolMessageProblems(up.input(t, 1)), "what the agent gets is valid")
	assert.Equal(t, []string{
		`{"role":"user","content":"weather in Oslo"}`,
		`{"role":"assistant","content":[{"type":"tool_use","toolCallId":"call_w","name":"get_weather","input":{"location":"Oslo"}},{"type":"tool_use","toolCallId":"call_s","name":"web_search","input":{"query":"oslo"}}]}`,
		toolMessage("call_s", "Oslo pages"),
		toolMessage("call_w", "Tool call was not answered: the user sent a new message instead."),
		assistantText("Checking the weather."),
		`{"role":"user","content":"never mind"}`,
		assistantText("OK"),
	}, e.history(t, id, aap.HistoryFull))
}
