package translate

import (
	"encoding/json"
	"fmt"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/internal/ident"
)

// TurnInput is the AG-UI side of one AAP turn request: the messages to
// append to the thread and the resume entries for its open interrupts.
type TurnInput struct {
	Messages []types.Message     `json:"messages"`
	Resume   []types.ResumeEntry `json:"resume,omitempty"`
	// IDs holds, for each AAP message of the turn, the AG-UI id its
	// history entry goes under: the id its AG-UI message got, or for a
	// tool result that answers an interrupt (a resume entry, not a
	// message) ident.ToolResultMessage of its call; "" for a tool_permission,
	// which is no history message.
	IDs []string `json:"-"`
	// Unsent are the reasons of denials the interrupt's responseSchema had
	// no room for (ApprovalResume): the agent does not get them.
	Unsent []UnsentReason `json:"-"`
}

// UnsentReason is the reason of a tool_permission that its interrupt's
// responseSchema had no room for.
type UnsentReason struct {
	ToolCallID, InterruptID, Reason string
}

// InterruptFor finds the open interrupt a toolCallId answers: the one
// bound to that tool call (reason InterruptReasonToolCall), else (for
// InterruptToolName calls) the one whose id it is.
func InterruptFor(open []types.Interrupt, toolCallID string) (types.Interrupt, bool) {
	return openInterrupts{list: open}.forCall(toolCallID)
}

// TurnToAGUI translates the messages of an AAP turn request for the next
// AG-UI run. open are the interrupts the previous run finished with; nil
// means they are not known, and interrupt ids are then derived from
// toolCallIds with ident.Interrupt.
//
//   - A user message or a tool result becomes an AG-UI message (ids from
//     newID; nil means random).
//   - A tool_permission becomes a resume entry for the interrupt of its call,
//     resolved with the boolean the interrupt's responseSchema names and
//     the reason where it has room for it (ApprovalResume; without a
//     schema {"approved", "reason"}); one the schema cannot take is an
//     error (a *SchemaError in the MessageError's reason); a
//     denial of an interrupt that does not ask for an approval (see
//     AsksApproval) is a cancelled entry, with {"reason"} when given.
//   - A tool result answering an interrupt presented as a call of
//     InterruptToolName becomes that interrupt's resume entry, resolved,
//     with the result (parsed as JSON when it is JSON) as payload.
//
// A tool_permission for a call that has no open interrupt (when open is
// not nil) is an error.
func TurnToAGUI(msgs []aap.Message, open []types.Interrupt, newID func() string) (TurnInput, error) {
	newID = orRandom(newID, "msg-")
	in := TurnInput{Messages: []types.Message{}, IDs: make([]string, len(msgs))}
	waiting := indexInterrupts(open)
	for i, m := range msgs {
		switch m := m.(type) {
		case *aap.ToolPermissionMessage:
			id := ident.Interrupt(m.ToolCallID)
			if open != nil {
				it, ok := waiting.forCall(m.ToolCallID)
				if !ok {
					return TurnInput{}, &MessageError{Index: i, Reason: fmt.Sprintf("tool_permission for %q: no call is waiting for permission under that id", m.ToolCallID)}
				}
				if !m.Granted && !AsksApproval(it) {
					// An interrupt that asks for something else than an
					// approval (input, a custom answer): a denial
					// abandons it, with its reason.
					e := types.ResumeEntry{InterruptID: it.ID, Status: types.ResumeStatusCancelled}
					if m.Reason != "" {
						e.Payload = map[string]any{"reason": m.Reason}
					}
					in.Resume = append(in.Resume, e)
					continue
				}
				e, left, err := ApprovalResume(m, it)
				if err != nil {
					return TurnInput{}, &MessageError{Index: i, Reason: err.Error(), Err: err}
				}
				if left != "" {
					in.Unsent = append(in.Unsent, UnsentReason{ToolCallID: m.ToolCallID, InterruptID: it.ID, Reason: left})
				}
				in.Resume = append(in.Resume, e)
				continue
			}
			in.Resume = append(in.Resume, ResumeFromPermission(m, id))
		default:
			if tm, ok := m.(*aap.ToolMessage); ok {
				if it, ok := waiting.forCall(tm.ToolCallID); ok && it.ID == tm.ToolCallID {
					in.Resume = append(in.Resume, types.ResumeEntry{
						InterruptID: it.ID, Status: types.ResumeStatusResolved, Payload: payloadFromContent(tm.Content),
					})
					in.IDs[i] = ident.ToolResultMessage(tm.ToolCallID)
					continue
				}
			}
			var err error
			in.IDs[i] = newID()
			if in.Messages, err = AppendMessageToAGUI(in.Messages, m, in.IDs[i]); err != nil {
				if me, ok := err.(*MessageError); ok {
					me.Index = i
				}
				return TurnInput{}, err
			}
		}
	}
	return in, nil
}

