package storetest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/store"
)

// testRunLogs checks the RunLogStore: the runs' logs of the frames their
// clients were sent, appended in batches, read back from any event, kept
// per owner and key for the running run and the one before it.
func testRunLogs(t *testing.T, open func(t *testing.T) store.Store) {
	runSteps(t, open, []step{
		{"start, append and read", testRunLogRoundTrip},
		{"read after an event", testRunLogReadAfter},
		{"read within a byte budget", testRunLogBudget},
		{"gaps and finished logs", testRunLogGaps},
		{"unknown logs and other owners", testRunLogMissing},
		{"the latest log of a key", testRunLogLatest},
		{"older logs dropped", testRunLogRetention},
		{"delete a key's logs", testRunLogDelete},
		{"start and update times", testRunLogTimes},
		{"frames byte for byte", testRunLogFrames},
		{"input byte for byte", testRunLogInput},
		{"concurrent appends of one batch", testRunLogRace},
		{"stop marks", testRunLogStop},
	})
}

// Frame is event n's SSE frame as a run log test stores it: bytes that are
// not UTF-8 and a NUL among them, so that a store that keeps frames as
// text is found out.
func Frame(n int64) []byte {
	return fmt.Appendf(nil, "id: log:%d\ndata: {\"n\":%d,\"b\":\"\xff\xfe\x00\xc3\xa9\"}\n\n", n, n)
}

// Batch is events first to first+count-1 of a run log test: their Frame,
// one after the other.
func Batch(first int64, count int) store.RunLogBatch {
	var frames []byte
	for n := first; n < first+int64(count); n++ {
		frames = append(frames, Frame(n)...)
	}
	return store.RunLogBatch{First: first, Count: count, Frames: frames}
}

// StartLog starts log id of owner's key, started at started (zero: the
// store's clock).
func StartLog(t *testing.T, s store.RunLogStore, id, owner, key string, started time.Time) *store.RunLog {
	t.Helper()
	l := &store.RunLog{ID: id, Owner: owner, Key: key, RunID: "run-" + id, Form: "agui", Started: started}
	require.NoError(t, s.StartRunLog(context.Background(), l), "start %s", id)
	return l
}

// StartLogInput starts log id of owner's key, at the store's clock, with
// input.
func StartLogInput(t *testing.T, s store.RunLogStore, id, owner, key string, input []byte) *store.RunLog {
	t.Helper()
	l := &store.RunLog{ID: id, Owner: owner, Key: key, RunID: "run-" + id, Form: "agui", Input: input}
	require.NoError(t, s.StartRunLog(context.Background(), l), "start %s", id)
	return l
}

// appendBatches appends the batches of the given sizes to log id, which
// holds events events, and returns how many it holds then.
func appendBatches(t *testing.T, s store.RunLogStore, id string, events int64, sizes ...int) int64 {
	t.Helper()
	for _, n := range sizes {
		require.NoError(t, s.AppendRunLog(context.Background(), id, Batch(events+1, n), false), "append %d after %d", n, events)
		events += int64(n)
	}
	return events
}

// getLog is owner's log id; the test fails if it cannot be read.
func getLog(t *testing.T, s store.RunLogStore, owner, id string) *store.RunLog {
	t.Helper()
	l, err := s.GetRunLog(context.Background(), owner, id)
	require.NoError(t, err, "get %s", id)
	return l
}

// checkCovers checks that batches are what a read of a log holding events
// 1 to last (appended as Batch) gives after event after: in order and
// contiguous, the first beginning at or before after+1, each holding an
// event after after, the last ending at last, each's frames those
// appended; none when after is last or more.
func checkCovers(t *testing.T, batches []store.RunLogBatch, after, last int64) {
	t.Helper()
	if after >= last {
		assert.Empty(t, batches, "nothing after %d of %d", after, last)
		return
	}
	require.NotEmpty(t, batches, "events after %d of %d", after, last)
	assert.LessOrEqual(t, batches[0].First, max(after, 0)+1, "the first batch holds event %d", after+1)
	next := batches[0].First
	for _, b := range batches {
		require.Equal(t, next, b.First, "batches follow each other")
		require.Positive(t, b.Count)
		assert.Greater(t, b.First+int64(b.Count)-1, after, "a batch of events up to %d only", after)
		assert.Equal(t, string(Batch(b.First, b.Count).Frames), string(b.Frames), "batch at %d", b.First)
		next = b.First + int64(b.Count)
	}
	assert.Equal(t, last+1, next, "the batches end with event %d", last)
}

