package agui2aap_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/agui2aap"
)

// confirmTool is the page's tool of the predictive-state feature.
var confirmTool = types.Tool{Name: "confirm_changes", Description: "Ask the user to confirm the changes.", Parameters: map[string]any{"type": "object"}}

// A call of a tool that the AAP server's /meta does not declare and that
// the client does not have (write_document_local: an agent's predictive
// state, AAP's unexposed server-side tool) is the agent's own: it reaches
// the page as the call it is and never becomes a permission interrupt,
// under any policy. The run finishes for the page's own tool alone, the
// thread waits on that call only, and the next run carries its result
// (no tool_permission) and goes on.
func TestAgentsOwnCallIsNoInterrupt(t *testing.T) {
	for _, policy := range []agui2aap.Policy{agui2aap.PolicyInterrupt, agui2aap.PolicyGrant, agui2aap.PolicyDeny} {
		t.Run(string(policy), func(t *testing.T) {
			f := newFakeAAP(t, func(w http.ResponseWriter, _ *http.Request, n int, _ *aap.PostSessionTurnRequest) {
				if n == 0 {
					writeEvents(w, &aap.TurnStart{},
						&aap.ToolCall{ToolCallID: "call_doc", Name: "write_document_local", Input: json.RawMessage(`{"document":"Once upon a time"}`)},
						&aap.ToolCall{ToolCallID: "call_confirm", Name: confirmTool.Name, Input: json.RawMessage(`{}`)},
						&aap.TurnStop{StopReason: aap.StopToolUse})
					return
				}
				writeEvents(w, &aap.TurnStart{}, &aap.Text{Text: "Ok!"}, &aap.TurnStop{StopReason: aap.StopEndTurn})
			})
			e := newBridge(t, f.URL, func(c *agui2aap.Config) { c.Policy = policy })
			c := e.conv("predictive")
			c.Tools = []types.Tool{confirmTool}
			c.say("write a story about a dog")
			r := c.run(t)
			require.Nil(t, r.Error)
			require.Len(t, r.Calls, 2, "both calls reach the page")
			assert.Equal(t, "write_document_local", r.Calls[0].Name)
			assert.Equal(t, `{"document":"Once upon a time"}`, r.Calls[0].Args)
			assert.Empty(t, r.interrupts(), "the agent's call asks no permission")
			assert.Equal(t, "", r.outcome(), "the run finishes for the page's tool, as for any client tool")
			th := e.thread(t, "predictive")
			assert.Equal(t, []string{"call_confirm"}, th.ClientCalls)
			assert.Empty(t, th.Interrupts, "the thread keeps no interrupt that no resume could address")
			require.Len(t, f.turnRequests(), 1, "no policy answers the agent's call")

			c.answer("call_confirm", `{"accepted":true}`)
			r = c.run(t)
			require.Nil(t, r.Error, "the next run goes on")
			assert.Equal(t, "Ok!", r.lastText())
			turns := f.turnRequests()
			require.Len(t, turns, 2)
			require.Len(t, turns[1].Messages, 1, "the page's result alone, no tool_permission")
			tm, ok := turns[1].Messages[0].(*aap.ToolMessage)
			require.True(t, ok, "%T", turns[1].Messages[0])
			assert.Equal(t, "call_confirm", tm.ToolCallID)
		})
	}
}

// A turn whose only unanswered call is the agent's own (an AAP server
// that stops for it with tool_use) leaves nothing waiting: no interrupt,
// no client call, and the next user message is the session's next turn.
func TestAgentsOwnCallAlone(t *testing.T) {
	f := newFakeAAP(t, func(w http.ResponseWriter, _ *http.Request, n int, _ *aap.PostSessionTurnRequest) {
		if n == 0 {
			writeEvents(w, &aap.TurnStart{},
				&aap.ToolCall{ToolCallID: "call_doc", Name: "write_document_local", Input: json.RawMessage(`{"document":"x"}`)},
				&aap.TurnStop{StopReason: aap.StopToolUse})
			return
		}
		writeEvents(w, &aap.TurnStart{}, &aap.Text{Text: "More?"}, &aap.TurnStop{StopReason: aap.StopEndTurn})
	})
	e := newBridge(t, f.URL)
	c := e.conv("alone")
	c.say("write")
	r := c.run(t)
	require.Nil(t, r.Error)
	require.Len(t, r.Calls, 1)
	assert.Empty(t, r.interrupts())
	th := e.thread(t, "alone")
	assert.Empty(t, th.Interrupts)
	assert.Empty(t, th.ClientCalls)

	c.say("thanks")
	r = c.run(t)
	require.Nil(t, r.Error, "a run without resume is taken: no interrupt is open")
	assert.Equal(t, "More?", r.lastText())
	turns := f.turnRequests()
	require.Len(t, turns, 2)
	f.mu.Lock()
	assert.Len(t, f.creates, 1, "the same session goes on")
	f.mu.Unlock()
	require.Len(t, turns[1].Messages, 1)
	assert.Equal(t, aap.RoleUser, turns[1].Messages[0].Role())
}
