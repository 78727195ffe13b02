package translate_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/translate"
)

// FuzzMergeSnapshot merges a snapshot (AAP messages, their ids picked by
// pick among the history's and ids of the snapshot's own) into a history
// (every assistant message with encrypted values): never a panic; every
// entry of the snapshot is there, in order; a snapshot whose history is
// itself changes nothing; merging the same snapshot again into what came
// out changes none of its entries; a snapshot without a stray result gives
// a history without one.
func FuzzMergeSnapshot(f *testing.F) {
	f.Add([]byte(`[{"role":"user","content":"think"},{"role":"assistant","content":[{"type":"thinking","thinking":"hm"},{"type":"text","text":"Done."}]}]`),
		[]byte(`[{"role":"user","content":"think"},{"role":"assistant","content":"Done."},{"role":"user","content":"more"}]`), []byte{0, 1, 0xff}, uint8(0))
	f.Add([]byte(`[{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"tool_use","toolCallId":"c1","name":"agui_interrupt","input":{}}]},{"role":"tool","toolCallId":"c1","content":"ok"}]`),
		[]byte(`[{"role":"user","content":"go"},{"role":"assistant","content":"Asked."}]`), []byte{0xff, 0xff}, uint8(0b110))
	f.Fuzz(func(t *testing.T, oldJSON, snapJSON, pick []byte, own uint8) {
		oldMsgs, err1 := aap.DecodeHistory(oldJSON)
		snapMsgs, err2 := aap.DecodeHistory(snapJSON)
		if err1 != nil || err2 != nil || len(oldMsgs) > 64 || len(snapMsgs) > 64 {
			return
		}
		base := translate.SnapshotBase{Own: map[string]bool{}, Run: map[string]bool{}}
		for i, m := range oldMsgs {
			e := translate.HistoryEntry{Message: m, AGUIID: fmt.Sprintf("m%d", i)}
			if m.Role() == aap.RoleAssistant {
				e.AGUI = json.RawMessage(`{"encryptedValue":"v","reasoning":[{"block":0,"encryptedValue":"r"}]}`)
			}
			if own&(1<<(i%8)) != 0 {
				base.Own[e.AGUIID] = true
			}
			base.History = append(base.History, e)
		}
		snap := make([]translate.HistoryEntry, len(snapMsgs))
		unique := true
		seen := map[string]bool{}
		for j, m := range snapMsgs {
			id := fmt.Sprintf("s%d", j)
			if j < len(pick) && pick[j] != 0xff && len(oldMsgs) > 0 {
				id = fmt.Sprintf("m%d", int(pick[j])%len(oldMsgs))
			}
			unique = unique && !seen[id]
			seen[id] = true
			snap[j] = translate.HistoryEntry{Message: m, AGUIID: id}
			if j%2 == 1 {
				base.Run[id] = true
			}
		}
		out := translate.MergeSnapshot(snap, base)
		k := 0
		for _, e := range out {
			if k < len(snap) && e.AGUIID == snap[k].AGUIID {
				k++
			}
		}
		if k != len(snap) {
			t.Fatalf("%d of the snapshot's %d entries in the merged history, in order", k, len(snap))
		}
		if again := translate.MergeSnapshot(snap, translate.SnapshotBase{History: snap}); !sameEntries(again, snap) {
			t.Fatalf("a snapshot merged into itself changed")
		}
		if unique {
			again := translate.MergeSnapshot(snap, translate.SnapshotBase{History: out})
			if !sameEntries(snapshotPart(again, seen), snapshotPart(out, seen)) {
				t.Fatalf("merging the snapshot again changed its entries")
			}
		}
		if len(translate.OrphanResults(snapMsgs)) == 0 {
			msgs := make([]aap.Message, len(out))
			for i, e := range out {
				msgs[i] = e.Message
			}
			if bad := translate.OrphanResults(msgs); len(bad) > 0 {
				t.Fatalf("stray results at %v", bad)
			}
		}
	})
}

func snapshotPart(es []translate.HistoryEntry, ids map[string]bool) []translate.HistoryEntry {
	var out []translate.HistoryEntry
	for _, e := range es {
		if ids[e.AGUIID] {
			out = append(out, e)
		}
	}
	return out
}

func sameEntries(a, b []translate.HistoryEntry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		ja, _ := json.Marshal(a[i].Message)
		jb, _ := json.Marshal(b[i].Message)
		if a[i].AGUIID != b[i].AGUIID || string(ja) != string(jb) || string(a[i].AGUI) != string(b[i].AGUI) {
			return false
		}
	}
	return true
}