// readLog reads log id after after with a budget of maxBytes; the test
// fails if it cannot be read.
func readLog(t *testing.T, s store.RunLogStore, id string, after int64, maxBytes int) []store.RunLogBatch {
	t.Helper()
	b, err := s.ReadRunLog(context.Background(), id, after, maxBytes)
	require.NoError(t, err, "read %s after %d", id, after)
	return b
}

// testRunLogRoundTrip checks that a started log reads back whole and empty, and grows with each batch appended.
func testRunLogRoundTrip(t *testing.T, open func(t *testing.T) store.Store) {
	s := open(t)
	l := StartLog(t, s, "L1", "alice", "session/s1", time.Time{})
	got := getLog(t, s, "alice", "L1")
	assert.Equal(t, store.RunLog{ID: "L1", Owner: "alice", Key: "session/s1", RunID: "run-L1", Form: "agui", Started: l.Started, Updated: got.Updated}, *got)
	assert.Empty(t, readLog(t, s, "L1", 0, 1<<20), "a new log holds no batch")

	events := appendBatches(t, s, "L1", 0, 2, 1, 3)
	got = getLog(t, s, "alice", "L1")
	assert.Equal(t, int64(6), got.Events)
	assert.False(t, got.Finished)
	batches := readLog(t, s, "L1", 0, 1<<20)
	assert.Equal(t, []store.RunLogBatch{Batch(1, 2), Batch(3, 1), Batch(4, 3)}, batches, "the batches as appended")
	checkCovers(t, batches, 0, events)

	require.NoError(t, s.AppendRunLog(context.Background(), "L1", Batch(7, 2), true), "the last batch, finishing")
	got = getLog(t, s, "alice", "L1")
	assert.Equal(t, int64(8), got.Events)
	assert.True(t, got.Finished)
	checkCovers(t, readLog(t, s, "L1", 0, 1<<20), 0, 8)
}

// testRunLogReadAfter checks that a read after each event gives the batches holding exactly the events after it.
func testRunLogReadAfter(t *testing.T, open func(t *testing.T) store.Store) {
	s := open(t)
	StartLog(t, s, "L1", "alice", "session/s1", time.Time{})
	last := appendBatches(t, s, "L1", 0, 1, 3, 1, 1, 4)
	for after := int64(-1); after <= last+2; after++ {
		t.Run(fmt.Sprint("after ", after), func(t *testing.T) {
			checkCovers(t, readLog(t, s, "L1", after, 1<<20), after, last)
		})
	}
}

