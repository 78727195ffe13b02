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

// entryIDs returns the AG-UI ids of entries (a slice: the set is made
// only when a snapshot needs it, idSet).
func entryIDs(entries []store.Entry) []string {
	ids := make([]string, len(entries))
	for i, e := range entries {
		ids[i] = e.AGUIID
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
