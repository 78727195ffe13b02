package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aapagui/aapagui/store"
)

// A write that fails after changing something is rolled back alone: the
// writes grouped with it are committed, its own change is not.
func TestSQLiteGroupRollsBackAFailedWrite(t *testing.T) {
	ctx := context.Background()
	boom := errors.New("disk full")
	var wg sync.WaitGroup
	errs := make([]error, 40)
	// Hold the writer so that the writes below queue up and share a group.
	s, release := heldWriter(t)
	for i := range 40 {
		wg.Go(func() {
			errs[i] = s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
				_, err := tx.ExecContext(ctx, `INSERT INTO sessions (id, owner, created_at, data) VALUES (?, '', 0, '{}')`, fmt.Sprint("s", i))
				if err == nil && i%10 == 3 {
					return boom // after its insert
				}
				return err
			})
		})
	}
	time.Sleep(50 * time.Millisecond)
	release()
	wg.Wait()
	for i, err := range errs {
		_, gerr := s.GetSession(ctx, "", fmt.Sprint("s", i))
		if i%10 == 3 {
			if !errors.Is(err, boom) || !errors.Is(gerr, store.ErrNotFound) {
				t.Errorf("write %d: got %v and %v, want the failure and nothing stored", i, err, gerr)
			}
			continue
		}
		if err != nil || gerr != nil {
			t.Errorf("write %d: %v / %v", i, err, gerr)
		}
	}
}

// Turn-lock changes queued with other writes are committed in their own
// transaction with synchronous=NORMAL; every other write still commits
// with synchronous=FULL, whatever it was grouped with.
func TestSQLiteLockWritesSkipTheFsync(t *testing.T) {
	ctx := context.Background()
	s, release := heldWriter(t)
	var wg sync.WaitGroup
	syncs := make([]int, 40)
	errs := make([]error, 40)
	for i := range 40 {
		wg.Go(func() {
			errs[i] = s.submitWrite(&sqliteWrite{ctx: ctx, done: make(chan error, 1), lock: i%2 == 0, fn: func(ctx context.Context, tx *sql.Tx) error {
				return tx.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&syncs[i])
			}})
		})
	}
	time.Sleep(50 * time.Millisecond)
	release()
	wg.Wait()
	for i := range 40 {
		want := 2 // FULL
		if i%2 == 0 {
			want = 1 // NORMAL
		}
		if errs[i] != nil || syncs[i] != want {
			t.Errorf("write %d (lock %v): synchronous %d, error %v; want %d", i, i%2 == 0, syncs[i], errs[i], want)
		}
	}
	// A lone write afterwards is FULL again.
	var sync int
	if err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&sync)
	}); err != nil || sync != 2 {
		t.Errorf("a later write: synchronous %d, error %v; want 2", sync, err)
	}
}

// A lock renewal goes ahead of every write queued before it: with the
// writer held and hundreds of writes waiting (more than the queue holds),
// a renewal submitted last is committed first once the writer goes on.
func TestSQLiteRenewalsGoFirst(t *testing.T) {
	ctx := context.Background()
	s, release := heldWriter(t)
	w := &writeOrder{}
	var wg sync.WaitGroup
	for i := range 3 * sqliteMaxGroup {
		wg.Go(func() { _ = s.write(ctx, w.record(fmt.Sprint("write ", i))) })
	}
	time.Sleep(100 * time.Millisecond)
	wg.Go(func() {
		_ = s.submitWrite(&sqliteWrite{ctx: ctx, done: make(chan error, 1), lock: true, renewal: true, fn: w.record("renewal")})
	})
	time.Sleep(50 * time.Millisecond)
	release()
	wg.Wait()
	if len(w.order) != 3*sqliteMaxGroup+1 || w.order[0] != "renewal" {
		t.Fatalf("the renewal ran at position %d of %d, want 0", slices.Index(w.order, "renewal"), len(w.order))
	}
}

// heldWriter opens a store whose writer is held by a write until release
// is called, so that the writes submitted meanwhile queue up.
func heldWriter(t *testing.T) (s *Store, release func()) {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "store.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	hold := make(chan struct{})
	go func() {
		_ = s.write(context.Background(), func(context.Context, *sql.Tx) error { <-hold; return nil })
	}()
	time.Sleep(20 * time.Millisecond)
	return s, func() { close(hold) }
}

// writeOrder records the order in which writes ran.
type writeOrder struct {
	mu    sync.Mutex
	order []string
}

// record is a write that records its name when it runs.
func (w *writeOrder) record(name string) func(context.Context, *sql.Tx) error {
	return func(context.Context, *sql.Tx) error {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.order = append(w.order, name)
		return nil
	}
}

