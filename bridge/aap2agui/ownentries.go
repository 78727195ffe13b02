package aap2agui

import (
	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/translate"
)

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
		if id := translate.AnsweredCall(r.Message); called[id] && !answered[id] {
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
