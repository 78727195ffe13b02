package translate_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/translate"
)

// BenchmarkMetadataEvents feeds one text message of n deltas, each with
// metadata of a key of its own (what an agent controls), and keeps the
// message's merged metadata: the cost per event stays flat as n grows ×10
// (a merge into the whole object each time would grow with it).
func BenchmarkMetadataEvents(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		frames := make([][]byte, n)
		for i := range frames {
			frames[i] = fmt.Appendf(nil, `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"x","metadata":{"k%d":%d}}`, i, i)
		}
		start := []byte(`{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}`)
		b.Run(fmt.Sprint("events=", n), func(b *testing.B) {
			for b.Loop() {
				tr := translate.NewAGUIToAAP(translate.AGUIToAAPOptions{PreviewCalls: true})
				for _, f := range append([][]byte{start}, frames...) {
					ev, err := agui.DecodeEvent(f)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := tr.FeedJSON(ev, f); err != nil {
						b.Fatal(err)
					}
				}
				tr.Finish()
				msgs := tr.Messages()
				if x := tr.Encrypted(msgs, 0, "m1"); len(x) == 0 {
					b.Fatal("no metadata kept")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/event")
		})
	}
}

// BenchmarkActivities makes n activity messages and a delta of each: the
// cost per activity stays flat as n grows ×10.
func BenchmarkActivities(b *testing.B) {
	patch := json.RawMessage(`[{"op":"replace","path":"/n","value":2}]`)
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprint("activities=", n), func(b *testing.B) {
			for b.Loop() {
				a := &translate.Activities{}
				for i := range n {
					id := fmt.Sprint("a", i)
					if err := a.Snapshot(id, "t", json.RawMessage(`{"n":1}`), true, i); err != nil {
						b.Fatal(err)
					}
					if err := a.Delta(id, patch); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/activity")
		})
	}
}