// testRunLogBudget checks that a read stops at about its byte budget (at least one batch), and that reads within it, one after the other, read the whole log.
func testRunLogBudget(t *testing.T, open func(t *testing.T) store.Store) {
	s := open(t)
	StartLog(t, s, "L1", "alice", "session/s1", time.Time{})
	// Batches of two events, each event's frame of the same size (events
	// 1 to 8: one digit).
	sizes := []int{2, 2, 2, 2}
	last := appendBatches(t, s, "L1", 0, sizes...)
	size := len(Batch(1, 2).Frames)
	size2 := 2 * size

	for _, tt := range []struct {
		name     string
		after    int64
		maxBytes int
		want     int // batches
	}{
		{"no budget: one batch", 0, 0, 1},
		{"less than a batch: one batch", 0, 1, 1},
		{"exactly two batches", 0, size2, 2},
		{"a byte short of two batches", 0, size2 - 1, 1},
		{"everything", 0, 1 << 20, len(sizes)},
		{"after a batch's middle", 3, size2 + size, 3},
		{"after the last event", last, 0, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			batches := readLog(t, s, "L1", tt.after, tt.maxBytes)
			require.Len(t, batches, tt.want)
			total := 0
			for _, b := range batches {
				total += len(b.Frames)
			}
			if len(batches) > 1 {
				assert.LessOrEqual(t, total, tt.maxBytes, "more than one batch within the budget only")
			}
			if tt.want > 0 {
				first := tt.after - tt.after%2 + 1 // the batch holding event after+1
				assert.Equal(t, string(Batch(first, 2).Frames), string(batches[0].Frames))
			}
		})
	}

	// A follower reading a batch at a time, from where it is, reads every
	// event once.
	var seen []byte
	for after, reads := int64(0), 0; after < last; reads++ {
		require.Less(t, reads, 2*len(sizes), "the reads do not end")
		for _, b := range readLog(t, s, "L1", after, 1) {
			require.LessOrEqual(t, b.First, after+1)
			for n := b.First; n < b.First+int64(b.Count); n++ {
				if n > after {
					seen = append(seen, Frame(n)...)
				}
			}
			after = b.First + int64(b.Count) - 1
		}
	}
	assert.Equal(t, string(Batch(1, int(last)).Frames), string(seen))
}

// testRunLogGaps checks that a batch that does not continue the log, or comes after its end, is ErrRunLogGap and changes nothing, and that an empty batch finishes a log.
func testRunLogGaps(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	StartLog(t, s, "L1", "alice", "session/s1", time.Time{})
	require.ErrorIs(t, s.AppendRunLog(ctx, "L1", Batch(2, 1), false), store.ErrRunLogGap, "a first batch that is not event 1")
	require.ErrorIs(t, s.AppendRunLog(ctx, "L1", Batch(0, 1), false), store.ErrRunLogGap, "event 0")
	appendBatches(t, s, "L1", 0, 3)
	before := getLog(t, s, "alice", "L1")

	for _, tt := range []struct {
		name     string
		b        store.RunLogBatch
		finished bool
	}{
		{"a lost batch", Batch(5, 2), false},
		{"a repeated batch", Batch(1, 3), false},
		{"the last event again", Batch(3, 1), false},
		{"a repeated batch, finishing", Batch(1, 3), true},
		{"an empty batch past the end, finishing", store.RunLogBatch{First: 5}, true},
	} {
		require.ErrorIs(t, s.AppendRunLog(ctx, "L1", tt.b, tt.finished), store.ErrRunLogGap, tt.name)
		assert.Equal(t, before, getLog(t, s, "alice", "L1"), "%s changes nothing", tt.name)
	}
	checkCovers(t, readLog(t, s, "L1", 0, 1<<20), 0, 3)

	require.NoError(t, s.AppendRunLog(ctx, "L1", store.RunLogBatch{First: 4}, true), "finishing with an empty batch")
	got := getLog(t, s, "alice", "L1")
	assert.True(t, got.Finished)
	assert.Equal(t, int64(3), got.Events)
	checkCovers(t, readLog(t, s, "L1", 0, 1<<20), 0, 3)
	finished := *got
	require.ErrorIs(t, s.AppendRunLog(ctx, "L1", Batch(4, 1), false), store.ErrRunLogGap, "a batch after the end")
	require.ErrorIs(t, s.AppendRunLog(ctx, "L1", store.RunLogBatch{First: 4}, true), store.ErrRunLogGap, "finishing twice")
	assert.Equal(t, finished, *getLog(t, s, "alice", "L1"), "a finished log stays as it is")
	checkCovers(t, readLog(t, s, "L1", 0, 1<<20), 0, 3)

	StartLog(t, s, "L2", "alice", "session/s2", time.Time{})
	require.NoError(t, s.AppendRunLog(ctx, "L2", store.RunLogBatch{First: 1}, true), "a run that sent nothing")
	got = getLog(t, s, "alice", "L2")
	assert.True(t, got.Finished)
	assert.Zero(t, got.Events)
	assert.Empty(t, readLog(t, s, "L2", 0, 1<<20))
}

