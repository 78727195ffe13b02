package runlog_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/bridge/internal/runlog"
	"github.com/aapagui/aapagui/store"
)

// pollCounter counts the hub's polls of the runs asked to stop.
type pollCounter struct {
	store.Store
	polls atomic.Int64
}

func (s *pollCounter) StoppingRunLogs(ctx context.Context) ([]string, error) {
	s.polls.Add(1)
	return s.Store.StoppingRunLogs(ctx)
}

// A run is stopped at once through its own process's hub, and through a
// mark in the store within a poll; the hub polls only while it has runs
// to stop, and a run it no longer has is not stopped.
func TestHubStops(t *testing.T) {
	ctx := context.Background()
	st := &pollCounter{Store: store.NewMemory()}
	h := runlog.NewHub()
	h.StopPoll = 5 * time.Millisecond
	assert.False(t, h.Stop("L1"), "a run the hub does not have")

	var here, there atomic.Int32
	doneHere := h.Stoppable(st, "L1", func() { here.Add(1) })
	doneThere := h.Stoppable(st, "L2", func() { there.Add(1) })
	assert.True(t, h.Stop("L1"), "stopped in its own process")
	assert.Equal(t, int32(1), here.Load(), "at once")
	assert.False(t, h.Stop("L1"), "once")
	doneHere()

	require.NoError(t, st.StartRunLog(ctx, &store.RunLog{ID: "L2", Owner: "o", Key: "thread/t", RunID: "r", Form: "agui"}))
	require.NoError(t, st.StopRunLog(ctx, "o", "L2"))
	require.Eventually(t, func() bool { return there.Load() == 1 }, 10*time.Second, time.Millisecond, "stopped through the store")
	doneThere()

	// No run left: the poll ends.
	require.Eventually(t, func() bool {
		n := st.polls.Load()
		time.Sleep(50 * time.Millisecond)
		return st.polls.Load() == n
	}, 10*time.Second, time.Millisecond, "the hub stops polling when it has no run")
	n := st.polls.Load()
	done := h.Stoppable(st, "L3", func() {})
	require.Eventually(t, func() bool { return st.polls.Load() > n }, 10*time.Second, time.Millisecond, "and polls again for a new run")
	done()
	assert.Equal(t, int32(1), there.Load(), "a stopped run is stopped once")
}
