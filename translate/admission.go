package translate

import (
	"fmt"
	"iter"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/internal/ident"
)

// UnansweredCall is the result stored for a tool call that a new user
// message leaves unanswered, so that the history handed to the agent stays
// valid (every call has a result).
const UnansweredCall = aap.ToolCallNotAnswered + ": the user sent a new message instead."

// pending describes what the session is waiting for before the next turn.
type pending struct {
	calls   map[string]string // toolCallId → tool name: calls without a result
	order   []string          // their ids, in order
	waiting openInterrupts    // open interrupts, found by call or id
	// own reports a tool whose calls are the agent's own (ToolOwners.Agents):
	// the application is not asked for their results or permissions.
	own func(name string) bool
}

// pendingIn finds what a session waits for: the calls its history leaves
// open, and its open interrupts.
func pendingIn(hist iter.Seq[aap.Message], open []types.Interrupt, own func(name string) bool) pending {
	p := pending{calls: map[string]string{}, waiting: indexInterrupts(open), own: own}
	for _, tu := range OpenCalls(hist) {
		p.calls[tu.ToolCallID] = tu.Name
		p.order = append(p.order, tu.ToolCallID)
	}
	return p
}

// presented reports whether the open interrupt in, found for the tool
// call id, was presented to the application as a call of
// InterruptToolName under that id, the one way a tool message answers an
// interrupt (its content is the resume payload). An interrupt bound to a
// tool call the application saw as itself (a server tool waiting for
// permission) is answered by a tool_permission only, even when its id is
// its toolCallId (CopilotKit's BuiltInAgent names it so): a result would
// otherwise resolve it with any payload, as if granted with edited
// arguments.
func (p pending) presented(in types.Interrupt, id string) bool {
	return in.ID == id && p.calls[id] == InterruptToolName
}

// CheckTurn admits the messages of an AAP turn against what its session
// waits for (the calls its history leaves open, OpenCalls, and its open
// interrupts). A turn that begins with a user message moves on: it returns
// resume entries cancelling the open interrupts, and the results that
// close as not answered the open calls no interrupt speaks for, to store
// before the turn's messages. A call bound to a tool_call interrupt
// (BoundCall) gets no closing result: its cancelled resume entry is its
// answer, and the agent writes its result (the closing rule; a bridge
// records UnansweredCall after the run for a bound call the agent wrote
// no result for, see MovedOnCalls).
// Any other turn must answer every open call and interrupt, each as it
// waits (a result, or a tool_permission); a call of a tool own reports
// (the agent's own business, ToolOwners.Agents; nil: none) may stay open,
// and takes no tool_permission. An error names what breaks the rule.
func CheckTurn(hist iter.Seq[aap.Message], open []types.Interrupt, msgs []aap.Message, own func(name string) bool) (closing []aap.Message, cancelled []types.ResumeEntry, err error) {
	p := pendingIn(hist, open, own)
	if u, ok := msgs[0].(*aap.UserMessage); ok && u != nil {
		// A new user message closes whatever is still open.
		for _, id := range p.order {
			if p.waiting.boundCall(id) {
				continue
			}
			closing = append(closing, &aap.ToolMessage{ToolCallID: id, Content: aap.TextContent(UnansweredCall)})
		}
		for _, in := range p.waiting.list {
			cancelled = append(cancelled, types.ResumeEntry{InterruptID: in.ID, Status: types.ResumeStatusCancelled})
		}
		return closing, cancelled, nil
	}
	answered := map[string]bool{}
	for i, m := range msgs {
		switch m := m.(type) {
		case *aap.ToolMessage:
			in, waiting := p.waiting.forCall(m.ToolCallID)
			switch {
			case waiting && !p.presented(in, m.ToolCallID):
				return nil, nil, fmt.Errorf("messages[%d]: tool call %q is waiting for a tool_permission, not a result", i, m.ToolCallID)
			case !waiting && p.calls[m.ToolCallID] == "":
				return nil, nil, fmt.Errorf("messages[%d]: no tool call %q is waiting for a result", i, m.ToolCallID)
			}
		case *aap.ToolPermissionMessage:
			if _, waiting := p.waiting.forCall(m.ToolCallID); !waiting {
				if name := p.calls[m.ToolCallID]; name != "" && p.own != nil && p.own(name) {
					return nil, nil, fmt.Errorf("messages[%d]: tool call %q is the agent's own (%s is neither a client tool nor a server tool it declares): it takes no tool_permission", i, m.ToolCallID, name)
				}
				return nil, nil, fmt.Errorf("messages[%d]: tool call %q is not waiting for permission", i, m.ToolCallID)
			}
		}
		answered[AnsweredCall(m)] = true
	}
	for _, id := range p.order {
		if !answered[id] {
			if _, waiting := p.waiting.forCall(id); waiting {
				return nil, nil, fmt.Errorf("tool call %q is waiting for a tool_permission: answer every pending call in the same turn", id)
			}
			if p.own != nil && p.own(p.calls[id]) {
				continue // the agent finishes it (an interrupt raised inside the tool, once answered)
			}
			return nil, nil, fmt.Errorf("tool call %q is waiting for its result: answer every pending call in the same turn", id)
		}
	}
	for _, in := range p.waiting.list {
		if !answered[in.ToolCallID] && !answered[in.ID] {
			return nil, nil, fmt.Errorf("interrupt %q is open: answer it (tool_permission for tool call %q) in the same turn", in.ID, in.ToolCallID)
		}
	}
	return nil, nil, nil
}