// AsksApproval reports whether an interrupt asks to approve or deny
// something, so that a tool_permission answers it as resolved with
// {"approved", "reason"} (ResumeFromPermission), a denial included: its
// reason is InterruptReasonToolCall (whatever its id: ident.Interrupt's, the
// toolCallId itself as CopilotKit's BuiltInAgent gives it, or any other),
// or its responseSchema has an "approved" property (Mastra's tool
// suspensions). A denied tool_permission for any other interrupt cancels
// it.
func AsksApproval(in types.Interrupt) bool {
	if in.Reason == InterruptReasonToolCall {
		return true
	}
	props, _ := in.ResponseSchema["properties"].(map[string]any)
	_, ok := props["approved"]
	return ok || asksApprovalBySchema(in.ResponseSchema)
}

func payloadFromContent(c aap.Content) any {
	s := ToolContentString(c)
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	return s
}

// TurnFromAGUI translates what is new in an AG-UI run (the messages not
// yet delivered, and the resume entries) into the messages of an AAP turn.
// open are the thread's open interrupts; an entry for an interrupt not
// among them is an error, unless open is nil, in which case interrupt ids
// are read with ident.ToolCallFromInterrupt.
//
// A tool message for a call that a resume entry answers is part of that
// answer (CopilotKit adds one after an interrupt) and is not sent again as a
// tool result.
func TurnFromAGUI(newMsgs []types.Message, resume []types.ResumeEntry, open []types.Interrupt) ([]aap.Message, error) {
	answered := make(map[string]bool, len(resume))
	perms := make([]aap.Message, 0, len(resume))
	waiting := indexInterrupts(open)
	for _, r := range resume {
		var toolCallID string
		if open != nil {
			in, found := waiting.withID(r.InterruptID)
			if toolCallID = in.ToolCallID; toolCallID == "" {
				toolCallID = in.ID
			}
			if !found {
				return nil, &ResumeError{InterruptID: r.InterruptID, Reason: "no such open interrupt"}
			}
		} else {
			var ok bool
			if toolCallID, ok = ident.ToolCallFromInterrupt(r.InterruptID); !ok {
				return nil, &ResumeError{InterruptID: r.InterruptID, Reason: "not an interrupt this bridge issued"}
			}
		}
		p, err := PermissionFromResume(r, toolCallID)
		if err != nil {
			return nil, err
		}
		answered[toolCallID] = true
		perms = append(perms, p)
	}
	keep := newMsgs
	if len(answered) > 0 {
		keep = make([]types.Message, 0, len(newMsgs))
		for _, m := range newMsgs {
			if m.Role == types.RoleTool && answered[m.ToolCallID] {
				continue
			}
			keep = append(keep, m)
		}
	}
	out, err := MessagesToAAP(keep)
	if err != nil {
		return nil, err
	}
	return append(out, perms...), nil
}

// EventsFromResponse turns a StreamNone response into the events of a
// StreamMessage turn, so that a caller can treat every upstream mode alike:
// turn_start; per assistant message its thinking, text and tool_use blocks
// as thinking, text and tool_call events; per tool message a tool_result;
// turn_stop.
func EventsFromResponse(r *aap.PostSessionTurnResponse) []aap.Event {
	out := []aap.Event{&aap.TurnStart{}}
	for _, m := range r.Messages {
		switch m := m.(type) {
		case *aap.AssistantMessage:
			if !m.Content.IsBlocks() {
				if m.Content.Text != "" {
					out = append(out, &aap.Text{Text: m.Content.Text})
				}
				continue
			}
			for _, b := range m.Content.Blocks {
				switch b := b.(type) {
				case *aap.ThinkingBlock:
					out = append(out, &aap.Thinking{Thinking: b.Thinking})
				case *aap.TextBlock:
					out = append(out, &aap.Text{Text: b.Text})
				case *aap.ToolUseBlock:
					out = append(out, &aap.ToolCall{ToolCallID: b.ToolCallID, Name: b.Name, Input: b.Input})
				case *aap.ImageBlock:
					out = append(out, &aap.Text{Text: "![image](" + b.URL + ")"})
				}
			}
		case *aap.ToolMessage:
			out = append(out, &aap.ToolResult{ToolCallID: m.ToolCallID, Content: m.Content})
		}
	}
	return append(out, &aap.TurnStop{StopReason: r.StopReason})
}
