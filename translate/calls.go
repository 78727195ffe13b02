package translate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"iter"
	"sort"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/aapagui/aapagui/aap"
)

// PriorCalls is what the translator of a run knows of the tool calls made
// before the run, so that the history it builds keeps AAP's rule that every
// tool result follows its tool_use, whatever the agent sends. Make it with
// PriorCallsOf.
type PriorCalls struct {
	// Open are the calls with a tool_use in history and no result yet.
	Open map[string]bool
	// Answered are the calls that have a result in history.
	Answered map[string]bool
	// Interrupted are the calls no tool_use shows that an interrupt named
	// (by toolCallId) together with the tool's name: a framework that
	// pauses a tool for approval may never stream the call itself (Mastra
	// does this), then send its result after the resume.
	Interrupted map[string]InterruptedCall
}

// InterruptedCall is what an interrupt says of the tool call it names.
type InterruptedCall struct {
	Name  string
	Input json.RawMessage
}

// PriorCallsOf reads the tool calls of an AAP history: tool_use blocks,
// tool messages, and the interrupts presented as calls of
// InterruptToolName (their input is the interrupt).
func PriorCallsOf(msgs []aap.Message) *PriorCalls {
	p := new(PriorCalls) // (maps made for what they hold: most conversations have no open call)
	var c Calls
	for _, m := range msgs {
		c.Read(m)
		if am, ok := m.(*aap.AssistantMessage); ok {
			for _, b := range am.Content.Blocks {
				if tu, ok := b.(*aap.ToolUseBlock); ok && tu.Name == InterruptToolName {
					if id, call, ok := CallFromInterrupt(tu.Input); ok {
						p.Interrupted = setKey(p.Interrupted, id, call)
					}
				}
			}
		}
	}
	for id := range c.madeAt {
		if c.Awaits(id) {
			p.Open = setKey(p.Open, id, true)
		}
	}
	for id := range c.answered {
		p.Answered = setKey(p.Answered, id, true)
	}
	for id := range p.Interrupted {
		if p.Open[id] || p.Answered[id] {
			delete(p.Interrupted, id) // the call itself was streamed
		}
	}
	return p
}

// CallFromInterrupt reads, from an AG-UI interrupt's JSON, the tool call it
// is bound to: its toolCallId, and the tool's name and arguments as the
// interrupt's metadata gives them, under any key, as an object holding
// "toolName" (or "tool_name") and "args", "arguments" or "input" (an
// object, or a string holding one); metadata.aap is read first. ok is false
// when the interrupt names no toolCallId or no tool name. The arguments
// keep their bytes; missing ones are {}.
func CallFromInterrupt(raw json.RawMessage) (toolCallID string, call InterruptedCall, ok bool) {
	var in types.Interrupt
	if json.Unmarshal(raw, &in) != nil || in.ToolCallID == "" {
		return "", InterruptedCall{}, false
	}
	var w struct {
		Metadata map[string]json.RawMessage `json:"metadata"`
	}
	if json.Unmarshal(raw, &w) != nil {
		return "", InterruptedCall{}, false
	}
	keys := make([]string, 0, len(w.Metadata))
	for k := range w.Metadata {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if (keys[i] == "aap") != (keys[j] == "aap") {
			return keys[i] == "aap"
		}
		return keys[i] < keys[j]
	})
	for _, k := range keys {
		var v struct {
			ToolName  string          `json:"toolName"`
			ToolName2 string          `json:"tool_name"`
			Args      json.RawMessage `json:"args"`
			Arguments json.RawMessage `json:"arguments"`
			Input     json.RawMessage `json:"input"`
		}
		if json.Unmarshal(w.Metadata[k], &v) != nil {
			continue
		}
		name := v.ToolName
		if name == "" {
			name = v.ToolName2
		}
		if name == "" {
			continue
		}
		input := json.RawMessage(`{}`)
		for _, a := range []json.RawMessage{v.Args, v.Arguments, v.Input} {
			if obj, ok := objectArgs(a); ok {
				input = obj
				break
			}
		}
		return in.ToolCallID, InterruptedCall{Name: name, Input: input}, true
	}
	return "", InterruptedCall{}, false
}

// objectArgs returns arguments given as a JSON object, or as a string
// holding one, compacted.
func objectArgs(raw json.RawMessage) (json.RawMessage, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, false
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, false
		}
		raw = bytes.TrimSpace([]byte(s))
	}
	if len(raw) == 0 || raw[0] != '{' {
		return nil, false
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return nil, false
	}
	return b.Bytes(), true
}

// DroppedResultError reports a TOOL_CALL_RESULT left out of the turn (its
// stream and its history) because no tool_use could go before it: a result
// for a call nothing showed or named, or a second result for a call.
type DroppedResultError struct {
	ToolCallID string
	Reason     string
}

// Error describes what was dropped and why.
func (e *DroppedResultError) Error() string {
	return fmt.Sprintf("TOOL_CALL_RESULT for %q left out: %s", e.ToolCallID, e.Reason)
}

