package aap2agui_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/demo"
)

// TestDenialOfInterruptNamedByItsCall: CopilotKit's BuiltInAgent raises
// the interrupt of an "interrupt: true" tool with the toolCallId as its
// id. A denied tool_permission reaches the agent as a denial with its
// reason (resolved {approved:false, reason}), not as a cancelled resume,
// which BuiltInAgent turns into {"status":"cancelled"} without the reason;
// history records AAP's denial text after the call.
func TestDenialOfInterruptNamedByItsCall(t *testing.T) {
	for _, mode := range []aap.StreamMode{aap.StreamDelta, aap.StreamMessage, aap.StreamNone} {
		t.Run(string(mode), func(t *testing.T) {
			up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
				if n == 0 {
					sseEvents(w, concat([]string{runStarted(in)},
						toolCallEvents("call_ck", demo.SearchTool, "m0", `{"query":"x"}`),
						[]string{interruptFinish(in, `[{"id":"call_ck","toolCallId":"call_ck","reason":"tool_call"}]`)})...)
					return
				}
				sseEvents(w, textRun(in, "m1", "Not searching.")...)
			})
			e := newEnv(t, up.URL)
			id := e.createSession(t, aap.PostSessionsRequest{Agent: aap.AgentConfig{Tools: []aap.ServerToolRef{{Name: demo.SearchTool}}}})
			_, err := e.Client.Turn(bridgetest.Context(t), id, &aap.PostSessionTurnRequest{Stream: aap.StreamNone, Messages: []aap.Message{aap.UserText("search x")}})
			require.NoError(t, err)

			deny := aap.PostSessionTurnRequest{Stream: mode, Messages: []aap.Message{&aap.ToolPermissionMessage{ToolCallID: "call_ck", Reason: "too risky"}}}
			if mode == aap.StreamNone {
				resp, err := e.Client.Turn(bridgetest.Context(t), id, &deny)
				require.NoError(t, err)
				assert.Equal(t, aap.StopEndTurn, resp.StopReason)
			} else {
				evs, err := e.stream(t, id, deny)
				require.NoError(t, err)
				assert.Equal(t, eventsOf(t, mode, []part{{kind: "text", text: "Not searching.", deltas: []string{"Not searching."}}}, aap.StopEndTurn), eventLines(t, evs))
			}
			assert.JSONEq(t, `[{"interruptId":"call_ck","status":"resolved","payload":{"approved":false,"reason":"too risky"}}]`,
				string(up.input(t, 1).Raw["resume"]))
			assert.Equal(t, []string{
				`{"role":"user","content":"search x"}`,
				toolUse("call_ck", demo.SearchTool, `{"query":"x"}`),
				toolMessage("call_ck", "Tool call denied: too risky"),
				assistantText("Not searching."),
			}, e.history(t, id, aap.HistoryFull))
			assert.Empty(t, historyProblems(e.historyMessages(t, id)))
		})
	}
}
