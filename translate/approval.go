package translate

import (
	"fmt"
	"slices"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/aapagui/aapagui/aap"
)

// How a tool_permission answers an interrupt that asks for an approval:
// the payload follows the interrupt's responseSchema when it declares
// one. Frameworks name the boolean differently (pydantic-ai, LangGraph,
// Mastra and this bridge "approved"; Microsoft Agent Framework
// "accepted"; Google ADK's ToolConfirmation "confirmed"), and some refuse
// a property the schema does not declare (Agent Framework reads every
// property but its boolean as an edited tool argument and answers
// APPROVAL_RESUME_INVALID for one the call does not have).

// approvalNames are the names of the boolean of an approval, in the order
// they are looked for among a schema's properties.
var approvalNames = []string{"approved", "accepted", "confirmed", "approve", "accept", "confirm", "granted", "allowed", "allow"}

// ApprovalShape is how an interrupt's responseSchema takes an approval:
// the name of its boolean, and whether it has room for a reason.
type ApprovalShape struct {
	Decision string // the boolean's property
	Reason   bool   // a "reason" string fits
}

// SchemaError is an interrupt whose responseSchema no tool_permission can
// satisfy: the bridge names it rather than send an answer the agent
// refuses.
type SchemaError struct {
	InterruptID string
	Reason      string
}

func (e *SchemaError) Error() string {
	return fmt.Sprintf("interrupt %q: its responseSchema cannot be answered with a tool_permission: %s", e.InterruptID, e.Reason)
}

// ApprovalShapeOf reads how an interrupt takes an approval. Without a
// schema, or one that declares no properties, it is {"approved",
// "reason"}. Otherwise the boolean is the first of approvalNames among the
// properties of type boolean, else the schema's only boolean property; the
// reason fits when the schema declares a string "reason" or leaves other
// properties open (additionalProperties not false). A schema with no
// boolean, or one that requires a property other than the boolean and the
// reason, is a *SchemaError.
func ApprovalShapeOf(in types.Interrupt) (ApprovalShape, error) {
	props, _ := in.ResponseSchema["properties"].(map[string]any)
	if len(props) == 0 {
		if t, ok := in.ResponseSchema["type"].(string); ok && t != "object" {
			return ApprovalShape{}, &SchemaError{InterruptID: in.ID, Reason: fmt.Sprintf("it asks for a %s, not an object", t)}
		}
		return ApprovalShape{Decision: "approved", Reason: true}, nil
	}
	isType := func(name, typ string) bool {
		p, _ := props[name].(map[string]any)
		return p != nil && p["type"] == typ
	}
	var shape ApprovalShape
	for _, name := range approvalNames {
		if isType(name, "boolean") {
			shape.Decision = name
			break
		}
	}
	if shape.Decision == "" {
		var bools []string
		for name := range props {
			if isType(name, "boolean") {
				bools = append(bools, name)
			}
		}
		if len(bools) != 1 {
			return ApprovalShape{}, &SchemaError{InterruptID: in.ID, Reason: fmt.Sprintf("it has %d boolean properties, none of them named %v", len(bools), approvalNames)}
		}
		shape.Decision = bools[0]
	}
	closed := in.ResponseSchema["additionalProperties"] == false
	_, declared := props["reason"]
	shape.Reason = isType("reason", "string") || (!declared && !closed)
	required, _ := in.ResponseSchema["required"].([]any)
	for _, r := range required {
		if name, _ := r.(string); name != shape.Decision && !(name == "reason" && shape.Reason) {
			return ApprovalShape{}, &SchemaError{InterruptID: in.ID, Reason: fmt.Sprintf("it requires %q, which a tool_permission does not give", name)}
		}
	}
	return shape, nil
}

// ApprovalResume is the resume entry of a tool_permission for an
// interrupt that asks for an approval (AsksApproval): resolved, with the
// interrupt's boolean (ApprovalShapeOf) and the reason where the schema
// has room for it. left is the reason it had no room for ("" when it
// went): the caller keeps it (the result stored for a denied call says
// it) and logs it. A tool_permission never edits the call's arguments, so
// the answer holds none.
func ApprovalResume(p *aap.ToolPermissionMessage, in types.Interrupt) (e types.ResumeEntry, left string, err error) {
	shape, err := ApprovalShapeOf(in)
	if err != nil {
		return types.ResumeEntry{}, "", err
	}
	payload := map[string]any{shape.Decision: p.Granted}
	switch {
	case p.Reason == "":
	case shape.Reason:
		payload["reason"] = p.Reason
	default:
		left = p.Reason
	}
	return types.ResumeEntry{InterruptID: in.ID, Status: types.ResumeStatusResolved, Payload: payload}, left, nil
}

// asksApprovalBySchema reports a responseSchema whose properties hold one
// of approvalNames as a boolean.
func asksApprovalBySchema(schema map[string]any) bool {
	props, _ := schema["properties"].(map[string]any)
	return slices.ContainsFunc(approvalNames, func(name string) bool {
		p, _ := props[name].(map[string]any)
		return p != nil && p["type"] == "boolean"
	})
}
