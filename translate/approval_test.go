package translate_test

import (
	"encoding/json"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/translate"
)

// schemaOf reads a JSON schema.
func schemaOf(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(s), &m))
	return m
}

// A tool_permission answers an approval interrupt in the shape its
// responseSchema declares: the boolean it names, the reason only where it
// has room for one (else left, for the caller to keep), never edited
// arguments; a schema no tool_permission satisfies is a *SchemaError.
func TestApprovalResume(t *testing.T) {
	const (
		// Microsoft Agent Framework (agent-framework-ag-ui 1.0.1,
		// _run_common.py _approval_response_schema) for a call with a
		// "path" argument.
		agentFramework = `{"type":"object","properties":{"accepted":{"type":"boolean"},"path":{"type":"string"}},"required":["accepted"],"additionalProperties":false}`
		// pydantic-ai 2.33 (ui/ag_ui/_interrupt.py _ResumePayload).
		pydanticAI = `{"type":"object","properties":{"approved":{"type":"boolean"},"editedArgs":{"type":"object"},"reason":{"type":"string"}},"required":["approved"]}`
	)
	deny := &aap.ToolPermissionMessage{ToolCallID: "c1", Reason: "not now"}
	tests := []struct {
		name, schema string
		perm         *aap.ToolPermissionMessage
		want, left   string
	}{
		{"no schema", ``, deny, `{"approved":false,"reason":"not now"}`, ""},
		{"pydantic-ai: denial with its reason", pydanticAI, deny, `{"approved":false,"reason":"not now"}`, ""},
		{"pydantic-ai: grant, no edited arguments", pydanticAI, &aap.ToolPermissionMessage{ToolCallID: "c1", Granted: true}, `{"approved":true}`, ""},
		{"Agent Framework: its boolean, no room for the reason", agentFramework, deny, `{"accepted":false}`, "not now"},
		{"Agent Framework: denial without a reason", agentFramework, &aap.ToolPermissionMessage{ToolCallID: "c1"}, `{"accepted":false}`, ""},
		{"ADK's confirmed, open to more", `{"type":"object","properties":{"confirmed":{"type":"boolean"}}}`, deny, `{"confirmed":false,"reason":"not now"}`, ""},
		{"one boolean of another name", `{"type":"object","properties":{"ok":{"type":"boolean"}},"additionalProperties":false}`, &aap.ToolPermissionMessage{ToolCallID: "c1", Granted: true}, `{"ok":true}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := types.Interrupt{ID: "i1", Reason: translate.InterruptReasonToolCall, ToolCallID: "c1"}
			if tt.schema != "" {
				in.ResponseSchema = schemaOf(t, tt.schema)
			}
			e, left, err := translate.ApprovalResume(tt.perm, in)
			require.NoError(t, err)
			assert.Equal(t, types.ResumeStatusResolved, e.Status)
			assert.Equal(t, "i1", e.InterruptID)
			b, _ := json.Marshal(e.Payload)
			assert.JSONEq(t, tt.want, string(b))
			assert.Equal(t, tt.left, left)
		})
	}

	for name, schema := range map[string]string{
		"no boolean":               `{"type":"object","properties":{"answer":{"type":"string"}}}`,
		"requires more":            `{"type":"object","properties":{"accepted":{"type":"boolean"},"steps":{"type":"array"}},"required":["accepted","steps"]}`,
		"not an object":            `{"type":"string"}`,
		"two booleans, none named": `{"type":"object","properties":{"a":{"type":"boolean"},"b":{"type":"boolean"}}}`,
	} {
		t.Run("cannot: "+name, func(t *testing.T) {
			_, _, err := translate.ApprovalResume(deny, types.Interrupt{ID: "i1", Reason: translate.InterruptReasonToolCall, ResponseSchema: schemaOf(t, schema)})
			var se *translate.SchemaError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, "i1", se.InterruptID)
		})
	}
}

// Through TurnToAGUI: the Agent Framework denial with a reason goes as
// {"accepted":false}, its reason reported unsent; an unanswerable schema
// is the turn's error, naming the interrupt.
func TestTurnToAGUIFollowsResponseSchema(t *testing.T) {
	open := []types.Interrupt{{ID: "c1", Reason: translate.InterruptReasonToolCall, ToolCallID: "c1",
		ResponseSchema: schemaOf(t, `{"type":"object","properties":{"accepted":{"type":"boolean"},"path":{"type":"string"}},"required":["accepted"],"additionalProperties":false}`)}}
	in, err := translate.TurnToAGUI([]aap.Message{&aap.ToolPermissionMessage{ToolCallID: "c1", Reason: "not now"}}, open, nil)
	require.NoError(t, err)
	b, _ := json.Marshal(in.Resume)
	assert.JSONEq(t, `[{"interruptId":"c1","status":"resolved","payload":{"accepted":false}}]`, string(b))
	assert.Equal(t, []translate.UnsentReason{{ToolCallID: "c1", InterruptID: "c1", Reason: "not now"}}, in.Unsent)

	open[0].ResponseSchema = schemaOf(t, `{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"]}`)
	_, err = translate.TurnToAGUI([]aap.Message{&aap.ToolPermissionMessage{ToolCallID: "c1", Granted: true}}, open, nil)
	assert.ErrorContains(t, err, `interrupt "c1": its responseSchema cannot be answered with a tool_permission`)
}

// CloseCalls puts a closing tool message after the results following the
// call's assistant message, for calls without a result only.
func TestCloseCalls(t *testing.T) {
	msgs := []types.Message{
		{ID: "u1", Role: types.RoleUser, Content: "hi"},
		{ID: "a1", Role: types.RoleAssistant, ToolCalls: []types.ToolCall{{ID: "c1", Type: "function"}, {ID: "c2", Type: "function"}, {ID: "c3", Type: "function"}}},
		{ID: "t3", Role: types.RoleTool, ToolCallID: "c3", Content: "done"},
		{ID: "u2", Role: types.RoleUser, Content: "next"},
	}
	out := translate.CloseCalls(msgs, []string{"c2", "c3"}, "closed")
	var ids []string
	for _, m := range out {
		ids = append(ids, m.ID)
	}
	assert.Equal(t, []string{"u1", "a1", "t3", "result-c2", "u2"}, ids)
	assert.Equal(t, "c2", out[3].ToolCallID)
	assert.Equal(t, "closed", out[3].Content)
	assert.Len(t, msgs, 4, "msgs unchanged")
}
