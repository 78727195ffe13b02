package runlog_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/bridge/internal/runlog"
	"github.com/aapagui/aapagui/store"
)

var nop = zerolog.Nop()

// record writes n frames the way a stream does: each with its id, the
// recorder flushed now and then.
func record(r *runlog.Recorder, from, n int) []string {
	var frames []string
	for i := from; i < from+n; i++ {
		buf := r.AppendID(nil)
		body := len(buf)
		buf = append(buf, fmt.Sprintf("event: text_delta\ndata: {\"delta\":\"w%d \"}\n\n", i)...)
		r.Add(buf[body:])
		frames = append(frames, string(buf))
		if i%7 == 0 {
			r.Flush()
		}
	}
	r.Flush()
	return frames
}

// sink is a follower's client: what it was sent.
type sink struct {
	mu     sync.Mutex
	got    strings.Builder
	failAt int // Flush fails once got holds that many bytes (0: never)
}

func (s *sink) Write(b []byte) { s.mu.Lock(); s.got.Write(b); s.mu.Unlock() }
func (s *sink) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failAt > 0 && s.got.Len() >= s.failAt {
		return errors.New("client gone")
	}
	return nil
}
func (s *sink) Waiting(bool) {}
func (s *sink) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.got.String()
}

// A follower that joins a run in the middle gets it from its start and
// then live, woken by the run's own process; one that names the last event
// it had gets exactly the rest; each frame carries "<log>:<n>".
func TestFollowLive(t *testing.T) {
	st, hub := store.NewMemory(), runlog.NewHub()
	hub.Poll = time.Hour // in the run's own process, the hub wakes followers
	r := hub.Start(st, &nop, store.RunLog{Owner: "alice", Key: "thread/t", RunID: "run-1", Form: "agui"})
	frames := record(r, 0, 30)
	require.Eventually(t, func() bool {
		l, err := st.LatestRunLog(context.Background(), "alice", "thread/t")
		return err == nil && l.Events == 30
	}, 5*time.Second, time.Millisecond)
	l, err := st.LatestRunLog(context.Background(), "alice", "thread/t")
	require.NoError(t, err)
	assert.Equal(t, r.ID(), l.ID)
	assert.Equal(t, "run-1", l.RunID)
	assert.True(t, strings.HasPrefix(frames[29], "id: "+r.ID()+":30\n"), frames[29])

	var out sink
	done := make(chan error, 1)
	go func() { done <- (&runlog.Follow{Store: st, Hub: hub, Log: l}).Run(context.Background(), &out) }()
	require.Eventually(t, func() bool { return out.String() == strings.Join(frames, "") }, 5*time.Second, time.Millisecond)
	frames = append(frames, record(r, 30, 20)...)
	r.Finish()
	require.NoError(t, <-done)
	assert.Equal(t, strings.Join(frames, ""), out.String(), "the run from its start, live to its end")

	for _, after := range []int{0, 1, 29, 49, 50} {
		var rest sink
		require.NoError(t, (&runlog.Follow{Store: st, Hub: hub, Log: l, After: int64(after)}).Run(context.Background(), &rest))
		assert.Equal(t, strings.Join(frames[after:], ""), rest.String(), "after %d", after)
	}
}

// A follower on another replica (another hub, the same store) polls the
// store: it sees the run live and to its end.
func TestFollowOtherReplica(t *testing.T) {
	st := store.NewMemory()
	runs, other := runlog.NewHub(), runlog.NewHub()
	other.Poll = 5 * time.Millisecond
	r := runs.Start(st, &nop, store.RunLog{Owner: "", Key: "session/s", RunID: "run-1", Form: "delta"})
	frames := record(r, 0, 5)
	require.Eventually(t, func() bool {
		l, err := st.LatestRunLog(context.Background(), "", "session/s")
		return err == nil && l.Events == 5
	}, 5*time.Second, time.Millisecond)
	l, _ := st.LatestRunLog(context.Background(), "", "session/s")
	var out sink
	done := make(chan error, 1)
	go func() {
		done <- (&runlog.Follow{Store: st, Hub: other, Log: l, After: 2}).Run(context.Background(), &out)
	}()
	require.Eventually(t, func() bool { return out.String() == strings.Join(frames[2:], "") }, 5*time.Second, time.Millisecond)
	frames = append(frames, record(r, 5, 3)...)
	r.Finish()
	require.NoError(t, <-done)
	assert.Equal(t, strings.Join(frames[2:], ""), out.String())
}

