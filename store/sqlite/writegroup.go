package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/aapagui/aapagui/store"
)

// sqliteMaxGroup caps the writes committed in one transaction.
const sqliteMaxGroup = 256

// errClosed reports a write to a closed store.
var errClosed = errors.New("store: closed")

// sqliteWrite is one write waiting for the writer.
type sqliteWrite struct {
	ctx  context.Context // the caller's: done before the write begins, nothing is written
	fn   func(context.Context, *sql.Tx) error
	done chan error
	lock bool // a turn lock's change: committed without an fsync
	// renewal: a lease's heartbeat, sent on the renewals lane, which the
	// writer empties before it takes anything else (see writer).
	renewal bool
}

// write runs fn in the writer's next transaction and returns once that
// transaction has committed (or fn failed and was rolled back to its
// savepoint). fn gets a context that is never cancelled: interrupting a
// statement would roll back the whole group's transaction. A caller whose
// ctx is done before its write begins gets ctx's error and nothing is
// written. Sentinel errors from fn pass through unwrapped; fn returns
// store.ErrNotFound, store.ErrExists, store.ErrLimit, store.ErrRunLogGap
// and store.ErrRecordGap only before it has changed anything.
func (s *Store) write(ctx context.Context, fn func(context.Context, *sql.Tx) error) error {
	err := s.submit(ctx, fn)
	switch {
	case err == nil, errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrExists), errors.Is(err, store.ErrLimit), errors.Is(err, store.ErrRunLogGap),
		errors.Is(err, store.ErrRecordGap), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	}
	return fmt.Errorf("store: sqlite: %w", err)
}

// submit hands fn to the writer and waits for its answer.
func (s *Store) submit(ctx context.Context, fn func(context.Context, *sql.Tx) error) error {
	return s.submitWrite(&sqliteWrite{ctx: ctx, fn: fn, done: make(chan error, 1)})
}

// submitWrite queues w and waits for its answer. A caller whose ctx ends
// while the queue is full leaves without having queued anything; once
// queued, the writer answers a write whose ctx has ended without running
// it, so that a caller bounded by a deadline waits at most for the group
// being committed.
func (s *Store) submitWrite(w *sqliteWrite) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	s.closing.RLock()
	if s.closed {
		s.closing.RUnlock()
		return errClosed
	}
	lane := s.writes
	switch {
	case w.renewal:
		lane = s.renewals
	case store.IsProgress(w.ctx):
		lane = s.progress
	}
	select {
	case lane <- w:
	case <-w.ctx.Done():
		s.closing.RUnlock()
		return w.ctx.Err()
	}
	s.closing.RUnlock()
	return <-w.done
}

// exec runs one statement as a write; callers wrap its error.
func (s *Store) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return s.execWrite(ctx, false, query, args...)
}

// execLock is exec for a statement that changes only a turn lock: it is
// committed with synchronous=NORMAL, without waiting for an fsync (see
// writer).
func (s *Store) execLock(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return s.execWrite(ctx, true, query, args...)
}

func (s *Store) execWrite(ctx context.Context, lock bool, query string, args ...any) (sql.Result, error) {
	var res sql.Result
	err := s.submitWrite(&sqliteWrite{ctx: ctx, done: make(chan error, 1), lock: lock, fn: func(ctx context.Context, tx *sql.Tx) error {
		var err error
		res, err = s.txExec(ctx, tx, query, args...)
		return err
	}})
	return res, err
}

