package translate

import (
	"encoding/json"
	"strings"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/internal/ident"
)

// SubagentToolName is the reserved tool under which AGUIToAAP presents a
// subagent invocation (SUBAGENT_STARTED … SUBAGENT_FINISHED or
// SUBAGENT_ERROR) to an AAP client: an unexposed server-side tool call
// whose id is the subagentRunId, whose input names the subagent, and whose
// result is what the subagent said (or its error). See docs/MAPPING.md.
const SubagentToolName = "agui_subagent"

// agui10 is the translator's state for the shapes of @ag-ui/core 1.0.
type agui10 struct {
	usage     []agui.TokenUsage
	cancelled bool
	// foreign are the text messages of a role other than assistant (user,
	// developer, system): never the assistant's text.
	foreign   map[string]bool
	subagents map[string]*subagent
	subOrder  []string
}

type subagent struct {
	text   []byte
	inText bool // a text message of the subagent is open
	open   bool
}

// Usage is the token usage the run reported on RUN_FINISHED or RUN_ERROR
// (fed with FeedJSON); nil when it reported none.
func (t *AGUIToAAP) Usage() []agui.TokenUsage { return t.usage }

// Cancelled reports whether the run finished with the cancelled outcome.
func (t *AGUIToAAP) Cancelled() bool { return t.cancelled }

// endsChunks reports whether ev closes the calls and messages opened by
// TOOL_CALL_CHUNK, TEXT_MESSAGE_CHUNK and REASONING_MESSAGE_CHUNK: events
// of the conversation do; those beside it (activity, encrypted reasoning,
// state, custom, raw, subagent announcements, unknown types) leave
// them open, so that a call's chunks around them make one whole call.
func endsChunks(ev events.Event) bool {
	switch ev.(type) {
	case *events.ActivitySnapshotEvent, *events.ActivityDeltaEvent, *events.ReasoningEncryptedValueEvent,
		*events.StateSnapshotEvent, *events.StateDeltaEvent, *events.CustomEvent, *events.RawEvent,
		*agui.UnknownEvent,
		*agui.SubagentStartedEvent, *agui.SubagentFinishedEvent, *agui.SubagentErrorEvent:
		return false
	}
	switch ev.Type() {
	case events.EventTypeTextMessageChunk, events.EventTypeToolCallChunk, events.EventTypeReasoningMessageChunk:
		return false
	}
	return true
}

// foreignText reports whether a TEXT_MESSAGE_START or TEXT_MESSAGE_CHUNK
// of this role is not the assistant's (an absent role is the assistant).
func foreignRole(role *string) bool {
	return role != nil && *role != "" && *role != "assistant"
}

// isForeign reports whether id names a text message of another role; it
// forgets the message at its end.
func (t *AGUIToAAP) isForeign(id string, end bool) bool {
	if !t.foreign[id] {
		return false
	}
	if end {
		delete(t.foreign, id)
	}
	return true
}

func (t *AGUIToAAP) markForeign(id string) {
	if t.foreign == nil {
		t.foreign = make(map[string]bool)
	}
	t.foreign[id] = true
}

// joinsText reports whether a text message starting now follows another
// directly: the last block of the assistant message being built is a text
// block, or, with none yet, the run's last message is an assistant
// message that ends in text (one EndMessage ended; after a tool result,
// the last message is the result).
func (t *AGUIToAAP) joinsText() bool {
	if len(t.blocks) > 0 {
		_, ok := t.blocks[len(t.blocks)-1].(*aap.TextBlock)
		return ok
	}
	if len(t.history) == 0 {
		return false
	}
	am, ok := t.history[len(t.history)-1].(*aap.AssistantMessage)
	if !ok {
		return false
	}
	if am.Content.Blocks == nil {
		return true // string content: one text block
	}
	_, ok = am.Content.Blocks[len(am.Content.Blocks)-1].(*aap.TextBlock)
	return ok
}

// textSeparator is what delta mode streams between two text messages
// that follow each other: the blank line that joins text blocks.
const textSeparator = "\n\n"

