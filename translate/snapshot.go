package translate

import (
	"encoding/json"
	"slices"

	"github.com/aapagui/aapagui/aap"
)

// HistoryEntry is one message of a conversation's history as a bridge
// keeps it: the AAP message, the AG-UI id it goes under, and what AAP has
// no field for (its EncryptedValues, as JSON; nil when none). Its fields
// are those of store.Entry, which converts to it.
type HistoryEntry struct {
	Message aap.Message
	AGUIID  string
	AGUI    json.RawMessage
}

// SnapshotBase is what a MESSAGES_SNAPSHOT replaces.
type SnapshotBase struct {
	// History is the history before the snapshot, ending with the run's
	// messages so far (those not stored yet too, with their values).
	History []HistoryEntry
	// Own are the AG-UI ids of the turn's own entries: the messages the
	// application sent in this turn, and the results the bridge closed
	// for them. Nil: none.
	Own map[string]bool
	// Run are the AG-UI ids of the run's messages. Nil: none.
	Run map[string]bool
}

// MergeSnapshot returns snap (the history a MESSAGES_SNAPSHOT makes) with
// what base.History holds that the snapshot left out (docs/MAPPING.md, "a
// snapshot never drops what only aap2agui or the application put there").
// snap itself is not changed.
//
// Each message of the snapshot that history holds (matched by AG-UI id,
// else as the same message under an id of its own, thinking aside) keeps
// what the snapshot left out of it, whatever run stored it: the thinking
// blocks, when it has none (an agent may snapshot no reasoning), the
// encrypted values it has none of, and, for a user message, the message
// as the user sent it.
//
// Entries the snapshot does not hold are kept when only the bridge or the
// application could have put them there: the calls of the reserved
// interrupt tool (InterruptToolName) and their answers, and the turn's own
// entries (base.Own). Each goes right after the entry it followed that the
// snapshot holds (after its own message when an interrupt call was part of
// a message the snapshot holds: the call then moves to an entry of its own,
// "<id>-interrupts"); one that followed nothing the snapshot holds (a
// snapshot that compacts the thread) right before the first message of the
// run the snapshot holds, else at its end. A kept tool message stays only
// where a call before it shows its call and nothing answers it yet, so
// that history stays valid. Everything else the snapshot dropped is
// dropped, with what belongs to it.
func MergeSnapshot(snap []HistoryEntry, base SnapshotBase) []HistoryEntry {
	m := matchSnapshot(snap, base.History)
	out, copied := snap, false
	for j := range snap {
		if i := m.oldOf[j]; i >= 0 {
			if e, changed := restored(snap[j], base.History[i]); changed {
				if !copied {
					out, copied = slices.Clone(snap), true
				}
				out[j] = e
			}
		}
	}
	return keepOwn(out, base, m)
}

// snapshotMatch pairs the snapshot's entries with the history's.
type snapshotMatch struct {
	oldOf  []int // snapshot entry → its history entry, -1 when none
	snapOf []int // history entry → its snapshot entry, -1 when none
}

// matchSnapshot pairs each entry of snap with the entry of old of the same
// AG-UI id; the rest, in order, with the entries of old left whose message
// is the same, thinking aside (sameForm).
func matchSnapshot(snap, old []HistoryEntry) snapshotMatch {
	m := snapshotMatch{oldOf: make([]int, len(snap)), snapOf: make([]int, len(old))}
	byID := make(map[string]int, len(snap))
	for j, e := range snap {
		m.oldOf[j] = -1
		if _, dup := byID[e.AGUIID]; !dup {
			byID[e.AGUIID] = j
		}
	}
	var rest []int // history entries no snapshot id names
	for i, e := range old {
		m.snapOf[i] = -1
		if j, ok := byID[e.AGUIID]; ok && m.oldOf[j] < 0 {
			m.oldOf[j], m.snapOf[i] = i, j
		} else if !ok {
			rest = append(rest, i)
		}
	}
	if len(rest) == 0 {
		return m
	}
	forms := map[string][]int{} // the same form → history entries, in order
	for _, i := range rest {
		if f, ok := sameForm(old[i].Message); ok {
			forms[f] = append(forms[f], i)
		}
	}
	for j, e := range snap {
		if m.oldOf[j] >= 0 || len(forms) == 0 {
			continue
		}
		f, ok := sameForm(e.Message)
		if !ok || len(forms[f]) == 0 {
			continue
		}
		i := forms[f][0]
		forms[f] = forms[f][1:]
		m.oldOf[j], m.snapOf[i] = i, j
	}
	return m
}

