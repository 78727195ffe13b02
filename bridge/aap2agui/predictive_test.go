package aap2agui_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/translate"
)

// confirmSpec is the page's tool of the predictive-state feature, which
// the application declares as its own.
var confirmSpec = aap.ToolSpec{
	Name: demo.StarterConfirmTool, Description: "Ask the user to confirm the changes.",
	Parameters: json.RawMessage(`{"type":"object","properties":{}}`),
}

// seen is what an AAP application is shown of a turn, in any stream mode:
// the tools called (in order), the text, and the stop reason.
type seen struct {
	calls []string
	ids   map[string]string // tool name → toolCallId
	text  string
	stop  aap.StopReason
}

// play sends one turn in mode and returns what the application is shown.
func (e *env) play(t *testing.T, id string, mode aap.StreamMode, msgs ...aap.Message) seen {
	t.Helper()
	req := aap.PostSessionTurnRequest{Stream: mode, Messages: msgs}
	s := seen{ids: map[string]string{}}
	call := func(id, name string) {
		s.calls = append(s.calls, name)
		s.ids[name] = id
	}
	if mode == aap.StreamNone {
		resp, err := e.Client.Turn(bridgetest.Context(t), id, &req)
		require.NoError(t, err)
		for _, m := range resp.Messages {
			if am, ok := m.(*aap.AssistantMessage); ok {
				s.text += am.Content.PlainText()
				for _, b := range am.Content.Blocks {
					if tu, ok := b.(*aap.ToolUseBlock); ok {
						call(tu.ToolCallID, tu.Name)
					}
				}
			}
		}
		s.stop = resp.StopReason
		return s
	}
	evs, err := e.stream(t, id, req)
	require.NoError(t, err)
	for _, ev := range evs {
		switch ev := ev.(type) {
		case *aap.ToolCall:
			call(ev.ToolCallID, ev.Name)
		case *aap.TextDelta:
			s.text += ev.Delta
		case *aap.Text:
			s.text += ev.Text
		case *aap.TurnStop:
			s.stop = ev.StopReason
		}
	}
	return s
}

// The predictive-state feature of the AG-UI dojo (demo.Starter's predictive_state_updates,
// after the all-features server starter's predictive_state_updates.py):
// the agent calls its own write_document_local, which it declares nowhere
// and never reports a result for, and the page's confirm_changes. Both
// calls reach the application; the turn stops for the page's tool alone;
// the next turn answers it (a permission for the agent's call beside the
// result, as AAP's resolving rules have a client send, changes nothing;
// alone it answers nothing and is refused, naming the call the agent's
// own) and the agent answers; a new message then goes on. With the tool
// declared "permissions: none" it is all the same: the call is the
// agent's either way.
func TestAgentsOwnToolPredictiveState(t *testing.T) {
	ownTool := func(c *aap2agui.Config) {
		c.OwnTools = []aap.ToolSpec{{Name: demo.StarterDocumentTool, Description: "Write the document.", Parameters: json.RawMessage(`{"type":"object"}`)}}
	}
	for _, cfg := range []struct {
		name      string
		configure func(*aap2agui.Config)
	}{
		{"no entry for the agent's tool", func(*aap2agui.Config) {}},
		{"the agent's tool declared permissions: none", ownTool},
	} {
		for _, mode := range []aap.StreamMode{aap.StreamDelta, aap.StreamMessage, aap.StreamNone} {
			withPermission := mode != aap.StreamMessage
			t.Run(cfg.name+"/"+string(mode), func(t *testing.T) {
				agent := &bridgetest.Recorder{Agent: &demo.Starter{}}
				e := newEnv(t, serve(t, agent)+"/predictive_state_updates", cfg.configure)
				id := e.createSession(t, aap.PostSessionsRequest{Tools: []aap.ToolSpec{confirmSpec}})

				first := e.play(t, id, mode, aap.UserText("Write a story about a dog"))
				assert.Equal(t, []string{demo.StarterDocumentTool, demo.StarterConfirmTool}, first.calls, "both calls reach the application")
				assert.Equal(t, aap.StopToolUse, first.stop, "the turn waits for the page's tool")
				docCall, confirmCall := first.ids[demo.StarterDocumentTool], first.ids[demo.StarterConfirmTool]

				r := doRaw(t, http.MethodPost, e.URL+"/sessions/"+id+"/turns", "",
					`{"messages":[{"role":"tool_permission","toolCallId":"`+docCall+`","granted":true}]}`)
				requireJSONError(t, r, http.StatusBadRequest, "invalid_turn")
				assert.Contains(t, r.Body, "the agent's own", "a permission alone answers nothing")

				// What a client that follows AAP's resolving rules sends: its
				// tool's result, and a permission for every other call. The
				// permission for the agent's call changes nothing.
				answer := &aap.ToolMessage{ToolCallID: confirmCall, Content: aap.TextContent(`{"accepted":true}`)}
				var second seen
				if withPermission {
					second = e.play(t, id, mode, &aap.ToolPermissionMessage{ToolCallID: docCall, Granted: true}, answer)
				} else {
					second = e.play(t, id, mode, answer)
				}
				assert.Equal(t, "Ok!", second.text)
				assert.Equal(t, aap.StopEndTurn, second.stop)
				ins := agent.Inputs()
				require.Len(t, ins, 2, "the refused turn reached no agent")
				assert.Equal(t, []string{"user", "assistant", "tool"}, roles(ins[1].Messages), "the agent's call goes back as it made it, without a result")
				assert.Equal(t, confirmCall, ins[1].Messages[2].ToolCallID)
				assert.Empty(t, ins[1].Resume)

				third := e.play(t, id, mode, aap.UserText("Another one"))
				assert.Equal(t, aap.StopToolUse, third.stop)
				assert.Empty(t, historyProblems(e.historyMessages(t, id)))
			})
		}
	}
}