// writer commits the waiting writes in groups until the store is closed.
//
// A group's turn-lock changes are committed in a transaction of their own
// with synchronous=NORMAL: in WAL mode that commit survives a crash of the
// process, and waits for no fsync; a power loss can undo it, until the next
// commit with synchronous=FULL (any other write) syncs the log. A lock is
// not worth an fsync: a lost lock change leaves a lock that runs out within
// its lease, or a holder that takes its lock again at its next heartbeat.
// Every other write waits for its fsync as before.
//
// Lock renewals (a lease's heartbeat) come on a lane of their own: before
// each group the writer takes every renewal waiting there and commits them
// first, in one transaction, so that a heartbeat waits for the group being
// committed at most, never for the writes queued behind it (a burst of
// turn starts, their checkpoints: thousands of writes, each group an
// fsync). Renewals are few and small; nothing else can starve them.
//
// A turn's progress (store.Progress: checkpoints of streaming messages)
// comes on a lane of its own too, behind the other writes: a group takes
// at most sqliteProgressShare of them while other writes wait, so that a
// turn start or end waits behind a bounded group however many turns are
// streaming (2,000 at once on a store in use made the other turns' p99 6×
// what it was without them).
func (s *Store) writer() {
	defer close(s.wdone)
	group := make([]*sqliteWrite, 0, sqliteMaxGroup)
	var renewals, progress, locks, data []*sqliteWrite
	for {
		renewals = take(s.renewals, renewals[:0], sqliteMaxGroup)
		group, progress = group[:0], progress[:0]
		if len(renewals) == 0 {
			select {
			case w := <-s.renewals:
				renewals = take(s.renewals, append(renewals, w), sqliteMaxGroup)
			case w := <-s.progress:
				progress = append(progress, w)
			case w, ok := <-s.writes:
				if !ok {
					s.refuseWaiting()
					return
				}
				group = append(group, w)
			}
		}
		group = take(s.writes, group, sqliteMaxGroup)
		share := sqliteMaxGroup - len(group)
		if len(group) > 0 {
			share = min(share, sqliteProgressShare)
		}
		group = append(group, take(s.progress, progress, share)...)
		locks, data = locks[:0], data[:0]
		for _, w := range group {
			if w.lock {
				locks = append(locks, w)
			} else {
				data = append(data, w)
			}
		}
		for _, part := range []struct {
			writes []*sqliteWrite
			sync   string
		}{{renewals, "NORMAL"}, {locks, "NORMAL"}, {data, "FULL"}} {
			if len(part.writes) > 0 {
				s.commitSync(part.writes, part.sync)
			}
		}
		s.prepareWrites()
	}
}

// sqliteProgressShare is how many store.Progress writes a group takes
// while other writes are waiting.
const sqliteProgressShare = 16

// refuseWaiting answers the renewals and progress writes still waiting
// on their lanes, once the store is closed.
func (s *Store) refuseWaiting() {
	for _, lane := range []chan *sqliteWrite{s.renewals, s.progress} {
		for _, w := range take(lane, nil, sqliteMaxGroup) {
			w.done <- errClosed
		}
	}
}

// take appends to group the writes waiting on lane, up to n in all; a
// closed lane has none.
func take(lane <-chan *sqliteWrite, group []*sqliteWrite, n int) []*sqliteWrite {
	for len(group) < n {
		select {
		case w, ok := <-lane:
			if !ok {
				return group
			}
			group = append(group, w)
		default:
			return group
		}
	}
	return group
}

// commitSync commits group with the given synchronous setting, set on the
// writer's one connection between transactions. A setting that cannot be
// made leaves FULL, the safe one, in place.
func (s *Store) commitSync(group []*sqliteWrite, sync string) {
	if s.sync != sync {
		if _, err := s.w.Exec("PRAGMA synchronous = " + sync); err == nil {
			s.sync = sync
		}
	}
	s.commit(group)
}

// commit runs a group of writes in one IMMEDIATE transaction and answers
// each. A write refused with store.ErrNotFound, store.ErrExists,
// store.ErrRunLogGap or store.ErrRecordGap has changed nothing (every
// write returns those before changing anything), so the others go
// on. A write that fails otherwise (a full disk) may have changed
// something before failing: it is answered with its error, the transaction
// is rolled back, and the others run again in a new one. So a group
// commits whole without the cost of a savepoint per write.
func (s *Store) commit(group []*sqliteWrite) {
	live := group[:0]
	for _, w := range group {
		if err := w.ctx.Err(); err != nil {
			w.done <- err
			continue
		}
		live = append(live, w)
	}
	for len(live) > 0 {
		failed, err := s.tryGroup(live)
		if failed < 0 {
			for _, w := range live {
				if w != nil { // nil: answered by tryGroup
					w.done <- err
				}
			}
			return
		}
		live[failed].done <- err
		live = append(live[:failed], live[failed+1:]...)
	}
}

// tryGroup runs the writes in one transaction. It returns the index of a
// write that failed (the transaction rolled back) with its error, or -1
// with the error of the transaction itself (nil once committed).
func (s *Store) tryGroup(group []*sqliteWrite) (int, error) {
	ctx := context.Background()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return -1, fmt.Errorf("begin: %w", err)
	}
	var refused map[int]error
	for i, w := range group {
		err := w.fn(ctx, tx)
		switch {
		case err == nil:
		case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrExists), errors.Is(err, store.ErrRunLogGap), errors.Is(err, store.ErrRecordGap):
			// A refusal: the write found nothing to change and changed
			// nothing, so the others go on in this transaction.
			if refused == nil {
				refused = map[int]error{}
			}
			refused[i] = err
		default:
			_ = tx.Rollback()
			return i, err
		}
	}
	if err := tx.Commit(); err != nil {
		return -1, fmt.Errorf("commit: %w", err)
	}
	for i, err := range refused {
		group[i].done <- err
		group[i] = nil
	}
	return -1, nil
}