// AnsweredCall is the tool call a tool result or tool_permission answers
// ("" for another message).
func AnsweredCall(m aap.Message) string {
	switch m := m.(type) {
	case *aap.ToolMessage:
		return m.ToolCallID
	case *aap.ToolPermissionMessage:
		return m.ToolCallID
	}
	return ""
}

// BoundCall reports whether an open interrupt is bound to the tool call
// toolCallID: its reason is tool_call and its toolCallId names the call
// (AG-UI's tool-bound interrupt). The agent holds such a call; the resume
// entry of its interrupt answers it, and the agent, not the client,
// writes its result when it resumes (pydantic-ai, Microsoft Agent
// Framework, CopilotKit's BuiltInAgent). A closing tool message in the
// history beside a resume entry would answer the call twice, which
// pydantic-ai refuses ("already executed").
func BoundCall(open []types.Interrupt, toolCallID string) bool {
	return openInterrupts{list: open}.boundCall(toolCallID)
}

// MovedOnCalls are the open calls of hist that a turn moving on (one that
// begins with a user message) leaves to their interrupts' cancelled resume
// entries (BoundCall), in order: CheckTurn gives them no closing result.
func MovedOnCalls(hist iter.Seq[aap.Message], open []types.Interrupt) []string {
	var ids []string
	waiting := indexInterrupts(open)
	for _, tu := range OpenCalls(hist) {
		if waiting.boundCall(tu.ToolCallID) {
			ids = append(ids, tu.ToolCallID)
		}
	}
	return ids
}

// CloseCalls returns msgs (an AG-UI conversation) with a tool message
// saying text for each of calls placed right after the tool messages that
// follow the assistant message holding it, under the id
// ident.ToolResultMessage gives the call; a call no message holds, one
// with a result already, or an empty id gets none, and a call gets one
// however many messages hold its id. It is the other closing of a call the
// user moved on from: in the history, for a run that carries no resume
// entry for it.
func CloseCalls(msgs []types.Message, calls []string, text string) []types.Message {
	if len(calls) == 0 {
		return msgs
	}
	want := map[string]bool{}
	for _, id := range calls {
		want[id] = id != ""
	}
	for _, m := range msgs {
		if m.Role == types.RoleTool {
			delete(want, m.ToolCallID)
		}
	}
	out := make([]types.Message, 0, len(msgs)+len(want))
	var pending []string // calls of the last assistant message, still to close
	flush := func() {
		for _, id := range pending {
			out = append(out, types.Message{ID: ident.ToolResultMessage(id), Role: types.RoleTool, ToolCallID: id, Content: text})
		}
		pending = nil
	}
	for _, m := range msgs {
		if m.Role != types.RoleTool {
			flush()
		}
		out = append(out, m)
		if m.Role == types.RoleAssistant {
			for _, c := range m.ToolCalls {
				if want[c.ID] {
					pending = append(pending, c.ID)
					want[c.ID] = false // once, should two calls share an id
				}
			}
		}
	}
	flush()
	return out
}
