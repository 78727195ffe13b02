package agui2aap

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/translate"
)

// FuzzSnapshotMessages feeds hydration any AAP history a server could
// return (a JSON array of messages) and checks what keeps a restored
// thread on its AAP session: the snapshot has exactly one message that
// counts as delivered (everything but reasoning) per history message
// shown, under the thread's delivered ids when the counts match and
// under hist-1, hist-2, … otherwise; the next run's delivered ids are
// then what the thread records. A history the bridge cannot show is a
// *translate.MessageError, never a panic.
func FuzzSnapshotMessages(f *testing.F) {
	seeds := []string{
		`[{"role":"user","content":"hello"},{"role":"assistant","content":"hi"}]`,
		`[{"role":"user","content":[{"type":"text","text":"` + translate.ContextHeader + `\n- a: b"},{"type":"text","text":"weather in Paris"}]},` +
			`{"role":"assistant","content":[{"type":"thinking","thinking":"hm"},{"type":"text","text":"let me see"},{"type":"tool_use","toolCallId":"c1","name":"get_weather","input":{"location":"Paris"}}]},` +
			`{"role":"tool","toolCallId":"c1","content":"sunny"},{"role":"assistant","content":"It is sunny."}]`,
		`[{"role":"user","content":"search cats"},{"role":"assistant","content":[{"type":"tool_use","toolCallId":"c2","name":"web_search","input":{}}]},` +
			`{"role":"tool_permission","toolCallId":"c2","granted":false,"reason":"no"},{"role":"tool","toolCallId":"c2","content":"Tool call denied: no"}]`,
		`[{"role":"assistant","content":[{"type":"thinking","thinking":"only thoughts"}]},{"role":"system","content":"be brief"}]`,
		`[{"role":"user","content":[{"type":"image","url":"data:image/png;base64,iVBORw0KGgo="},{"type":"text","text":"what is this"}]}]`,
		`[]`,
	}
	for _, s := range seeds {
		f.Add([]byte(s), uint8(0))
		f.Add([]byte(s), uint8(3))
	}
	f.Fuzz(func(t *testing.T, data []byte, deliveredHint uint8) {
		var raws []json.RawMessage
		if json.Unmarshal(data, &raws) != nil {
			return
		}
		hist := make([]aap.Message, 0, len(raws))
		for _, r := range raws {
			m, err := aap.DecodeMessage(r)
			if err != nil {
				return
			}
			hist = append(hist, m)
		}
		shown := len(historyForSnapshot(hist))
		// Even hints: the thread delivered as many messages as the history
		// shows; odd ones: some other number.
		n := shown
		if deliveredHint%2 == 1 {
			n = int(deliveredHint) % 7
		}
		delivered := make([]string, n)
		for i := range delivered {
			delivered[i] = fmt.Sprint("d", i)
		}

		out, err := snapshotMessages(hist, delivered, nil)
		if err != nil {
			var me *translate.MessageError
			if !errors.As(err, &me) {
				t.Fatalf("error %v (%T) is not a *translate.MessageError", err, err)
			}
			return
		}
		ids := deliveredIDs(out)
		want := delivered
		if n != shown {
			want = make([]string, shown)
			for i := range want {
				want[i] = fmt.Sprint("hist-", i+1)
			}
		}
		if !slices.Equal(ids, want) {
			t.Fatalf("delivered ids of the snapshot %q, want %q (history %s)", ids, want, data)
		}
		if _, err := json.Marshal(out); err != nil {
			t.Fatalf("the snapshot does not encode: %v", err)
		}
	})
}