// feedSubagent handles an event of a subagent (its subagentRunId is sa):
// the subagent's text is kept for its result, everything else it does is
// its own business and skipped. It reports whether the event was taken.
func (t *AGUIToAAP) feedSubagent(sa string, ev events.Event) bool {
	switch ev.(type) {
	case *agui.SubagentStartedEvent, *agui.SubagentFinishedEvent, *agui.SubagentErrorEvent,
		*events.RunStartedEvent, *events.RunFinishedEvent, *events.RunErrorEvent, *events.MessagesSnapshotEvent:
		return false // run-scoped, or the subagent's own lifecycle
	}
	s := t.subagentOpen(sa, "", nil)
	switch e := ev.(type) {
	case *events.TextMessageStartEvent:
		if foreignRole(e.Role) {
			break
		}
		if len(s.text) > 0 {
			s.text = append(s.text, textSeparator...)
		}
		s.inText = true
	case *events.TextMessageContentEvent:
		s.text = append(s.text, e.Delta...)
	case *events.TextMessageChunkEvent:
		if foreignRole(e.Role) || e.Delta == nil {
			break
		}
		if !s.inText && len(s.text) > 0 {
			s.text = append(s.text, textSeparator...)
		}
		s.inText = true
		s.text = append(s.text, *e.Delta...)
	case *events.TextMessageEndEvent:
		s.inText = false
	}
	return true
}

// subagentOpen returns the open subagent sa, opening it (its call goes
// out now) when it is new. start is its SUBAGENT_STARTED, if any.
func (t *AGUIToAAP) subagentOpen(sa, name string, start *agui.SubagentStartedEvent) *subagent {
	if s, ok := t.subagents[sa]; ok {
		return s
	}
	if t.subagents == nil {
		t.subagents = make(map[string]*subagent)
	}
	s := &subagent{open: true}
	t.subagents[sa] = s
	t.subOrder = append(t.subOrder, sa)
	input := map[string]string{"name": name}
	if start != nil {
		for k, v := range map[string]string{
			"description": start.Description, "parentToolCallId": start.ParentToolCallID,
			"parentSubagentRunId": start.ParentSubagentRunID,
		} {
			if v != "" {
				input[k] = v
			}
		}
	}
	if name == "" {
		delete(input, "name")
	}
	raw, _ := json.Marshal(input) // map keys come out sorted
	t.toolCall(CompletedCall{ToolCallID: sa, Name: SubagentToolName, Arguments: string(raw)})
	return s
}

// subagentEnd gives the subagent's call its result: what it said, else
// its result value, or its error.
func (t *AGUIToAAP) subagentEnd(sa string, result any, errText string) {
	s := t.subagentOpen(sa, "", nil)
	if !s.open {
		return
	}
	s.open = false
	text := string(s.text)
	if text == "" && result != nil {
		if str, ok := result.(string); ok {
			text = str
		} else if b, err := json.Marshal(result); err == nil {
			text = string(b)
		}
	}
	_ = t.toolResult(sa, ident.ToolResultMessage(sa), aap.TextContent(toolText(text, errText)))
}

// closeSubagents ends the subagents still open when the run ends.
func (t *AGUIToAAP) closeSubagents() {
	for _, sa := range t.subOrder {
		if s := t.subagents[sa]; s.open {
			t.subagentEnd(sa, nil, "the run ended before the subagent finished")
		}
	}
}

// feed10 handles the SUBAGENT_* events of @ag-ui/core 1.0, which the SDK
// lacks (its TOOL_CALL_RESULT with content parts goes with the other tool
// events, feedTool).
func (t *AGUIToAAP) feed10(ev events.Event) error {
	if subagentID(ev) == "" {
		return &StreamError{Event: string(ev.Type()), Reason: "a subagent event without subagentRunId cannot be matched to a subagent; skipped"}
	}
	switch e := ev.(type) {
	case *agui.SubagentStartedEvent:
		t.subagentOpen(e.SubagentRunID, e.Name, e)
	case *agui.SubagentFinishedEvent:
		t.subagentEnd(e.SubagentRunID, e.Result, "")
	case *agui.SubagentErrorEvent:
		msg := e.Message
		if e.Code != nil && *e.Code != "" {
			msg = strings.TrimSpace(msg + " (" + *e.Code + ")")
		}
		if msg == "" {
			msg = "the subagent failed"
		}
		t.subagentEnd(e.SubagentRunID, nil, msg)
	}
	return nil
}

// subagentID is the subagentRunId of a SUBAGENT_* event; "" for any other
// event.
func subagentID(ev events.Event) string {
	switch e := ev.(type) {
	case *agui.SubagentStartedEvent:
		return e.SubagentRunID
	case *agui.SubagentFinishedEvent:
		return e.SubagentRunID
	case *agui.SubagentErrorEvent:
		return e.SubagentRunID
	}
	return ""
}