// Without the page's tool, the agent's calls are all its own: the turn
// ends as an answer does (end_turn) and the next message is taken.
func TestAgentsOwnToolAlone(t *testing.T) {
	agent := &bridgetest.Recorder{Agent: &demo.Starter{}}
	e := newEnv(t, serve(t, agent)+"/predictive_state_updates")
	id := e.createSession(t, aap.PostSessionsRequest{})
	first := e.play(t, id, aap.StreamDelta, aap.UserText("Write a story about a dog"))
	assert.Equal(t, []string{demo.StarterDocumentTool, demo.StarterConfirmTool}, first.calls)
	assert.Equal(t, aap.StopEndTurn, first.stop, "nothing waits on the application")
	second := e.play(t, id, aap.StreamDelta, aap.UserText("Another one"))
	assert.Equal(t, aap.StopEndTurn, second.stop)
	ins := agent.Inputs()
	require.Len(t, ins, 2)
	assert.Equal(t, []string{"user", "assistant", "tool", "tool", "user"}, roles(ins[1].Messages))
	for _, m := range ins[1].Messages[2:4] {
		content, _ := m.ContentString()
		assert.Equal(t, translate.UnansweredCall, content, "a new message closes the agent's calls, so that history stays valid")
	}
	assert.Empty(t, historyProblems(e.historyMessages(t, id)))
}

// roles returns the roles of msgs.
func roles(msgs []types.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = string(m.Role)
	}
	return out
}

// An agent that asks permission for a call of a tool its configuration
// does not declare (a tool_call interrupt bound to the call) is waited on
// here, but an AAP client that reads GET /meta, agui2aap among them, takes
// the call for the agent's own and never answers it: the operator is told
// which tool to declare.
func TestUndeclaredApprovalWarned(t *testing.T) {
	up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, _ int) {
		sseEvents(w, concat([]string{runStarted(in)}, toolCallEvents("call_d", "deploy_site", "m0", `{}`),
			[]string{interruptFinish(in, `[{"id":"perm-call_d","reason":"tool_call","toolCallId":"call_d"}]`)})...)
	})
	var logs bridgetest.SyncBuffer
	e := newEnv(t, up.URL, func(c *aap2agui.Config) { c.Logger = zerolog.New(&logs) })
	id := e.createSession(t, aap.PostSessionsRequest{})
	s := e.play(t, id, aap.StreamDelta, aap.UserText("deploy"))
	assert.Equal(t, aap.StopToolUse, s.stop)
	lines := bridgetest.LogLines(t, logs.String(), "the agent asks permission for a call of a tool its configuration does not declare as a server tool: AAP clients that read GET /meta take the call for the agent's own and never answer it; declare the tool in --agent-config (permissions: aap)")
	require.Len(t, lines, 1, "logs:\n%s", logs.String())
	assert.Equal(t, "warn", lines[0]["level"])
	assert.Equal(t, "deploy_site", lines[0]["tool"])
	assert.Equal(t, id, lines[0]["session"])

	// Declared, it is a server tool's call like any other: no warning.
	var declared bridgetest.SyncBuffer
	e = newEnv(t, up.URL, func(c *aap2agui.Config) {
		c.Logger = zerolog.New(&declared)
		c.Agent.Tools = append(c.Agent.Tools, aap.ToolSpec{Name: "deploy_site", Description: "Deploy.", Parameters: json.RawMessage(`{"type":"object"}`)})
	})
	id = e.createSession(t, aap.PostSessionsRequest{})
	e.play(t, id, aap.StreamDelta, aap.UserText("deploy"))
	assert.NotContains(t, declared.String(), "does not declare")
}