// sameForm is m as JSON with its thinking blocks left out (an assistant
// message then left with one text block is that text): two messages of the
// same form are the same message, whether the agent's snapshot holds its
// reasoning or not.
func sameForm(m aap.Message) (string, bool) {
	if am, ok := m.(*aap.AssistantMessage); ok && am.Content.IsBlocks() {
		m = withoutThinking(am)
	}
	b, err := json.Marshal(m)
	return string(b), err == nil
}

func withoutThinking(am *aap.AssistantMessage) *aap.AssistantMessage {
	blocks := make([]aap.ContentBlock, 0, len(am.Content.Blocks))
	for _, b := range am.Content.Blocks {
		if _, ok := b.(*aap.ThinkingBlock); !ok {
			blocks = append(blocks, b)
		}
	}
	if len(blocks) == len(am.Content.Blocks) {
		return am
	}
	if len(blocks) == 1 {
		if tb, ok := blocks[0].(*aap.TextBlock); ok {
			return &aap.AssistantMessage{Content: aap.TextContent(tb.Text)}
		}
	}
	return &aap.AssistantMessage{Content: aap.BlockContent(blocks...)}
}

// restored is the snapshot's entry s with what the history's entry o of
// the same message holds and s left out; changed reports whether it
// differs from s.
func restored(s, o HistoryEntry) (e HistoryEntry, changed bool) {
	e = s
	switch sm := s.Message.(type) {
	case *aap.UserMessage:
		if om, ok := o.Message.(*aap.UserMessage); ok {
			e.Message = om // the user's words, as sent
		}
	case *aap.AssistantMessage:
		if om, ok := o.Message.(*aap.AssistantMessage); ok {
			e.Message = withThinkingOf(sm, om)
		}
	}
	e.AGUI = mergedValues(e.Message, o.Message, s.AGUI, o.AGUI)
	changed = e.Message != s.Message || string(e.AGUI) != string(s.AGUI)
	return e, changed
}

// withThinkingOf is s (a snapshot's assistant message) with the thinking
// blocks of o (the same message in history) when s has none: o itself when
// the two are the same message thinking aside, so that every block stays
// where it was; else o's thinking before s's content.
func withThinkingOf(s, o *aap.AssistantMessage) *aap.AssistantMessage {
	thinking := thinkingBlocks(o)
	if len(thinking) == 0 || len(thinkingBlocks(s)) > 0 {
		return s
	}
	fs, okS := sameForm(s)
	fo, okO := sameForm(o)
	if okS && okO && fs == fo {
		return o
	}
	blocks := slices.Clone(thinking)
	if s.Content.IsBlocks() {
		blocks = append(blocks, s.Content.Blocks...)
	} else if s.Content.Text != "" {
		blocks = append(blocks, &aap.TextBlock{Text: s.Content.Text})
	}
	return &aap.AssistantMessage{Content: aap.BlockContent(blocks...)}
}

func thinkingBlocks(am *aap.AssistantMessage) []aap.ContentBlock {
	var out []aap.ContentBlock
	for _, b := range am.Content.Blocks {
		if _, ok := b.(*aap.ThinkingBlock); ok {
			out = append(out, b)
		}
	}
	return out
}

// mergedValues are the encrypted values of m (the merged message): the
// snapshot's (snapRaw), with those of the history's entry (old, oldRaw) it
// has none of: the message's own value, the reasoning values when m's
// thinking is old's, and the values of m's tool calls.
func mergedValues(m, old aap.Message, snapRaw, oldRaw json.RawMessage) json.RawMessage {
	o := ParseEncryptedValues(oldRaw)
	if o == nil {
		return snapRaw
	}
	v := ParseEncryptedValues(snapRaw)
	if v == nil {
		v = &EncryptedValues{}
	}
	am, _ := m.(*aap.AssistantMessage)
	if v.Value == "" {
		v.Value = o.Value
	}
	if len(v.Metadata) == 0 {
		v.Metadata = o.Metadata
	}
	for id, meta := range o.ToolCallMetadata {
		if _, ok := v.ToolCallMetadata[id]; !ok && am != nil && hasToolUse(am, id) {
			v.ToolCallMetadata = setKey(v.ToolCallMetadata, id, meta)
		}
	}
	if om, ok := old.(*aap.AssistantMessage); ok && am != nil && len(v.Reasoning) == 0 && sameThinking(am, om) {
		v.Reasoning = o.Reasoning
	}
	if am != nil && len(o.ToolCalls) > 0 {
		for _, b := range am.Content.Blocks {
			tu, ok := b.(*aap.ToolUseBlock)
			if !ok {
				continue
			}
			if val, ok := o.ToolCalls[tu.ToolCallID]; ok && v.ToolCalls[tu.ToolCallID] == "" {
				if v.ToolCalls == nil {
					v.ToolCalls = map[string]string{}
				}
				v.ToolCalls[tu.ToolCallID] = val
			}
		}
	}
	return v.JSON()
}

