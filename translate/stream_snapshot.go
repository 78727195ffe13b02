package translate

import (
	"errors"
	"slices"

	"github.com/aapagui/aapagui/aap"
)

// What a MESSAGES_SNAPSHOT says that the run did not stream. Some agents
// answer with a snapshot alone (the AG-UI server starter's backend tool
// rendering and tool-based generative UI), others stream part of the
// answer and snapshot the rest, and most that stream everything end with
// a snapshot of the whole thread (LangGraph, Microsoft Agent Framework,
// CopilotKit's BuiltInAgent): the messages of the snapshot that are new in
// the run are streamed, once, as the events the same messages streamed
// would have been.

// NewInSnapshot returns the entries of snap (a MESSAGES_SNAPSHOT's
// messages, as history entries) that are new in a run: those after the
// last entry that holds a message of sent (the history the run was sent),
// which neither sent nor run (the run's messages so far) hold. An entry
// holds a message of history when it has its AG-UI id, else, for an entry
// of history whose id the snapshot does not name, when it is the same
// message thinking aside (the matching of MergeSnapshot). A snapshot that
// holds nothing of what the run was sent (one that compacts the thread)
// has nothing new: it stands for the past. snap is not changed.
func NewInSnapshot(snap, sent, run []HistoryEntry) []HistoryEntry {
	if len(snap) == 0 || len(sent) == 0 {
		return nil
	}
	old := make([]HistoryEntry, 0, len(sent)+len(run))
	old = append(append(old, sent...), run...)
	m := matchSnapshot(snap, old)
	last := -1
	for j, i := range m.oldOf {
		if i >= 0 && i < len(sent) {
			last = j
		}
	}
	if last < 0 {
		return nil
	}
	known := make(map[string]bool, len(old))
	for _, e := range old {
		if e.AGUIID != "" {
			known[e.AGUIID] = true
		}
	}
	var out []HistoryEntry
	for j := last + 1; j < len(snap); j++ {
		if m.oldOf[j] < 0 && !known[snap[j].AGUIID] {
			out = append(out, snap[j])
		}
	}
	return out
}

// FeedSnapshot streams what a MESSAGES_SNAPSHOT holds that is new in the
// run (NewInSnapshot; Feed leaves the event to its caller): snap are its
// messages as history entries (MessagesToAAPWithIDs, each under the id the
// caller stores it under), sent the history the run was sent (after an
// earlier snapshot of the run, that snapshot). Each new assistant message
// is streamed as its blocks would have been (thinking, text, then its tool
// calls, in the mode's events; delta mode streams a text whole, as one
// delta) and is a history message of its own under its id; a new tool
// message is a tool_result. What the run streamed is not streamed again:
// a message whose id is open in the run, a call the run made or history
// holds, a result the run gave. Nor is the result of a call in denied
// (those the turn denied with a tool_permission): AAP sends no
// tool_result after a denial, and history keeps the agent's record of it.
// Whatever was still open is closed first, when there is something to
// stream. Errors are those of a result with no call before it
// (*DroppedResultError), joined; the rest is streamed.
func (t *AGUIToAAP) FeedSnapshot(snap, sent []HistoryEntry, denied []string) ([]aap.Event, error) {
	t.out = t.out[:0]
	if t.done {
		return t.out, ErrTerminated
	}
	t.begin()
	run := make([]HistoryEntry, 0, len(t.history)+1)
	ids := t.MessageIDs()
	for i, m := range t.Messages() {
		run = append(run, HistoryEntry{Message: m, AGUIID: ids[i]})
	}
	var errs []error
	closed := false
	for _, e := range NewInSnapshot(snap, sent, run) {
		if t.streaming(e.AGUIID) {
			continue
		}
		if !t.snapshotNews(e.Message, denied) {
			continue
		}
		if !closed {
			t.closeOpen()
			t.flushAssistant()
			closed = true
		}
		switch m := e.Message.(type) {
		case *aap.AssistantMessage:
			t.snapshotAssistant(m, e.AGUIID)
		case *aap.ToolMessage:
			if err := t.toolResult(m.ToolCallID, e.AGUIID, m.Content); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return t.out, errors.Join(errs...)
}

// snapshotNews reports whether m, a message new in a snapshot, has
// something to stream: an assistant message a thinking, a text or a call
// the run has not made; a tool message the result of a call the run gave
// none for, which denied does not hold. Other roles (a user or system
// message the agent added) have no AAP event: history holds them.
func (t *AGUIToAAP) snapshotNews(m aap.Message, denied []string) bool {
	switch m := m.(type) {
	case *aap.AssistantMessage:
		if !m.Content.IsBlocks() {
			return m.Content.Text != ""
		}
		for _, b := range m.Content.Blocks {
			switch b := b.(type) {
			case *aap.ThinkingBlock:
				if b.Thinking != "" {
					return true
				}
			case *aap.TextBlock:
				if b.Text != "" {
					return true
				}
			case *aap.ToolUseBlock:
				if !t.called[b.ToolCallID] && !t.inHistory(b.ToolCallID) {
					return true
				}
			}
		}
	case *aap.ToolMessage:
		return !t.resulted[m.ToolCallID] && !slices.Contains(denied, m.ToolCallID)
	}
	return false
}

// streaming reports whether id is a message the run is still streaming:
// an open text or reasoning message, or the assistant message being built.
func (t *AGUIToAAP) streaming(id string) bool {
	if id == "" {
		return false
	}
	return id == t.blocksID || t.texts.find(id) != nil || t.thoughts.find(id) != nil
}

// snapshotAssistant streams an assistant message of a snapshot and makes
// it a history message of its own, under id.
func (t *AGUIToAAP) snapshotAssistant(m *aap.AssistantMessage, id string) {
	if !m.Content.IsBlocks() {
		t.snapshotText(m.Content.Text)
	}
	for _, b := range m.Content.Blocks {
		switch b := b.(type) {
		case *aap.ThinkingBlock:
			if b.Thinking == "" {
				continue
			}
			switch t.mode {
			case aap.StreamDelta:
				t.out = append(t.out, slabDelta(&t.thinkingSlab, b.Thinking))
			case aap.StreamMessage:
				t.out = append(t.out, &aap.Thinking{Thinking: b.Thinking})
			}
			t.blocks = append(t.blocks, b)
		case *aap.TextBlock:
			t.snapshotText(b.Text)
		case *aap.ToolUseBlock:
			if t.called[b.ToolCallID] || t.inHistory(b.ToolCallID) {
				continue
			}
			t.emit(&aap.ToolCall{ToolCallID: b.ToolCallID, Name: b.Name, Input: b.Input})
			t.blocks = append(t.blocks, b)
			t.madeCall(b.ToolCallID, b.Name)
		}
	}
	if len(t.blocks) > 0 {
		t.blocksID = id
		t.flushAssistant()
	}
}

// snapshotText streams a text of a snapshot's assistant message (after
// another text, delta mode streams the blank line that joins them first)
// and adds it to the message being built.
func (t *AGUIToAAP) snapshotText(s string) {
	if s == "" {
		return
	}
	switch t.mode {
	case aap.StreamDelta:
		if t.joinsText() {
			t.out = append(t.out, &aap.TextDelta{Delta: textSeparator})
		}
		t.out = append(t.out, slabDelta(&t.textSlab, s))
	case aap.StreamMessage:
		t.out = append(t.out, &aap.Text{Text: s})
	}
	t.blocks = append(t.blocks, &aap.TextBlock{Text: s})
}