// testRunLogMissing checks that a log that does not exist, or is another owner's, is ErrNotFound, and that a taken id is ErrExists.
func testRunLogMissing(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	StartLog(t, s, "L1", "alice", "session/s1", time.Time{})
	appendBatches(t, s, "L1", 0, 1)
	for _, id := range []string{"nope", "L", "L1\x00", "\xff", ""} {
		_, err := s.GetRunLog(ctx, "alice", id)
		assert.ErrorIs(t, err, store.ErrNotFound, "GetRunLog %q", id)
		_, err = s.ReadRunLog(ctx, id, 0, 1<<20)
		assert.ErrorIs(t, err, store.ErrNotFound, "ReadRunLog %q", id)
		assert.ErrorIs(t, s.AppendRunLog(ctx, id, Batch(1, 1), false), store.ErrNotFound, "AppendRunLog %q", id)
		assert.ErrorIs(t, s.AppendRunLog(ctx, id, store.RunLogBatch{First: 1}, true), store.ErrNotFound, "AppendRunLog %q finishing", id)
	}
	for _, owner := range []string{"bob", "", "alice\x00", "\xff"} {
		_, err := s.GetRunLog(ctx, owner, "L1")
		assert.ErrorIs(t, err, store.ErrNotFound, "GetRunLog of owner %q", owner)
		_, err = s.LatestRunLog(ctx, owner, "session/s1")
		assert.ErrorIs(t, err, store.ErrNotFound, "LatestRunLog of owner %q", owner)
	}
	_, err := s.LatestRunLog(ctx, "alice", "session/s2")
	assert.ErrorIs(t, err, store.ErrNotFound, "a key without logs")

	dup := &store.RunLog{ID: "L1", Owner: "bob", Key: "session/s9", RunID: "other", Form: "agui"}
	require.ErrorIs(t, s.StartRunLog(ctx, dup), store.ErrExists, "a taken id")
	got := getLog(t, s, "alice", "L1")
	assert.Equal(t, "run-L1", got.RunID, "the first log is untouched")
	assert.Equal(t, int64(1), got.Events)
	_, err = s.LatestRunLog(ctx, "bob", "session/s9")
	assert.ErrorIs(t, err, store.ErrNotFound, "nothing stored for the refused log")
}

// testRunLogLatest checks that LatestRunLog is the log of the key's run that started last, per owner and key.
func testRunLogLatest(t *testing.T, open func(t *testing.T) store.Store) {
	s := open(t)
	latest := func(owner, key string) string {
		t.Helper()
		l, err := s.LatestRunLog(context.Background(), owner, key)
		require.NoError(t, err)
		return l.ID
	}
	StartLog(t, s, "a1", "alice", "session/s1", time.Time{})
	assert.Equal(t, "a1", latest("alice", "session/s1"))
	StartLog(t, s, "a2", "alice", "session/s1", time.Time{})
	StartLog(t, s, "b1", "bob", "session/s1", time.Time{})
	StartLog(t, s, "t1", "alice", "thread/s1", time.Time{})
	assert.Equal(t, "a2", latest("alice", "session/s1"), "the run that started last")
	assert.Equal(t, "b1", latest("bob", "session/s1"), "another owner's key of the same name is another key")
	assert.Equal(t, "t1", latest("alice", "thread/s1"))
	l := getLog(t, s, "alice", "a2")
	got, err := s.LatestRunLog(context.Background(), "alice", "session/s1")
	require.NoError(t, err)
	assert.Equal(t, l, got, "the whole log")

	// By when they started, not when the store was told.
	base := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	StartLog(t, s, "late", "alice", "session/s2", base.Add(2*time.Hour))
	StartLog(t, s, "early", "alice", "session/s2", base.Add(time.Hour))
	assert.Equal(t, "late", latest("alice", "session/s2"), "a log stored after one that started later")
	getLog(t, s, "alice", "early")
	// Of runs started at the same time, the one stored last.
	StartLog(t, s, "same1", "alice", "session/s3", base)
	StartLog(t, s, "same2", "alice", "session/s3", base)
	assert.Equal(t, "same2", latest("alice", "session/s3"))
}

