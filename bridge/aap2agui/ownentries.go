package aap2agui

import (
	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/translate"
)

// keepInterruptCalls returns snap (the history a MESSAGES_SNAPSHOT makes)
// with the calls of the reserved interrupt tool (translate.InterruptToolName)
// that old (the history it replaces) holds, and their answers: they are how
// aap2agui presented the agent's own interrupts to the application, so no
// snapshot of the agent's can hold them, and without them history would
// lose what the application was asked and what it answered.
//
// Each call goes right after the entry of old it followed that the
// snapshot holds (by AG-UI id): after its own message when the call was
// part of a message the snapshot holds (the call then moves to a message of
// its own), else after the nearest earlier such entry, else first. Its
// answers (tool messages for the call) follow it.
func keepInterruptCalls(old, snap []store.Entry) []store.Entry {
	inSnap := make(map[string]bool, len(snap))
	for _, e := range snap {
		inSnap[e.AGUIID] = true
	}
	after := map[string][]store.Entry{} // anchor id ("" first) → kept entries
	kept := map[string]bool{}           // kept call ids
	anchor := ""
	found := false
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
				after[anchor] = append(after[anchor], store.Entry{Message: &aap.AssistantMessage{Content: aap.BlockContent(calls...)}, AGUIID: id})
				found = true
			}
		case *aap.ToolMessage:
			if kept[m.ToolCallID] && !inSnap[e.AGUIID] {
				after[anchor] = append(after[anchor], e)
				continue
			}
			if inSnap[e.AGUIID] {
				anchor = e.AGUIID
			}
		default:
			if inSnap[e.AGUIID] {
				anchor = e.AGUIID
			}
		}
	}
	if !found {
		return snap
	}
	out := make([]store.Entry, 0, len(snap)+len(kept)*2)
	out = append(out, after[""]...)
	for _, e := range snap {
		out = append(out, e)
		out = append(out, after[e.AGUIID]...)
		delete(after, e.AGUIID) // an id twice in the snapshot: once
	}
	return out
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
			for _, b := range m.Content.Blocks {
				if tu, ok := b.(*aap.ToolUseBlock); ok {
					called[tu.ToolCallID] = true
				}
			}
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