// A run that makes no progress for the follower's idle bound without
// finishing (its process died) ends the follow with ErrStale; a client
// that fails ends it with the sink's error; the run is not held up.
func TestFollowEnds(t *testing.T) {
	st, hub := store.NewMemory(), runlog.NewHub()
	hub.Poll = 5 * time.Millisecond
	dead := runlog.NewHub().Start(st, &nop, store.RunLog{Owner: "", Key: "thread/dead", RunID: "run-1", Form: "agui"})
	record(dead, 0, 3)
	require.Eventually(t, func() bool {
		l, err := st.LatestRunLog(context.Background(), "", "thread/dead")
		return err == nil && l.Events == 3
	}, 5*time.Second, time.Millisecond)
	l, _ := st.LatestRunLog(context.Background(), "", "thread/dead")
	var out sink
	err := (&runlog.Follow{Store: st, Hub: hub, Log: l, Idle: 30 * time.Millisecond}).Run(context.Background(), &out)
	require.ErrorIs(t, err, runlog.ErrStale)
	assert.Equal(t, 3, strings.Count(out.String(), "\n\n"))

	gone := sink{failAt: 1}
	err = (&runlog.Follow{Store: st, Hub: hub, Log: l}).Run(context.Background(), &gone)
	require.EqualError(t, err, "client gone")
	dead.Finish()
}

// slowStore holds every batch until it is let go.
type slowStore struct {
	store.RunLogStore
	gate chan struct{}
	fail bool
}

func (s *slowStore) AppendRunLog(ctx context.Context, id string, b store.RunLogBatch, finished bool) error {
	<-s.gate
	if s.fail {
		return errors.New("disk full")
	}
	return s.RunLogStore.AppendRunLog(ctx, id, b, finished)
}

// A run gets at most a few MiB ahead of a store that is slow: it waits
// for the batch being written. A store that fails stops the log, and the
// run goes on without holding what it records.
func TestRecorderBounds(t *testing.T) {
	slow := &slowStore{RunLogStore: store.NewMemory(), gate: make(chan struct{})}
	r := runlog.NewHub().Start(slow, &nop, store.RunLog{Owner: "", Key: "session/s", RunID: "run-1", Form: "delta"})
	big := make([]byte, 1<<20)
	wrote := make(chan int, 64)
	go func() {
		for i := range 12 {
			r.Add(big)
			r.Flush()
			wrote <- i
		}
		close(wrote)
	}()
	// The first batch is taken (and held by the store), then about 4 MiB
	// more are taken in: no more until the store lets the batch go.
	n := 0
	for timeout := time.After(200 * time.Millisecond); ; {
		select {
		case _, ok := <-wrote:
			require.True(t, ok, "the run never waited for its store")
			n++
			continue
		case <-timeout:
		}
		break
	}
	assert.Less(t, n, 12, "the run waits for a store it is far ahead of")
	slow.fail = true
	close(slow.gate)
	for range wrote {
	}
	r.Finish()
}

// The ids a recorder gives are "<log>:<n>" for n = 1, 2, … whatever the
// number of digits, and a number not taken (its frame could not be
// written) is given again.
func TestEventIDs(t *testing.T) {
	r := runlog.NewHub().Start(store.NewMemory(), &nop, store.RunLog{Owner: "", Key: "session/s", RunID: "run-1", Form: "delta"})
	defer r.Finish()
	for n := 1; n <= 1001; n++ {
		line := string(r.AppendID(nil))
		require.Equal(t, fmt.Sprintf("id: %s:%d\n", r.ID(), n), line)
		if n%97 == 0 {
			require.Equal(t, line, string(r.AppendID(nil)), "the number not taken is given again")
		}
		log, got, err := runlog.ParseEventID(strings.TrimSuffix(strings.TrimPrefix(line, "id: "), "\n"))
		require.NoError(t, err)
		require.Equal(t, r.ID(), log)
		require.Equal(t, int64(n), got)
		r.Add([]byte("event: text_delta\ndata: {}\n\n"))
	}
	r.Flush()
}