// testRunLogRetention checks that starting a log drops the key's older logs but the one that started last before it, and no other key's.
func testRunLogRetention(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	StartLog(t, s, "other-key", "alice", "session/s2", time.Time{})
	StartLog(t, s, "other-owner", "bob", "session/s1", time.Time{})
	StartLog(t, s, "r1", "alice", "session/s1", time.Time{})
	appendBatches(t, s, "r1", 0, 2)
	StartLog(t, s, "r2", "alice", "session/s1", time.Time{})
	appendBatches(t, s, "r2", 0, 1, 2)
	require.NoError(t, s.AppendRunLog(ctx, "r2", store.RunLogBatch{First: 4}, true))
	checkCovers(t, readLog(t, s, "r1", 0, 1<<20), 0, 2)
	StartLog(t, s, "r3", "alice", "session/s1", time.Time{})

	_, err := s.GetRunLog(ctx, "alice", "r1")
	require.ErrorIs(t, err, store.ErrNotFound, "the run before the last is dropped")
	_, err = s.ReadRunLog(ctx, "r1", 0, 1<<20)
	require.ErrorIs(t, err, store.ErrNotFound, "with its batches")
	require.ErrorIs(t, s.AppendRunLog(ctx, "r1", Batch(3, 1), false), store.ErrNotFound)
	assert.True(t, getLog(t, s, "alice", "r2").Finished, "the last run before it is kept")
	checkCovers(t, readLog(t, s, "r2", 0, 1<<20), 0, 3)
	getLog(t, s, "alice", "r3")
	getLog(t, s, "alice", "other-key")
	getLog(t, s, "bob", "other-owner")

	// Older is by when they started, not when the store was told: k3,
	// stored last, drops k1 but keeps k2 (the last before it) and k4
	// (started after it).
	base := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	for _, k := range []struct {
		id    string
		hours int
	}{{"k1", 0}, {"k4", 3}, {"k2", 1}, {"k3", 2}} {
		StartLog(t, s, k.id, "alice", "thread/t1", base.Add(time.Duration(k.hours)*time.Hour))
	}
	for id, kept := range map[string]bool{"k1": false, "k2": true, "k3": true, "k4": true} {
		_, err := s.GetRunLog(ctx, "alice", id)
		if kept {
			assert.NoError(t, err, "%s is kept", id)
		} else {
			assert.ErrorIs(t, err, store.ErrNotFound, "%s is dropped", id)
		}
	}
}

// testRunLogDelete checks that DeleteRunLogs drops every log of an owner's key, and only those.
func testRunLogDelete(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	for _, id := range []string{"a1", "a2"} {
		StartLog(t, s, id, "alice", "session/s1", time.Time{})
		appendBatches(t, s, id, 0, 2)
	}
	StartLog(t, s, "b1", "bob", "session/s1", time.Time{})
	StartLog(t, s, "a3", "alice", "session/s2", time.Time{})
	require.NoError(t, s.DeleteRunLogs(ctx, "bob", "session/s2"), "a key without logs")
	require.NoError(t, s.DeleteRunLogs(ctx, "alice", "session/s1"))
	for _, id := range []string{"a1", "a2"} {
		_, err := s.GetRunLog(ctx, "alice", id)
		assert.ErrorIs(t, err, store.ErrNotFound, id)
		_, err = s.ReadRunLog(ctx, id, 0, 1<<20)
		assert.ErrorIs(t, err, store.ErrNotFound, id)
	}
	_, err := s.LatestRunLog(ctx, "alice", "session/s1")
	assert.ErrorIs(t, err, store.ErrNotFound)
	getLog(t, s, "bob", "b1")
	getLog(t, s, "alice", "a3")
	require.NoError(t, s.DeleteRunLogs(ctx, "alice", "session/s1"), "twice")

	// A key whose logs are deleted starts again.
	StartLog(t, s, "a4", "alice", "session/s1", time.Time{})
	assert.Empty(t, readLog(t, s, "a4", 0, 1<<20))
	l, err := s.LatestRunLog(ctx, "alice", "session/s1")
	require.NoError(t, err)
	assert.Equal(t, "a4", l.ID)
}