// Calls reads the tool calls of an AAP history one message at a time: the
// calls made (and which message made each), the calls a tool message
// answered, and those still open since the last user message (a user
// message moves the conversation on). It is the one reading of a history's
// calls: OpenCalls, OrphanResults, the results a snapshot keeps, the
// dangling calls a fresh session closes, where a result belongs, and the
// bridges' checks of a seed all go through it. The zero value is an empty
// history.
type Calls struct {
	read     int
	madeAt   map[string]int // call id → index of the message that made it
	answered map[string]bool
	open     holed[aap.ToolUseBlock] // the calls open since the last user message, in the order made
	openAt   map[string][]int        // call id → indexes in open of its tool_use blocks
}

// Read adds m, the next message of the history. For a user message it
// returns the calls it leaves without a result (those open before it).
func (c *Calls) Read(m aap.Message) (left []*aap.ToolUseBlock) {
	switch m := m.(type) {
	case *aap.UserMessage:
		left = c.open.take()
		clear(c.openAt)
	case *aap.AssistantMessage:
		for _, b := range m.Content.Blocks {
			if tu, ok := b.(*aap.ToolUseBlock); ok {
				if c.madeAt == nil {
					c.madeAt, c.openAt = map[string]int{}, map[string][]int{}
				}
				c.madeAt[tu.ToolCallID] = c.read
				c.openAt[tu.ToolCallID] = append(c.openAt[tu.ToolCallID], c.open.push(tu))
			}
		}
	case *aap.ToolMessage:
		if c.answered == nil {
			c.answered = map[string]bool{}
		}
		c.answered[m.ToolCallID] = true
		c.closeCall(m.ToolCallID)
	}
	c.read++
	return left
}

// closeCall takes the open tool_use blocks of call id out of the open
// calls, in time that does not grow with the calls left open: a message
// making thousands of calls and their thousands of results cost what they
// hold, not its square.
func (c *Calls) closeCall(id string) {
	at, ok := c.openAt[id]
	if !ok {
		return
	}
	delete(c.openAt, id)
	for _, i := range at {
		c.open.drop(i)
	}
	if !c.open.tidy() {
		return
	}
	clear(c.openAt)
	for i, tu := range c.open.items() {
		c.openAt[tu.ToolCallID] = append(c.openAt[tu.ToolCallID], i)
	}
}

// MadeAt returns the index of the message that made call id (the last one,
// should two have made it), and whether any did.
func (c *Calls) MadeAt(id string) (int, bool) {
	i, ok := c.madeAt[id]
	return i, ok
}

// Awaits reports whether a result for call id would be in its place now:
// the call was made and has no result yet.
func (c *Calls) Awaits(id string) bool {
	_, made := c.madeAt[id]
	return made && !c.answered[id]
}

// Open returns the calls made since the last user message that have no
// result, in the order they were made; nil when there are none.
func (c *Calls) Open() []*aap.ToolUseBlock { return c.open.left() }

// OrphanResults returns the indexes of the tool messages of msgs that break
// the rule that every tool result follows its tool_use: a result for a call
// no earlier message made, or a second result for a call.
func OrphanResults(msgs []aap.Message) []int {
	var out []int
	var c Calls
	for i, m := range msgs {
		if tm, ok := m.(*aap.ToolMessage); ok && !c.Awaits(tm.ToolCallID) {
			out = append(out, i)
			continue
		}
		c.Read(m)
	}
	return out
}

// OpenCalls returns the tool calls of a history still waiting for their
// results: the tool_use blocks since its last user message that no tool
// message answers, in the order they were made (Calls.Open at the end).
func OpenCalls(msgs iter.Seq[aap.Message]) []*aap.ToolUseBlock {
	var c Calls
	for m := range msgs {
		c.Read(m)
	}
	return c.Open()
}

// ResultPlaces says where each of results (tool messages) belongs in a
// history of n messages: after[k] is the index of the message results[k]
// goes right after, which is the assistant message that made its call or
// the last of the tool messages that directly follow it; n-1 (the end)
// for a result whose call the history does not hold.
func ResultPlaces(hist iter.Seq[aap.Message], results []aap.Message) (after []int, n int) {
	var c Calls
	runEnd := map[int]int{} // index of an assistant message → last index of the tool messages right after it
	run := -1
	for m := range hist {
		switch m.(type) {
		case *aap.AssistantMessage:
			run = n
			runEnd[n] = n
		case *aap.ToolMessage:
			if run >= 0 {
				runEnd[run] = n
			}
		default:
			run = -1
		}
		c.Read(m)
		n++
	}
	after = make([]int, len(results))
	for k, r := range results {
		after[k] = n - 1
		if i, ok := c.MadeAt(AnsweredCall(r)); ok {
			after[k] = runEnd[i]
		}
	}
	return after, n
}

// setKey sets m[k] to v, making m first when it is nil.
func setKey[V any](m map[string]V, k string, v V) map[string]V {
	if m == nil {
		m = make(map[string]V)
	}
	m[k] = v
	return m
}
