package runlog_test

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/aapagui/aapagui/bridge/internal/runlog"
	"github.com/aapagui/aapagui/store"
)

// BenchmarkRecordDeltas records text deltas as a stream writes them: a
// burst of 45 events a write, or a trickle of one (a flush per event),
// each frame after its id line, the recorder told of each flush; the
// memory store keeps what it is given. B/op is what the log holds of them.
func BenchmarkRecordDeltas(b *testing.B) {
	for _, perWrite := range []int{45, 1} {
		b.Run(fmt.Sprintf("per-write=%d", perWrite), func(b *testing.B) { recordDeltas(b, perWrite) })
	}
}

func recordDeltas(b *testing.B, perWrite int) {
	r := runlog.NewHub().Start(store.NewMemory(), &nop, store.RunLog{Owner: "", Key: "session/s", RunID: "run-1", Form: "delta"})
	var buf []byte
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		buf = buf[:0]
		for j := range perWrite {
			buf = r.AppendID(buf)
			body := len(buf)
			buf = append(buf, `event: text_delta`+"\n"+`data: {"delta":"w`...)
			buf = strconv.AppendInt(buf, int64(i*perWrite+j), 10)
			buf = append(buf, ` "}`+"\n\n"...)
			r.Add(buf[body:])
		}
		r.Flush()
	}
	r.Finish()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*perWrite), "ns/event")
}
