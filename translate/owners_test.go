package translate_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/stretchr/testify/assert"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/translate"
)

// predictive are the tools of the predictive-state page and agent: the
// page's confirm_changes, and the agent's write_document_local, which it
// declares nowhere (integrations/server-starter-all-features/python/
// examples/example_server/predictive_state_updates.py in ag-ui).
var predictive = translate.ToolOwners{
	Client: translate.ToolNamed([]aap.ToolSpec{{Name: "confirm_changes"}}),
	Server: translate.ToolNamed([]aap.ToolSpec{{Name: "web_search"}}),
}

func TestToolOwners(t *testing.T) {
	cases := []struct {
		name   string
		owners translate.ToolOwners
		tool   string
		want   translate.CallOwner
	}{
		{"a client tool", predictive, "confirm_changes", translate.OwnerClient},
		{"a declared server tool", predictive, "web_search", translate.OwnerServer},
		{"a tool nobody declares is the agent's", predictive, "write_document_local", translate.OwnerAgent},
		{"an agent's interrupt presented as a call waits for its answer", predictive, translate.InterruptToolName, translate.OwnerServer},
		{"a client tool named as a server tool is the client's", translate.ToolOwners{Client: func(string) bool { return true }, Server: func(string) bool { return true }}, "x", translate.OwnerClient},
		{"no tools known: the agent's", translate.ToolOwners{}, "x", translate.OwnerAgent},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.owners.Of(tc.tool))
			assert.Equal(t, tc.want == translate.OwnerAgent, tc.owners.Agents(tc.tool))
		})
	}
}

// Waiting leaves out the agent's own calls: what a turn leaves for the
// client is its own tools' calls and the server tools' permissions.
func TestToolOwnersWaiting(t *testing.T) {
	call := func(id, name string) *aap.ToolCall {
		return &aap.ToolCall{ToolCallID: id, Name: name, Input: json.RawMessage(`{}`)}
	}
	doc, confirm, search := call("c1", "write_document_local"), call("c2", "confirm_changes"), call("c3", "web_search")
	client, server := predictive.Waiting([]*aap.ToolCall{doc, confirm, search})
	assert.Equal(t, []*aap.ToolCall{confirm}, client)
	assert.Equal(t, []*aap.ToolCall{search}, server)
	client, server = predictive.Waiting([]*aap.ToolCall{doc})
	assert.Empty(t, client)
	assert.Empty(t, server)
}

// ToolNamed knows the same names however many tools there are (a set
// past a few).
func TestToolNamed(t *testing.T) {
	for _, n := range []int{0, 1, 16, 17, 1000} {
		specs := make([]aap.ToolSpec, n)
		for i := range specs {
			specs[i] = aap.ToolSpec{Name: fmt.Sprintf("tool_%d", i)}
		}
		named := translate.ToolNamed(specs)
		for i := range n {
			assert.True(t, named(fmt.Sprintf("tool_%d", i)), "%d tools: tool_%d", n, i)
		}
		assert.False(t, named(fmt.Sprintf("tool_%d", n)), "%d tools", n)
		assert.False(t, named(""), "%d tools", n)
	}
}

// A tool_permission for a call of the agent's own, which a client that
// follows AAP's resolving rules sends for every call not its own, is left
// out of the turn; one that an interrupt waits for, or for a call of
// another tool, stays, and a turn of nothing else is left whole.
func TestWithoutOwnPermissions(t *testing.T) {
	hist := []aap.Message{
		aap.UserText("write"),
		&aap.AssistantMessage{Content: aap.BlockContent(
			&aap.ToolUseBlock{ToolCallID: "doc", Name: "write_document_local", Input: json.RawMessage(`{}`)},
			&aap.ToolUseBlock{ToolCallID: "confirm", Name: "confirm_changes", Input: json.RawMessage(`{}`)},
			&aap.ToolUseBlock{ToolCallID: "search", Name: "web_search", Input: json.RawMessage(`{}`)},
		)},
	}
	grant := func(id string) aap.Message { return &aap.ToolPermissionMessage{ToolCallID: id, Granted: true} }
	result := &aap.ToolMessage{ToolCallID: "confirm", Content: aap.TextContent("ok")}
	bound := []types.Interrupt{{ID: "perm-search", Reason: translate.InterruptReasonToolCall, ToolCallID: "search"}}
	boundOwn := []types.Interrupt{{ID: "perm-doc", Reason: translate.InterruptReasonToolCall, ToolCallID: "doc"}}
	cases := []struct {
		name    string
		open    []types.Interrupt
		msgs    []aap.Message
		kept    []aap.Message
		dropped []string
	}{
		{"the agent's call's permission is left out", nil, []aap.Message{grant("doc"), result}, []aap.Message{result}, []string{"doc"}},
		{"a permission an interrupt waits for stays", bound, []aap.Message{grant("search"), grant("doc"), result}, []aap.Message{grant("search"), result}, []string{"doc"}},
		{"the agent's call with an interrupt of its own is asked for", boundOwn, []aap.Message{grant("doc"), result}, []aap.Message{grant("doc"), result}, nil},
		{"a server tool's call without an interrupt stays (CheckTurn refuses it)", nil, []aap.Message{grant("search"), result}, []aap.Message{grant("search"), result}, nil},
		{"a turn of nothing else is left whole", nil, []aap.Message{grant("doc")}, []aap.Message{grant("doc")}, nil},
		{"no permission", nil, []aap.Message{result}, []aap.Message{result}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			kept, dropped := translate.WithoutOwnPermissions(slices.Values(hist), tc.open, tc.msgs, predictive.Agents)
			assert.Equal(t, tc.kept, kept)
			assert.Equal(t, tc.dropped, dropped)
		})
	}
}
