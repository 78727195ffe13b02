package aap2agui

import (
	"encoding/json"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/translate"
)

// keepOwnEntries returns snap (the history a MESSAGES_SNAPSHOT makes) with
// what old (the history it replaces) holds that the snapshot cannot or did
// not: the calls of the reserved interrupt tool (translate.InterruptToolName)
// and their answers, which are how aap2agui presented the agent's own
// interrupts to the application (no agent's snapshot holds them), and the
// turn's own entries (own: their AG-UI ids), the messages the application
// sent in this turn, which an agent may leave out (@ag-ui/langgraph's
// snapshot of a resumed run never has the user message sent beside the
// resume).
//
// Each kept entry goes right after the entry of old it followed that the
// snapshot holds (by AG-UI id): after its own message when an interrupt
// call was part of a message the snapshot holds (the call then moves to a
// message of its own), else after the nearest earlier such entry. One that
// followed nothing the snapshot holds (a snapshot that compacts the
// thread) goes right before the first message of the run that the
// snapshot holds, else at its end. A kept tool message goes only where a
// call before it shows its call and nothing answers it yet, so that
// history stays valid.
//
// The thinking the run streamed is kept too: a message of the snapshot
// that is one the run streamed (runMsgs, under the AG-UI ids runIDs) with
// thinking blocks, and has none itself (@ag-ui/langgraph's snapshot has no
// reasoning message for Anthropic-style thinking blocks), gets them back,
// before its own content.
func keepOwnEntries(old, snap []store.Entry, own map[string]bool, runMsgs []aap.Message, runIDs []string) []store.Entry {
	snap = withThinking(snap, runMsgs, runIDs)
	run := idSet(runIDs)
	inSnap := make(map[string]bool, len(snap))
	snapResults := map[string]bool{}
	same := map[string]int{} // the snapshot's messages, as JSON: it may hold one of the turn's under an id of its own
	for _, e := range snap {
		inSnap[e.AGUIID] = true
		if tm, ok := e.Message.(*aap.ToolMessage); ok {
			snapResults[tm.ToolCallID] = true
		}
		if b, err := json.Marshal(e.Message); err == nil {
			same[string(b)]++
		}
	}
	held := func(e store.Entry) bool { // the snapshot holds e under another id
		b, err := json.Marshal(e.Message)
		if err != nil || same[string(b)] == 0 {
			return false
		}
		same[string(b)]--
		return true
	}
	after := map[string][]store.Entry{} // anchor id ("" first) → kept entries
	kept := map[string]bool{}           // kept interrupt call ids
	anchor := ""
	found := false
	keep := func(e store.Entry) {
		after[anchor] = append(after[anchor], e)
		found = true
	}
	for _, e := range old {
		switch m := e.Message.(type) {
		case *aap.AssistantMessage:
			var calls []aap.ContentBlock
			if m.Content.IsBlocks() {
				for _, b := range m.Content.Blocks {
					if tu, ok := b.(*aap.ToolUseBlock); ok && tu.Name == translate.InterruptToolName && !kept[tu.ToolCallID] {
						calls = append(calls, b)
						kept[tu.ToolCallID] = true
					}
				}
			}
			id := e.AGUIID
			if inSnap[id] {
				anchor = id
				id += "-interrupts"
			}
			if len(calls) > 0 {
				keep(store.Entry{Message: &aap.AssistantMessage{Content: aap.BlockContent(calls...)}, AGUIID: id})
			}
		case *aap.ToolMessage:
			switch {
			case inSnap[e.AGUIID]:
				anchor = e.AGUIID
			case (kept[m.ToolCallID] || own[e.AGUIID]) && !snapResults[m.ToolCallID] && !held(e):
				keep(e)
			}
		default:
			switch {
			case inSnap[e.AGUIID]:
				anchor = e.AGUIID
			case own[e.AGUIID] && !held(e):
				keep(e)
			}
		}
	}
	if !found {
		return snap
	}
	out := make([]store.Entry, 0, len(snap)+len(kept)*2)
	for _, e := range snap {
		if run[e.AGUIID] {
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

// withoutStrayResults leaves out of out each kept result (a tool message
// the snapshot does not hold) whose call nothing before it shows, or that
// is answered already.
func withoutStrayResults(out []store.Entry, inSnap map[string]bool) []store.Entry {
	called, answered := map[string]bool{}, map[string]bool{}
	valid := out[:0]
	for _, e := range out {
		switch m := e.Message.(type) {
		case *aap.AssistantMessage:
			noteCalls(called, m)
		case *aap.ToolMessage:
			if !inSnap[e.AGUIID] && (!called[m.ToolCallID] || answered[m.ToolCallID]) {
				continue
			}
			answered[m.ToolCallID] = true
		}
		valid = append(valid, e)
	}
	return valid
}

// withThinking returns snap with the thinking blocks of the run's
// messages put back into the messages of snap that have the same AG-UI id
// and no thinking of their own (snap itself is not changed).
func withThinking(snap []store.Entry, runMsgs []aap.Message, runIDs []string) []store.Entry {
	thinking := map[string][]aap.ContentBlock{}
	for i, m := range runMsgs {
		am, ok := m.(*aap.AssistantMessage)
		if !ok || i >= len(runIDs) || runIDs[i] == "" {
			continue
		}
		for _, b := range am.Content.Blocks {
			if tb, ok := b.(*aap.ThinkingBlock); ok {
				thinking[runIDs[i]] = append(thinking[runIDs[i]], tb)
			}
		}
	}
	if len(thinking) == 0 {
		return snap
	}
	out := snap
	copied := false
	for i, e := range snap {
		am, ok := e.Message.(*aap.AssistantMessage)
		if !ok || thinking[e.AGUIID] == nil {
			continue
		}
		blocks := append([]aap.ContentBlock{}, thinking[e.AGUIID]...)
		if am.Content.IsBlocks() {
			own := false
			for _, b := range am.Content.Blocks {
				if _, ok := b.(*aap.ThinkingBlock); ok {
					own = true
				}
			}
			if own {
				continue
			}
			blocks = append(blocks, am.Content.Blocks...)
		} else if am.Content.Text != "" {
			blocks = append(blocks, &aap.TextBlock{Text: am.Content.Text})
		}
		if !copied {
			out, copied = append([]store.Entry(nil), snap...), true
		}
		out[i] = store.Entry{Message: &aap.AssistantMessage{Content: aap.BlockContent(blocks...)}, AGUIID: e.AGUIID, AGUI: e.AGUI}
	}
	return out
}

// interruptCalls returns an assistant message holding the calls of the
// reserved interrupt tool that m holds, or nil when it holds none.
func interruptCalls(m aap.Message) aap.Message {
	am, ok := m.(*aap.AssistantMessage)
	if !ok {
		return nil
	}
	var calls []aap.ContentBlock
	for _, b := range am.Content.Blocks {
		if tu, ok := b.(*aap.ToolUseBlock); ok && tu.Name == translate.InterruptToolName {
			calls = append(calls, b)
		}
	}
	if len(calls) == 0 {
		return nil
	}
	return &aap.AssistantMessage{Content: aap.BlockContent(calls...)}
}

// idSet returns the set of ids.
func idSet(ids []string) map[string]bool {
	set := make(map[string]bool, len(ids))
	for _, id := range ids {
		set[id] = true
	}
	return set
}

// entryIDs returns the set of the AG-UI ids of entries.
func entryIDs(entries []store.Entry) map[string]bool {
	ids := make(map[string]bool, len(entries))
	for _, e := range entries {
		ids[e.AGUIID] = true
	}
	return ids
}

// missingResults returns the entries of results (tool messages) whose call
// hist holds without a result: what a turn records for its answered
// permissions once the history may be the agent's own (a snapshot may hold
// a result already, or no longer the call).
func missingResults(hist, results []store.Entry) []store.Entry {
	if len(results) == 0 {
		return nil
	}
	called, answered := map[string]bool{}, map[string]bool{}
	for _, e := range hist {
		switch m := e.Message.(type) {
		case *aap.AssistantMessage:
			noteCalls(called, m)
		case *aap.ToolMessage:
			answered[m.ToolCallID] = true
		}
	}
	var out []store.Entry
	for _, r := range results {
		if id := toolCallIDOf(r.Message); called[id] && !answered[id] {
			out = append(out, r)
		}
	}
	return out
}

// noteCalls adds the ids of the tool calls m makes to called.
func noteCalls(called map[string]bool, m *aap.AssistantMessage) {
	for _, b := range m.Content.Blocks {
		if tu, ok := b.(*aap.ToolUseBlock); ok {
			called[tu.ToolCallID] = true
		}
	}
}