// sameThinking reports whether a and b hold the same thinking blocks, in
// the same order.
func sameThinking(a, b *aap.AssistantMessage) bool {
	return slices.EqualFunc(thinkingBlocks(a), thinkingBlocks(b), func(x, y aap.ContentBlock) bool {
		return x.(*aap.ThinkingBlock).Thinking == y.(*aap.ThinkingBlock).Thinking
	})
}

// keepOwn returns snap with the entries of base.History it does not hold
// that only the bridge or the application could have put there (the
// interrupt calls and their answers, the turn's own entries), each where
// MergeSnapshot says.
func keepOwn(snap []HistoryEntry, base SnapshotBase, m snapshotMatch) []HistoryEntry {
	inSnap := make(map[string]bool, len(snap))
	snapResults := map[string]bool{}
	for _, e := range snap {
		inSnap[e.AGUIID] = true
		if tm, ok := e.Message.(*aap.ToolMessage); ok {
			snapResults[tm.ToolCallID] = true
		}
	}
	after := map[string][]HistoryEntry{} // anchor id ("" first) → kept entries
	kept := map[string]bool{}            // kept interrupt call ids
	anchor := ""
	found := false
	keep := func(e HistoryEntry) {
		after[anchor] = append(after[anchor], e)
		found = true
	}
	for i, e := range base.History {
		held := m.snapOf[i] >= 0
		if held {
			anchor = snap[m.snapOf[i]].AGUIID
		}
		switch msg := e.Message.(type) {
		case *aap.AssistantMessage:
			if calls := keptInterruptCalls(msg, kept); calls != nil {
				id := e.AGUIID
				if held {
					id = anchor + "-interrupts"
				}
				keep(HistoryEntry{Message: calls, AGUIID: id})
			}
		case *aap.ToolMessage:
			if !held && (kept[msg.ToolCallID] || base.Own[e.AGUIID]) && !snapResults[msg.ToolCallID] {
				keep(e)
			}
		default:
			if !held && base.Own[e.AGUIID] {
				keep(e)
			}
		}
	}
	if !found {
		return snap
	}
	out := make([]HistoryEntry, 0, len(snap)+len(kept)*2)
	for _, e := range snap {
		if base.Run[e.AGUIID] {
			out = append(out, after[""]...) // before the run's first
			delete(after, "")
		}
		out = append(out, e)
		out = append(out, after[e.AGUIID]...)
		delete(after, e.AGUIID) // an id twice in the snapshot: once
	}
	out = append(out, after[""]...)
	return withoutStrayResults(out, inSnap)
}

// InterruptCalls returns an assistant message holding the calls of the
// reserved interrupt tool (InterruptToolName) that m holds, or nil when it
// holds none: what a bridge stores as an entry of its own,
// "<id>-interrupts", after a message a snapshot holds (MergeSnapshot).
func InterruptCalls(m aap.Message) aap.Message {
	am, ok := m.(*aap.AssistantMessage)
	if !ok {
		return nil
	}
	return keptInterruptCalls(am, nil)
}

// keptInterruptCalls is InterruptCalls for the calls kept does not hold
// yet (they are added to it; nil kept: all).
func keptInterruptCalls(m *aap.AssistantMessage, kept map[string]bool) aap.Message {
	var calls []aap.ContentBlock
	for _, b := range m.Content.Blocks {
		if tu, ok := b.(*aap.ToolUseBlock); ok && tu.Name == InterruptToolName && !kept[tu.ToolCallID] {
			calls = append(calls, b)
			if kept != nil {
				kept[tu.ToolCallID] = true
			}
		}
	}
	if len(calls) == 0 {
		return nil
	}
	return &aap.AssistantMessage{Content: aap.BlockContent(calls...)}
}

// withoutStrayResults leaves out of out each kept result (a tool message
// the snapshot does not hold) whose call nothing before it shows, or that
// is answered already.
func withoutStrayResults(out []HistoryEntry, inSnap map[string]bool) []HistoryEntry {
	var c Calls
	valid := out[:0]
	for _, e := range out {
		if tm, ok := e.Message.(*aap.ToolMessage); ok && !inSnap[e.AGUIID] && !c.Awaits(tm.ToolCallID) {
			continue
		}
		c.Read(e.Message)
		valid = append(valid, e)
	}
	return valid
}

// hasToolUse reports whether m holds a tool_use of call id.
func hasToolUse(m *aap.AssistantMessage, id string) bool {
	for _, b := range m.Content.Blocks {
		if tu, ok := b.(*aap.ToolUseBlock); ok && tu.ToolCallID == id {
			return true
		}
	}
	return false
}