// testRunLogTimes checks Started (the caller's, to the millisecond in UTC, or the store's clock when zero) and Updated (moved by each write that succeeds).
func testRunLogTimes(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	started := time.Date(2026, 7, 1, 14, 30, 45, 123456789, time.FixedZone("CEST", 2*3600))
	StartLog(t, s, "given", "alice", "session/s1", started)
	got := getLog(t, s, "alice", "given")
	assert.True(t, got.Started.Equal(started.Truncate(time.Millisecond)), "Started to the millisecond, got %v", got.Started)
	assert.Equal(t, time.UTC, got.Started.Location())

	before := time.Now()
	l := StartLog(t, s, "zero", "alice", "session/s2", time.Time{})
	require.False(t, l.Started.IsZero(), "StartRunLog sets Started")
	got = getLog(t, s, "alice", "zero")
	assert.True(t, got.Started.Equal(l.Started), "as stored: %v, %v", l.Started, got.Started)
	assert.WithinDuration(t, before, got.Started, time.Minute)
	assert.Equal(t, time.UTC, got.Updated.Location())
	assert.WithinDuration(t, before, got.Updated, time.Minute)

	updated := got.Updated
	for _, step := range []struct {
		name     string
		b        store.RunLogBatch
		finished bool
	}{
		{"a batch", Batch(1, 2), false},
		{"another", Batch(3, 1), false},
		{"finishing with an empty batch", store.RunLogBatch{First: 4}, true},
	} {
		time.Sleep(3 * time.Millisecond) // a later time on every store's clock
		require.NoError(t, s.AppendRunLog(ctx, "zero", step.b, step.finished), step.name)
		got = getLog(t, s, "alice", "zero")
		assert.True(t, got.Updated.After(updated), "%s moves Updated from %v, got %v", step.name, updated, got.Updated)
		assert.True(t, got.Started.Equal(l.Started), "%s keeps Started", step.name)
		updated = got.Updated
	}
	time.Sleep(3 * time.Millisecond)
	require.ErrorIs(t, s.AppendRunLog(ctx, "zero", Batch(4, 1), false), store.ErrRunLogGap)
	assert.True(t, getLog(t, s, "alice", "zero").Updated.Equal(updated), "a refused batch does not move Updated")
}

// testRunLogFrames checks that frames read back as the bytes appended, however the caller and the reader use their slices after.
func testRunLogFrames(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	StartLog(t, s, "L1", "alice", "session/s1", time.Time{})
	odd := []byte("id: L1:1\ndata: \xff\xfe\xfd \x00 \xc3\x28 \xed\xa0\x80 \xf4\x90\x80\x80\n\n")
	buf := append([]byte(nil), odd...)
	require.NoError(t, s.AppendRunLog(ctx, "L1", store.RunLogBatch{First: 1, Count: 1, Frames: buf}, false))
	// The caller reuses its buffer for the next batch.
	buf = append(buf[:0], "id: L1:2\ndata: next\n\n"...)
	for i := len("id: L1:2\ndata: next\n\n"); i < len(odd); i++ {
		buf = append(buf, 'X')
	}
	require.NoError(t, s.AppendRunLog(ctx, "L1", store.RunLogBatch{First: 2, Count: 1, Frames: buf}, false))
	want2 := string(buf)
	for i := range buf {
		buf[i] = '?'
	}

	batches := readLog(t, s, "L1", 0, 1<<20)
	require.Len(t, batches, 2)
	assert.Equal(t, odd, batches[0].Frames, "the bytes appended, byte for byte")
	assert.Equal(t, want2, string(batches[1].Frames))
	// A reader that writes over what it read changes nothing stored.
	for _, b := range batches {
		for i := range b.Frames {
			b.Frames[i] = '!'
		}
	}
	again := readLog(t, s, "L1", 0, 1<<20)
	require.Len(t, again, 2)
	assert.Equal(t, odd, again[0].Frames)
	assert.Equal(t, want2, string(again[1].Frames))
}

