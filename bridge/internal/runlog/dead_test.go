package runlog_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/bridge/internal/runlog"
	"github.com/aapagui/aapagui/store"
)

const interrupted = "event: turn_stop\ndata: {\"stopReason\":\"error\"}\n\n"

// deadRun is a run of another process that recorded n events and then
// went quiet, its log unfinished: its process died, or it is thinking.
func deadRun(t *testing.T, st store.RunLogStore, n int) *store.RunLog {
	t.Helper()
	ctx := context.Background()
	other := runlog.NewHub() // the process that ran it
	r := other.Start(st, &nop, store.RunLog{Owner: "alice", Key: "session/s", RunID: "run-1", Form: "delta"})
	record(r, 0, n)
	require.Eventually(t, func() bool {
		l, err := st.GetRunLog(ctx, "alice", r.ID())
		return err == nil && l.Events == int64(n)
	}, 5*time.Second, time.Millisecond)
	l, err := st.GetRunLog(ctx, "alice", r.ID())
	require.NoError(t, err)
	return l
}

// follow follows l on a hub of its own (another replica) with end, and
// returns what the follower was sent once it ended, and its error.
func follow(t *testing.T, st store.RunLogStore, l *store.RunLog, end *runlog.Ending) (string, error) {
	t.Helper()
	hub := runlog.NewHub()
	hub.Poll = time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out := &sink{}
	f := runlog.Follow{Store: st, Hub: hub, Log: l, End: end}
	err := f.Run(ctx, out)
	require.NoError(t, ctx.Err(), "the follower was never told")
	return out.String(), err
}

// A follower of a run whose lock is held waits for it, asking about the
// lock again and again; once the lock is free (its process died, the
// lease ran out) and stays free for the grace, the follower ends the log
// with the run's terminal event, numbered after what was recorded, and a
// follower that comes later reads the same end.
func TestFollowEndsDeadRun(t *testing.T) {
	st := store.NewMemory()
	l := deadRun(t, st, 12)
	var asked atomic.Int32
	end := &runlog.Ending{
		Free:  func(context.Context) (bool, error) { return asked.Add(1) > 5, nil },
		Frame: []byte(interrupted), Quiet: time.Millisecond, Grace: time.Millisecond,
	}
	got, err := follow(t, st, l, end)
	require.NoError(t, err)
	assert.Greater(t, asked.Load(), int32(5), "the lock was held: the follower waited")
	assert.Equal(t, 12, strings.Count(got, "text_delta"), "what the run recorded")
	assert.True(t, strings.HasSuffix(got, "id: "+l.ID+":13\n"+interrupted), got)

	after, err := st.GetRunLog(context.Background(), "alice", l.ID)
	require.NoError(t, err)
	assert.True(t, after.Finished)
	assert.Equal(t, int64(13), after.Events)
	again, err := follow(t, st, l, &runlog.Ending{Free: func(context.Context) (bool, error) { t.Error("a finished log's lock asked about"); return false, nil }})
	require.NoError(t, err)
	assert.Equal(t, got, again)
}

// A run whose conversation already has a newer run is over, whatever the
// lock says (the newer run holds it).
func TestFollowEndsRunOfOlderTurn(t *testing.T) {
	st := store.NewMemory()
	l := deadRun(t, st, 3)
	require.NoError(t, st.StartRunLog(context.Background(), &store.RunLog{ID: "newer", Owner: "alice", Key: "session/s", RunID: "run-2", Form: "delta"}))
	end := &runlog.Ending{
		Free:  func(context.Context) (bool, error) { return false, nil },
		Frame: []byte(interrupted), Quiet: time.Millisecond, Grace: time.Millisecond,
	}
	got, err := follow(t, st, l, end)
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(got, "id: "+l.ID+":4\n"+interrupted), got)
}

// A run that ends as it should frees its lock before its last batch is
// stored: a follower that finds the lock free then waits the grace, and
// gets the run's own end, not an interruption.
func TestFollowLetsRunEndItself(t *testing.T) {
	st := store.NewMemory()
	hub := runlog.NewHub()
	r := hub.Start(st, &nop, store.RunLog{Owner: "alice", Key: "session/s", RunID: "run-1", Form: "delta"})
	record(r, 0, 2)
	require.Eventually(t, func() bool {
		l, err := st.GetRunLog(context.Background(), "alice", r.ID())
		return err == nil && l.Events == 2
	}, 5*time.Second, time.Millisecond)
	l, err := st.GetRunLog(context.Background(), "alice", r.ID())
	require.NoError(t, err)
	freed := make(chan struct{})
	var once atomic.Bool
	end := &runlog.Ending{
		Free: func(context.Context) (bool, error) {
			if once.CompareAndSwap(false, true) {
				close(freed)
			}
			return true, nil
		},
		Frame: []byte(interrupted), Quiet: time.Millisecond, Grace: time.Hour,
	}
	go func() {
		<-freed
		record(r, 2, 1)
		r.Finish()
	}()
	got, err := follow(t, st, l, end)
	require.NoError(t, err)
	assert.NotContains(t, got, "turn_stop")
	assert.True(t, strings.HasSuffix(got, "w2 \"}\n\n"), got)
}
