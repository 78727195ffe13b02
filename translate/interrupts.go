package translate

import "github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

// openInterrupts are a session's or a thread's open interrupts, found by
// the toolCallId or the interrupt id that names one in time that does not
// grow with how many are open: a turn answering thousands of interrupts
// costs what its answers hold, not their square. Past a few interrupts it
// keeps two indexes, made once; the answers are InterruptFor's, BoundCall's
// and the interrupt of an id.
type openInterrupts struct {
	list  []types.Interrupt
	bound map[string]int // toolCallId → the first interrupt bound to that call (reason tool_call)
	byID  map[string]int // interrupt id → the first interrupt of that id
}

// indexAfter is how many open interrupts are walked before they are
// indexed.
const indexAfter = 8

func indexInterrupts(open []types.Interrupt) openInterrupts {
	o := openInterrupts{list: open}
	if len(open) <= indexAfter {
		return o
	}
	o.bound, o.byID = make(map[string]int, len(open)), make(map[string]int, len(open))
	for i, in := range open {
		if in.Reason == InterruptReasonToolCall {
			if _, ok := o.bound[in.ToolCallID]; !ok {
				o.bound[in.ToolCallID] = i
			}
		}
		if _, ok := o.byID[in.ID]; !ok {
			o.byID[in.ID] = i
		}
	}
	return o
}

// boundTo is the first open interrupt bound to the tool call toolCallID.
func (o openInterrupts) boundTo(toolCallID string) (types.Interrupt, bool) {
	if o.bound != nil {
		i, ok := o.bound[toolCallID]
		if !ok {
			return types.Interrupt{}, false
		}
		return o.list[i], true
	}
	for _, in := range o.list {
		if in.ToolCallID == toolCallID && in.Reason == InterruptReasonToolCall {
			return in, true
		}
	}
	return types.Interrupt{}, false
}

// withID is the first open interrupt whose id is id.
func (o openInterrupts) withID(id string) (types.Interrupt, bool) {
	if o.byID != nil {
		i, ok := o.byID[id]
		if !ok {
			return types.Interrupt{}, false
		}
		return o.list[i], true
	}
	for _, in := range o.list {
		if in.ID == id {
			return in, true
		}
	}
	return types.Interrupt{}, false
}

// forCall is InterruptFor: the interrupt bound to the call, else the one
// whose id the toolCallId is.
func (o openInterrupts) forCall(toolCallID string) (types.Interrupt, bool) {
	if in, ok := o.boundTo(toolCallID); ok {
		return in, true
	}
	return o.withID(toolCallID)
}

// boundCall is BoundCall.
func (o openInterrupts) boundCall(toolCallID string) bool {
	_, ok := o.boundTo(toolCallID)
	return ok && toolCallID != ""
}