// Input is the Input of a run log test: a JSON array of messages, as
// agui2aap stores it, holding bytes that are not UTF-8 and a NUL, so that
// a store that keeps it as text is found out; n makes each its own.
func Input(n int) []byte {
	return fmt.Appendf(nil, "[{\"id\":\"m%d\",\"role\":\"user\",\"content\":\"\xff\xfe\x00 \xc3\x28 \xed\xa0\x80 \xc3\xa9\"}]", n)
}

// testRunLogInput checks that a log's Input reads back from GetRunLog and LatestRunLog as the bytes it started with, however the caller and the readers use their slices after, through its appends; and that a log without one, or with an empty one, reads back nil.
func testRunLogInput(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	latest := func(owner, key string) *store.RunLog {
		t.Helper()
		l, err := s.LatestRunLog(ctx, owner, key)
		require.NoError(t, err, "latest of %s", key)
		return l
	}
	want := Input(1)
	buf := append([]byte(nil), want...)
	l := &store.RunLog{ID: "L1", Owner: "alice", Key: "thread/t1", RunID: "run-L1", Form: "agui", Input: buf}
	require.NoError(t, s.StartRunLog(ctx, l))
	// The caller reuses its buffer.
	for i := range buf {
		buf[i] = '?'
	}
	got := getLog(t, s, "alice", "L1")
	assert.Equal(t, want, got.Input, "GetRunLog: the bytes started with, byte for byte")
	last := latest("alice", "thread/t1")
	assert.Equal(t, want, last.Input, "LatestRunLog: the bytes started with, byte for byte")
	// A reader that writes over what it read changes nothing stored.
	for _, in := range [][]byte{got.Input, last.Input} {
		for i := range in {
			in[i] = '!'
		}
	}
	assert.Equal(t, want, getLog(t, s, "alice", "L1").Input, "GetRunLog after the readers wrote")
	assert.Equal(t, want, latest("alice", "thread/t1").Input, "LatestRunLog after the readers wrote")

	// Appends and finishing leave it as it is.
	appendBatches(t, s, "L1", 0, 2, 1)
	require.NoError(t, s.AppendRunLog(ctx, "L1", store.RunLogBatch{First: 4}, true))
	got = getLog(t, s, "alice", "L1")
	assert.True(t, got.Finished)
	assert.Equal(t, want, got.Input, "a finished log keeps its input")

	// The key's next run has its own; the one before it keeps its.
	StartLogInput(t, s, "L2", "alice", "thread/t1", Input(2))
	assert.Equal(t, Input(2), latest("alice", "thread/t1").Input)
	assert.Equal(t, want, getLog(t, s, "alice", "L1").Input)

	// None: nil, and an empty input too.
	for _, tt := range []struct {
		name  string
		input []byte
	}{{"nil", nil}, {"empty", []byte{}}} {
		key := "thread/" + tt.name
		StartLogInput(t, s, tt.name, "alice", key, tt.input)
		assert.Nil(t, getLog(t, s, "alice", tt.name).Input, "GetRunLog of a log started with %s input", tt.name)
		assert.Nil(t, latest("alice", key).Input, "LatestRunLog of a log started with %s input", tt.name)
	}

	// Every byte value, in an input of a quarter of a megabyte.
	big := make([]byte, 256<<10)
	for i := range big {
		big[i] = byte(i * 7)
	}
	StartLogInput(t, s, "big", "alice", "thread/big", big)
	assert.Equal(t, big, getLog(t, s, "alice", "big").Input)
	assert.Equal(t, big, latest("alice", "thread/big").Input)
}