// A write whose context ends while it waits in the queue (a turn start
// bounded by a deadline) is answered with the context's error, and is not
// run.
func TestSQLiteQueuedWriteLeavesWithItsContext(t *testing.T) {
	s, release := heldWriter(t)
	// Fill the queue, so that the bounded write below cannot even enter it.
	var wg sync.WaitGroup
	for range 2 * sqliteMaxGroup {
		wg.Go(func() { _ = s.write(context.Background(), func(context.Context, *sql.Tx) error { return nil }) })
	}
	time.Sleep(50 * time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	ran := false
	done := make(chan error, 1)
	go func() { done <- s.write(ctx, func(context.Context, *sql.Tx) error { ran = true; return nil }) }()
	time.Sleep(20 * time.Millisecond)
	cancel()
	err := <-done // answered while the writer is still held
	release()
	wg.Wait()
	if !errors.Is(err, context.Canceled) || ran {
		t.Fatalf("got %v (ran %v), want context.Canceled and nothing run", err, ran)
	}
}

// A turn's progress (store.Progress) waits behind the writes a client
// waits for: with a hundred progress writes queued, a turn's start queued
// after them is committed in the next group, among at most
// sqliteProgressShare of them, not after all of them.
func TestSQLiteProgressGoesBehind(t *testing.T) {
	ctx := context.Background()
	s, release := heldWriter(t)
	w := &writeOrder{}
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Go(func() { _ = s.write(store.Progress(ctx), w.record(fmt.Sprint("progress ", i))) })
	}
	time.Sleep(50 * time.Millisecond)
	wg.Go(func() { _ = s.write(ctx, w.record("start")) })
	time.Sleep(50 * time.Millisecond)
	release()
	wg.Wait()
	at := slices.Index(w.order, "start")
	if at < 0 || at > sqliteProgressShare {
		t.Fatalf("the turn's start ran %dth of %d writes, want among the first %d", at+1, len(w.order), sqliteProgressShare+1)
	}
	if len(w.order) != 101 {
		t.Fatalf("%d writes ran, want 101", len(w.order))
	}
}

// A run log's batch goes on the lane of its context: behind the writes
// clients wait for when it is a turn's progress (store.Progress), with
// them otherwise.
func TestSQLiteRunLogAppendsTakeTheirLane(t *testing.T) {
	ctx := context.Background()
	s, release := heldWriter(t)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, ctx := range []context.Context{store.Progress(ctx), ctx} {
		wg.Go(func() {
			errs[i] = s.AppendRunLog(ctx, "nope", store.RunLogBatch{First: 1}, true)
		})
		time.Sleep(20 * time.Millisecond)
		if i == 0 && (len(s.progress) != 1 || len(s.writes) != 0) {
			t.Errorf("a background batch: %d queued as progress, %d as writes; want 1 and 0", len(s.progress), len(s.writes))
		}
		if i == 1 && (len(s.progress) != 1 || len(s.writes) != 1) {
			t.Errorf("a batch a client waits for: %d queued as progress, %d as writes; want 1 and 1", len(s.progress), len(s.writes))
		}
	}
	release()
	wg.Wait()
	for i, err := range errs {
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("batch %d: %v, want store.ErrNotFound", i, err)
		}
	}
}

// A thread save whose record tail leaves a gap is a refusal: grouped with
// other saves, it changes nothing (not even the thread's row) while the
// others are committed.
func TestSQLiteRecordGapIsARefusal(t *testing.T) {
	ctx := context.Background()
	s, release := heldWriter(t)
	var wg sync.WaitGroup
	errs := make([]error, 20)
	for i := range 20 {
		wg.Go(func() {
			from := 0
			if i%4 == 1 {
				from = 1 // past the end of a new thread's record
			}
			th := &store.Thread{Owner: "k", ID: fmt.Sprint("t", i), RecordTail: &store.RecordTail{From: from, Messages: []json.RawMessage{json.RawMessage(`{"n":1}`)}}}
			errs[i] = s.SaveThread(ctx, th, "")
		})
	}
	time.Sleep(50 * time.Millisecond)
	release()
	wg.Wait()
	for i, err := range errs {
		_, gerr := s.GetThread(ctx, "k", fmt.Sprint("t", i))
		rec, rerr := s.ThreadRecord(ctx, "k", fmt.Sprint("t", i))
		if i%4 == 1 {
			if !errors.Is(err, store.ErrRecordGap) || !errors.Is(gerr, store.ErrNotFound) || !errors.Is(rerr, store.ErrNotFound) {
				t.Errorf("save %d: got %v, %v and %v; want the gap and nothing stored", i, err, gerr, rerr)
			}
			continue
		}
		if err != nil || gerr != nil || rerr != nil || len(rec) != 1 {
			t.Errorf("save %d: %v / %v / %v, %d messages", i, err, gerr, rerr, len(rec))
		}
	}
}
