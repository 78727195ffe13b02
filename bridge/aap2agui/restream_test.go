package aap2agui_test

import (
	"net/http"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/internal/testkit/metricstest"
)

// TestCallStreamedAgainOnResume: @ag-ui/langgraph, resumed after a
// permission, streams the approved call again (TOOL_CALL_START/ARGS/END,
// same toolCallId) before its result. The call is in history already: the
// client is not sent a second tool_call, history holds it once, and the
// result of a granted untrusted tool raises no "ran a server tool against
// the session's settings" warning.
func TestCallStreamedAgainOnResume(t *testing.T) {
	for _, mode := range []aap.StreamMode{aap.StreamDelta, aap.StreamMessage, aap.StreamNone} {
		t.Run(string(mode), func(t *testing.T) {
			up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
				if n == 0 {
					sseEvents(w, concat([]string{runStarted(in)}, toolCallEvents("call_s", demo.SearchTool, "m0", `{"query":"x"}`),
						[]string{interruptFinish(in, `[{"id":"lg-int-1","reason":"tool_call","toolCallId":"call_s"}]`)})...)
					return
				}
				sseEvents(w, concat([]string{runStarted(in)}, toolCallEvents("call_s", demo.SearchTool, "m0", `{"query":"x"}`),
					[]string{`{"type":"TOOL_CALL_RESULT","messageId":"result-call_s","toolCallId":"call_s","content":"x pages","role":"tool"}`},
					textMessage("m1", "Found it."), []string{runFinished(in)})...)
			})
			var logs bridgetest.SyncBuffer
			e := newEnv(t, up.URL, func(c *aap2agui.Config) { c.Logger = zerolog.New(&logs) })
			id := e.createSession(t, aap.PostSessionsRequest{Agent: aap.AgentConfig{Tools: []aap.ServerToolRef{{Name: demo.SearchTool}}}})
			_, err := e.Client.Turn(bridgetest.Context(t), id, &aap.PostSessionTurnRequest{Stream: aap.StreamNone, Messages: []aap.Message{aap.UserText("search x")}})
			require.NoError(t, err)

			grant := aap.PostSessionTurnRequest{Stream: mode, Messages: []aap.Message{&aap.ToolPermissionMessage{ToolCallID: "call_s", Granted: true}}}
			produced := []string{toolMessage("call_s", "x pages"), assistantText("Found it.")}
			if mode == aap.StreamNone {
				resp, err := e.Client.Turn(bridgetest.Context(t), id, &grant)
				require.NoError(t, err)
				assert.Equal(t, aap.StopEndTurn, resp.StopReason)
				assert.Equal(t, produced, messageLines(t, resp.Messages))
			} else {
				evs, err := e.stream(t, id, grant)
				require.NoError(t, err)
				assert.Equal(t, eventsOf(t, mode, []part{
					result("call_s", "x pages"),
					{kind: "text", text: "Found it.", deltas: []string{"Found it."}},
				}, aap.StopEndTurn), eventLines(t, evs))
			}
			assert.JSONEq(t, `[{"interruptId":"lg-int-1","status":"resolved","payload":{"approved":true}}]`, string(up.input(t, 1).Raw["resume"]))
			assert.Equal(t, append([]string{
				`{"role":"user","content":"search x"}`,
				toolUse("call_s", demo.SearchTool, `{"query":"x"}`),
			}, produced...), e.history(t, id, aap.HistoryFull))
			assert.Empty(t, historyProblems(e.historyMessages(t, id)))
			assert.NotContains(t, logs.String(), "against the session's settings")
			assert.Zero(t, metricstest.Scrape(t, e.Root+"/metrics", "").Value("aap2agui_tools_run_against_settings_total"))
		})
	}
}