// testRunLogRace checks that of concurrent appends of the same batch exactly one is stored, and the others are ErrRunLogGap.
func testRunLogRace(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	StartLog(t, s, "L1", "alice", "session/s1", time.Time{})
	const tries = 8
	errs := make([]error, tries)
	var wg sync.WaitGroup
	for i := range tries {
		wg.Go(func() {
			b := store.RunLogBatch{First: 1, Count: 1, Frames: fmt.Appendf(nil, "id: L1:1\ndata: %d\n\n", i)}
			errs[i] = s.AppendRunLog(ctx, "L1", b, false)
		})
	}
	wg.Wait()
	won := -1
	for i, err := range errs {
		if err == nil {
			require.Equal(t, -1, won, "two appends of event 1 stored: %d and %d", won, i)
			won = i
			continue
		}
		require.ErrorIs(t, err, store.ErrRunLogGap, "append %d", i)
	}
	require.NotEqual(t, -1, won, "one append is stored")
	assert.Equal(t, int64(1), getLog(t, s, "alice", "L1").Events)
	batches := readLog(t, s, "L1", 0, 1<<20)
	require.Len(t, batches, 1)
	assert.Equal(t, fmt.Sprintf("id: L1:1\ndata: %d\n\n", won), string(batches[0].Frames))
}

// stopping is StoppingRunLogs, sorted.
func stopping(t *testing.T, s store.RunLogStore) []string {
	t.Helper()
	ids, err := s.StoppingRunLogs(context.Background())
	require.NoError(t, err)
	slices.Sort(ids)
	return ids
}

// testRunLogStop checks the stop marks: a running log of its owner's may
// be asked to stop (twice too), and is among StoppingRunLogs until it
// finishes or is dropped; a finished log, one that is gone and another
// owner's are ErrNotFound, and leave the logs as they were.
func testRunLogStop(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	assert.Empty(t, stopping(t, s), "a store with no logs")
	StartLog(t, s, "L1", "alice", "thread/t1", time.Time{})
	appendBatches(t, s, "L1", 0, 2)
	StartLog(t, s, "L2", "alice", "thread/t2", time.Time{})
	StartLog(t, s, "L3", "bob", "thread/t1", time.Time{})
	require.NoError(t, s.AppendRunLog(ctx, "L3", store.RunLogBatch{First: 1}, true))
	assert.Empty(t, stopping(t, s), "no log was asked to stop")

	for _, tt := range []struct{ name, owner, id string }{
		{"another owner's", "bob", "L1"},
		{"an owner by prefix", "alic", "L1"},
		{"an unknown log", "alice", "nope"},
		{"an empty id", "alice", ""},
		{"bytes that are not UTF-8", "alice", "L1\xff\x00"},
		{"a finished log", "bob", "L3"},
	} {
		assert.ErrorIs(t, s.StopRunLog(ctx, tt.owner, tt.id), store.ErrNotFound, tt.name)
	}
	assert.Empty(t, stopping(t, s), "refused marks leave nothing")

	require.NoError(t, s.StopRunLog(ctx, "alice", "L1"))
	require.NoError(t, s.StopRunLog(ctx, "alice", "L1"), "twice")
	require.NoError(t, s.StopRunLog(ctx, "alice", "L2"))
	assert.Equal(t, []string{"L1", "L2"}, stopping(t, s))
	got := getLog(t, s, "alice", "L1")
	assert.Equal(t, int64(2), got.Events, "the mark changes nothing else")
	assert.False(t, got.Finished)
	appendBatches(t, s, "L1", 2, 1)

	require.NoError(t, s.AppendRunLog(ctx, "L1", store.RunLogBatch{First: 4}, true), "the run ends")
	assert.Equal(t, []string{"L2"}, stopping(t, s), "a finished log is no longer stopping")
	assert.ErrorIs(t, s.StopRunLog(ctx, "alice", "L1"), store.ErrNotFound, "finished since")
	require.NoError(t, s.DeleteRunLogs(ctx, "alice", "thread/t2"))
	assert.Empty(t, stopping(t, s), "a dropped log is gone from the marks")
}
