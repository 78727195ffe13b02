package runlog_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/aapagui/aapagui/bridge/internal/runlog"
	"github.com/aapagui/aapagui/store"
)

// framelessStore stores batches without their frames, keeping none of
// their bytes.
type framelessStore struct{ store.RunLogStore }

func (s framelessStore) AppendRunLog(ctx context.Context, id string, b store.RunLogBatch, finished bool) error {
	b.Frames = nil
	return s.RunLogStore.AppendRunLog(ctx, id, b, finished)
}

// A long run's frames make no garbage of their size: the recorder's
// buffers go from the store back to the run, batch after batch (what it
// allocates is bounded by its pending bytes, however much it records).
func TestRecorderReusesItsBuffers(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's sync.Pool drops buffers on purpose")
	}
	const size, frame = 256 << 20, 64 << 10
	r := runlog.NewHub().Start(framelessStore{store.NewMemory()}, &nop, store.RunLog{Owner: "", Key: "session/s", RunID: "run-1", Form: "delta"})
	buf := make([]byte, frame)
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	for range size / frame {
		r.Add(buf)
		r.Flush()
	}
	r.Finish()
	runtime.ReadMemStats(&m1)
	allocated := m1.TotalAlloc - m0.TotalAlloc
	t.Logf("recording %d MiB allocated %.1f MiB", size>>20, float64(allocated)/(1<<20))
	if allocated > size/6 {
		t.Errorf("recording %d MiB allocated %.1f MiB", size>>20, float64(allocated)/(1<<20))
	}
}
