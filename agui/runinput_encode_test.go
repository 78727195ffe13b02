package agui_test

import (
	"strings"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/internal/jsonenc"
)

// requireMarshalMatches holds MarshalRunAgentInput to jsonenc.Marshal (its
// \ufffd escapes, Go 1.26's for invalid UTF-8, written as the character,
// as Go 1.27's encoder writes them).
func requireMarshalMatches(t *testing.T, in *types.RunAgentInput) {
	t.Helper()
	want, err := jsonenc.Marshal(in)
	require.NoError(t, err)
	want = jsonenc.UnescapeReplacement(want)
	got, err := agui.MarshalRunAgentInput(in)
	require.NoError(t, err)
	require.Equal(t, string(want), string(got))
}

func TestMarshalRunAgentInputMatchesEncoder(t *testing.T) {
	parent := "run-0"
	long := strings.Repeat("a long answer, ", 20)
	full := &types.RunAgentInput{
		ThreadID: "t<1>", RunID: "r&1", ParentRunID: &parent, State: map[string]any{"k": []any{1.5, "v"}},
		Messages: []types.Message{
			{ID: "u1", Role: types.RoleUser, Content: "hello \"there\"\n" + long},
			{ID: "a1", Role: types.RoleAssistant, Content: long, EncryptedValue: "enc", Name: "bot"},
			{ID: "a2", Role: types.RoleAssistant, ToolCalls: []types.ToolCall{{ID: "c1", Type: "function", Function: types.FunctionCall{Name: "f", Arguments: "{}"}}}},
			{ID: "t1", Role: types.RoleTool, Content: "result", ToolCallID: "c1", Error: "boom"},
			{ID: "r1", Role: types.RoleReasoning, Content: "", EncryptedContent: "e"},
			{ID: "x1", Role: types.RoleUser, Content: []types.InputContent{{Type: "text", Text: "parts"}}},
			{ID: "act", Role: "activity", ActivityType: "chart"},
			{ID: "n", Role: types.RoleUser},
		},
		Tools:          []types.Tool{{Name: "f", Description: "d", Parameters: map[string]any{"type": "object"}}},
		Context:        []types.Context{{Description: "c", Value: "v"}},
		ForwardedProps: map[string]any{"aap": map[string]any{"x": true}},
		Resume:         []types.ResumeEntry{{InterruptID: "i1", Status: "resolved"}},
	}
	requireMarshalMatches(t, full)
	requireMarshalMatches(t, &types.RunAgentInput{ThreadID: "t", RunID: "r"})
	requireMarshalMatches(t, &types.RunAgentInput{ThreadID: "t", RunID: "r", Messages: []types.Message{}, Tools: []types.Tool{}, Context: []types.Context{}})
}

// FuzzMarshalRunAgentInput holds MarshalRunAgentInput to jsonenc.Marshal
// on messages of any text, role and fields.
func FuzzMarshalRunAgentInput(f *testing.F) {
	f.Add("t", "u1", "user", "hello", "", "", "", false)
	f.Add("t\u2028", "a\xff", "assistant", strings.Repeat("long text ", 10)+"\x00", "name", "enc", "call", true)
	f.Fuzz(func(t *testing.T, thread, id, role, content, name, enc, callID string, noContent bool) {
		m := types.Message{ID: id, Role: types.Role(role), Content: content, Name: name, EncryptedValue: enc, ToolCallID: callID}
		if noContent {
			m.Content = nil
		}
		in := &types.RunAgentInput{ThreadID: thread, RunID: content, State: map[string]any{}, Messages: []types.Message{m, {ID: id, Role: types.RoleUser, Content: content + content}},
			Tools: []types.Tool{}, Context: []types.Context{}, ForwardedProps: map[string]any{}}
		requireMarshalMatches(t, in)
	})
}
