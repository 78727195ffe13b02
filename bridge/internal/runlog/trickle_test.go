package runlog_test

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/bridge/internal/runlog"
	"github.com/aapagui/aapagui/store"
)

// sizedStore counts the batches it stores and their bytes.
type sizedStore struct {
	store.RunLogStore
	bytes, batches atomic.Int64
}

func (s *sizedStore) AppendRunLog(ctx context.Context, id string, b store.RunLogBatch, finished bool) error {
	s.bytes.Add(int64(len(b.Frames)))
	s.batches.Add(1)
	return s.RunLogStore.AppendRunLog(ctx, id, b, finished)
}

// A run whose client is sent each event as it comes (an agent that
// trickles: the stream flushes after every event) is stored in about what
// the same events sent in one burst are, not in a whole frame per event,
// and a follower reads it back byte for byte. The frames are written, as
// a stream writes them, into one buffer used again after each Flush.
func TestTrickledRunIsStoredAsABurstIs(t *testing.T) {
	const n = 2000
	record := func(flushEvery int, pause bool) (stored int64, frames, followed string) {
		st := &sizedStore{RunLogStore: store.NewMemory()}
		r := runlog.NewHub().Start(st, &nop, store.RunLog{Owner: "", Key: "session/s", RunID: "run-1", Form: "delta"})
		var buf []byte
		var sent strings.Builder
		for i := range n {
			buf = r.AppendID(buf)
			at := len(buf)
			// A delta's text as the load test's agent sends it: the time
			// in nanoseconds, whose last digits change from one to the next.
			buf = strconv.AppendInt(append(buf, "event: text_delta\ndata: {\"delta\":\""...), 1764392345000000000+int64(i)*1234567, 10)
			buf = append(buf, "\"}\n\n"...)
			r.Add(buf[at:])
			if (i+1)%flushEvery == 0 {
				sent.Write(buf)
				r.Flush()
				clear(buf) // the stream's buffer goes back to its pool
				buf = buf[:0]
			}
			if pause && i%100 == 99 {
				time.Sleep(40 * time.Millisecond) // past the recorder's linger: its batch is written
			}
		}
		sent.Write(buf)
		r.Finish()
		l, err := st.LatestRunLog(context.Background(), "", "session/s")
		require.NoError(t, err)
		require.Equal(t, int64(n), l.Events)
		var out sink
		require.NoError(t, (&runlog.Follow{Store: st, Hub: runlog.NewHub(), Log: l}).Run(context.Background(), &out))
		t.Logf("flushed every %d events: %d batches", flushEvery, st.batches.Load())
		return st.bytes.Load(), sent.String(), out.String()
	}
	burst, burstFrames, burstFollowed := record(n, false)
	trickle, trickleFrames, trickleFollowed := record(1, false)
	assert.Equal(t, burstFrames, burstFollowed)
	assert.Equal(t, trickleFrames, trickleFollowed, "a follower reads the trickled run as its client was sent it")
	// A run that pauses now and then is stored in many batches, each
	// beginning with an event that shares nothing.
	_, slowFrames, slowFollowed := record(3, true)
	assert.Equal(t, slowFrames, slowFollowed, "a follower reads a run stored in many batches as its client was sent it")
	assert.Less(t, float64(trickle), 1.2*float64(burst),
		"a trickled run of %d events takes %d bytes of the store, %d sent at once %d", n, trickle, n, burst)
	t.Logf("%d events stored in %d bytes trickled, %d in a burst (%d bytes sent)", n, trickle, burst, len(trickleFrames))
}
