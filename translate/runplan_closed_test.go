package translate_test

import (
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/translate"
)

// A not-answered result that the client put in its history after the
// session moved on from the call (aap2agui in front stores it once its
// run has ended, the call having been answered by its cancelled resume
// entry) adds nothing: the run continues the session with its new user
// message, rather than starting a new session. Any other tool message put
// there still rewrites the history.
func TestPlanRunClosedLater(t *testing.T) {
	call := types.ToolCall{ID: "c1", Type: "function", Function: types.FunctionCall{Name: "web_search", Arguments: `{}`}}
	th := &translate.ThreadState{SessionID: "s1", Agent: "a", Delivered: []string{"u1", "a1", "u2", "a2"}}
	msgs := func(content string) []types.Message {
		return []types.Message{
			{ID: "u1", Role: types.RoleUser, Content: "search dogs"},
			{ID: "a1", Role: types.RoleAssistant, ToolCalls: []types.ToolCall{call}},
			{ID: "result-c1", Role: types.RoleTool, ToolCallID: "c1", Content: content},
			{ID: "u2", Role: types.RoleUser, Content: "never mind"},
			{ID: "a2", Role: types.RoleAssistant, Content: "You said: never mind"},
			{ID: "u3", Role: types.RoleUser, Content: "hello again"},
		}
	}
	p, err := translate.PlanRun(th, &types.RunAgentInput{Messages: msgs(aap.ToolCallNotAnswered + ": the user sent a new message instead.")}, "a", translate.PolicyInterrupt)
	require.NoError(t, err)
	assert.False(t, p.Fresh, "the session goes on")
	assert.Equal(t, []aap.Message{aap.UserText("hello again")}, p.Turn)

	p, err = translate.PlanRun(th, &types.RunAgentInput{Messages: msgs("a result of its own")}, "a", translate.PolicyInterrupt)
	require.NoError(t, err)
	assert.True(t, p.Fresh, "a result put before messages the session has rewrites the history")
}
