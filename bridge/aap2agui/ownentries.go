package aap2agui

import (
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
	var c translate.Calls
	for m := range store.Messages(hist) {
		c.Read(m)
	}
	var out []store.Entry
	for _, r := range results {
		if c.Awaits(translate.AnsweredCall(r.Message)) {
			out = append(out, r)
		}
	}
	return out
}
