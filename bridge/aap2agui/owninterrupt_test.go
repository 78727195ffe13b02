package aap2agui_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
)

// TestInterruptInsideOwnTool: a tool the agent runs on its own
// (permissions: none) raises an interrupt after its call was streamed.
// Answering the interrupt is the whole answer: the application is not
// asked for the call's result, which the agent reports when it resumes. A
// client tool's call is still awaited.
func TestInterruptInsideOwnTool(t *testing.T) {
	up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
		if n == 0 {
			sseEvents(w, concat([]string{runStarted(in)}, toolCallEvents("call_f", fetchTool.Name, "m0", `{"url":"https://example.com"}`),
				[]string{interruptFinish(in, `[{"id":"int-9","reason":"confirmation","message":"Fetch it?"}]`)})...)
			return
		}
		sseEvents(w, concat([]string{runStarted(in),
			`{"type":"TOOL_CALL_RESULT","messageId":"result-call_f","toolCallId":"call_f","content":"fetched","role":"tool"}`},
			textMessage("m1", "Here it is."), []string{runFinished(in)})...)
	})
	e := newEnv(t, up.URL, func(c *aap2agui.Config) { c.OwnTools = []aap.ToolSpec{fetchTool} })
	id := e.createSession(t, aap.PostSessionsRequest{})
	resp, err := e.Client.Turn(bridgetest.Context(t), id, &aap.PostSessionTurnRequest{Stream: aap.StreamNone, Messages: []aap.Message{aap.UserText("fetch")}})
	require.NoError(t, err)
	require.Equal(t, aap.StopToolUse, resp.StopReason)

	resp, err = e.Client.Turn(bridgetest.Context(t), id, &aap.PostSessionTurnRequest{Stream: aap.StreamNone,
		Messages: []aap.Message{&aap.ToolPermissionMessage{ToolCallID: "int-9", Granted: true}}})
	require.NoError(t, err, "the interrupt's answer is enough")
	assert.Equal(t, aap.StopEndTurn, resp.StopReason)
	assert.JSONEq(t, `[{"interruptId":"int-9","status":"resolved","payload":{"approved":true}}]`, string(up.input(t, 1).Raw["resume"]))
	assert.Equal(t, []string{toolMessage("call_f", "fetched"), assistantText("Here it is.")}, messageLines(t, resp.Messages))
	assert.Empty(t, historyProblems(e.historyMessages(t, id)))
}
