package translate

import (
	"encoding/json"
	"fmt"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/internal/ident"
)

// InterruptReasonToolCall is the AG-UI interrupt reason for a tool call
// waiting for permission.
const InterruptReasonToolCall = "tool_call"

// InterruptToolName is the reserved tool name under which an AG-UI
// interrupt that is not bound to a tool call of the run (reason
// "input_required", "confirmation", a custom reason, or a tool call the AAP
// side never saw) is presented to an AAP application: a tool_call whose
// toolCallId is the interrupt id and whose input is the interrupt. The
// application answers it with a tool message whose content is the resume
// payload (JSON), or a tool_permission (granted → resolved with
// {"approved":true}; denied → resolved with {"approved":false,"reason"}
// when the interrupt asks for an approval (AsksApproval), else cancelled).
const InterruptToolName = "agui_interrupt"

// permissionSchema is the responseSchema of a permission interrupt.
var permissionSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"approved": map[string]any{"type": "boolean", "description": "Whether the tool call may run."},
		"reason":   map[string]any{"type": "string", "description": "Why, told to the agent (mostly when denied)."},
	},
	"required": []any{"approved"},
}

// PermissionInterrupt is the AG-UI interrupt asking permission for an
// untrusted server-side tool call.
func PermissionInterrupt(call *aap.ToolCall) types.Interrupt {
	args, err := ArgumentsFromInput(call.Input)
	if err != nil {
		args = string(call.Input)
	}
	msg := "Allow the agent to run " + call.Name
	if args != "{}" {
		msg += " with " + truncate(args, 200)
	}
	return types.Interrupt{
		ID:             ident.Interrupt(call.ToolCallID),
		Reason:         InterruptReasonToolCall,
		Message:        msg + "?",
		ToolCallID:     call.ToolCallID,
		ResponseSchema: permissionSchema,
		Metadata:       map[string]any{"aap": map[string]any{"toolName": call.Name}},
	}
}

// ResumeFromPermission is the AG-UI resume entry for an AAP tool
// permission answering the interrupt with the given id: resolved, with
// payload {"approved": granted, "reason": reason}.
func ResumeFromPermission(p *aap.ToolPermissionMessage, interruptID string) types.ResumeEntry {
	payload := map[string]any{"approved": p.Granted}
	if p.Reason != "" {
		payload["reason"] = p.Reason
	}
	return types.ResumeEntry{InterruptID: interruptID, Status: types.ResumeStatusResolved, Payload: payload}
}

// ResumeError reports a resume entry that cannot be read as a permission.
type ResumeError struct {
	InterruptID string
	Reason      string
}

// Error describes the failure.
func (e *ResumeError) Error() string {
	return fmt.Sprintf("resume for interrupt %q: %s", e.InterruptID, e.Reason)
}

// PermissionFromResume reads an AG-UI resume entry for a tool-call
// interrupt as an AAP tool permission. "cancelled" is a denial (reason
// "cancelled" unless the payload gives one); "resolved" needs a payload
// with a boolean "approved" and an optional string "reason".
func PermissionFromResume(entry types.ResumeEntry, toolCallID string) (*aap.ToolPermissionMessage, error) {
	fail := func(format string, args ...any) error {
		return &ResumeError{InterruptID: entry.InterruptID, Reason: fmt.Sprintf(format, args...)}
	}
	p, err := payloadObject(entry.Payload)
	if err != nil {
		return nil, fail("%v", err)
	}
	reason, _ := p["reason"].(string)
	if r, present := p["reason"]; present && r != nil {
		if _, ok := r.(string); !ok {
			return nil, fail("payload.reason must be a string")
		}
	}
	switch entry.Status {
	case types.ResumeStatusCancelled:
		if reason == "" {
			reason = "cancelled"
		}
		return &aap.ToolPermissionMessage{ToolCallID: toolCallID, Granted: false, Reason: reason}, nil
	case types.ResumeStatusResolved:
		approved, ok := p["approved"].(bool)
		if !ok {
			return nil, fail("payload.approved must be a boolean")
		}
		return &aap.ToolPermissionMessage{ToolCallID: toolCallID, Granted: approved, Reason: reason}, nil
	}
	return nil, fail("unknown status %q (want resolved or cancelled)", entry.Status)
}

// payloadObject reads a resume payload as a JSON object; absent is empty.
func payloadObject(v any) (map[string]any, error) {
	switch v := v.(type) {
	case nil:
		return map[string]any{}, nil
	case map[string]any:
		return v, nil
	case json.RawMessage:
		var m map[string]any
		if err := json.Unmarshal(v, &m); err != nil || m == nil {
			return nil, fmt.Errorf("payload must be a JSON object")
		}
		return m, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("payload: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		return nil, fmt.Errorf("payload must be a JSON object")
	}
	return m, nil
}

// StopResult is the RUN_FINISHED result that carries an AAP stop reason
// AG-UI has no outcome for (max_tokens, refusal).
type StopResult struct {
	StopReason aap.StopReason `json:"stopReason"`
}

// StopReasonFromResult reads a stop reason from a RUN_FINISHED result, as
// written by the AAP→AG-UI translator (or any agent that follows the same
// convention): an object with a string "stopReason" naming a valid AAP stop
// reason.
func StopReasonFromResult(result any) (aap.StopReason, bool) {
	var r aap.StopReason
	switch v := result.(type) {
	case nil:
		return "", false
	case StopResult:
		r = v.StopReason
	case *StopResult:
		r = v.StopReason
	case map[string]any:
		s, _ := v["stopReason"].(string)
		r = aap.StopReason(s)
	default:
		return "", false
	}
	return r, r.Valid()
}

// interruptInput is the tool input presented for an interrupt that is not
// bound to a tool call (see InterruptToolName).
func interruptInput(in types.Interrupt) json.RawMessage {
	b, err := json.Marshal(in)
	if err != nil {
		return json.RawMessage(`{}`)
	}
	return b
}
