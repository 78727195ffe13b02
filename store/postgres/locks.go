package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aapagui/aapagui/store"
)

// Lock implements store.Store with one conditional UPDATE on the database's
// clock. Concurrent attempts on one session queue on its row; each sees
// the row as the one before left it, so exactly one of them wins.
func (s *Store) Lock(ctx context.Context, id, holder string, ttl time.Duration) (bool, time.Duration, error) {
	if !pgStorable(id) {
		return false, 0, store.ErrNotFound
	}
	if holder == "" {
		return false, 0, errors.New("store: lock needs a holder")
	}
	tag, err := s.locks.Exec(ctx,
		`UPDATE sessions SET lock_holder = $2, lock_until = clock_timestamp() + $3 * interval '1 microsecond'
		 WHERE id = $1 AND (lock_holder IS NULL OR lock_holder = $2 OR lock_until <= clock_timestamp())`,
		id, holder, ttl.Microseconds())
	if err != nil {
		return false, 0, fmt.Errorf("store: postgres: lock: %w", err)
	}
	if tag.RowsAffected() == 1 {
		return true, 0, nil
	}
	var left *float64
	err = s.locks.QueryRow(ctx, `SELECT extract(epoch FROM lock_until - clock_timestamp())::float8 FROM sessions WHERE id = $1`, id).Scan(&left)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return false, 0, store.ErrNotFound
	case err != nil:
		return false, 0, fmt.Errorf("store: postgres: lock: %w", err)
	}
	return false, pgLeft(left), nil
}

// LockLoadSession implements store.SessionLocker: the call joins the next
// group, whose one statement takes its lock, limited to owner's session,
// and reads the session and its history. A caller whose ctx is done before
// its group is sent gets ctx's error, and nothing is locked; once sent,
// the group's answer is the caller's.
func (s *Store) LockLoadSession(ctx context.Context, owner, id, holder string, known int64, ttl time.Duration) (*store.Session, []store.Entry, bool, time.Duration, error) {
	if holder == "" {
		return nil, nil, false, 0, errors.New("store: lock needs a holder")
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, false, 0, err
	}
	if !pgStorable(owner, id) {
		return nil, nil, false, 0, store.ErrNotFound
	}
	call := &pgLockCall{ctx: ctx, owner: owner, id: id, holder: holder, known: known, ttl: ttl, done: make(chan pgLockResult, 1)}
	s.lockGroups.join(call, s.lockGroup)
	r := <-call.done
	return r.sess, r.hist, r.ok, r.left, r.err
}

// lockLoadOne is LockLoadSession for one call: Lock's conditional UPDATE,
// limited to owner's session, returns the session's row, and the same
// statement reads its history unless the caller holds it (c.known), so a
// turn starts with one round trip.
func (s *Store) lockLoadOne(ctx context.Context, c *pgLockCall) (*store.Session, []store.Entry, bool, time.Duration, error) {
	owner, id, holder := c.owner, c.id, c.holder
	if !pgStorable(owner, id) {
		return nil, nil, false, 0, store.ErrNotFound
	}
	out := &store.Session{ID: id, Owner: owner}
	var data string
	var n int
	var snap pgSnapshot
	err := s.locks.QueryRow(ctx,
		`WITH l AS (
			UPDATE sessions SET lock_holder = $3, lock_until = clock_timestamp() + $4 * interval '1 microsecond'
			WHERE id = $1 AND owner = $2 AND (lock_holder IS NULL OR lock_holder = $3 OR lock_until <= clock_timestamp())
			RETURNING id, seq, created_at, data, history_len, history_version, $5::bigint AS known)
		 SELECT l.seq, l.created_at, l.data, l.history_len, l.history_version,
		        `+pgSnapshotHistory+`
		 FROM l`,
		id, owner, holder, c.ttl.Microseconds(), c.known).
		Scan(&out.Seq, &out.CreatedAt, &data, &n, &out.HistoryVersion, &snap.version, &snap.hist)
	if errors.Is(err, pgx.ErrNoRows) {
		var left *float64
		err := s.locks.QueryRow(ctx,
			`SELECT extract(epoch FROM lock_until - clock_timestamp())::float8 FROM sessions WHERE id = $1 AND owner = $2`,
			id, owner).Scan(&left)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return nil, nil, false, 0, store.ErrNotFound
		case err != nil:
			return nil, nil, false, 0, fmt.Errorf("store: postgres: lock: %w", err)
		}
		return nil, nil, false, pgLeft(left), nil
	}
	if err != nil {
		return nil, nil, false, 0, fmt.Errorf("store: postgres: lock and load session: %w", err)
	}
	sess, entries, err := s.lockedSession(ctx, c, out, data, n, snap)
	if err != nil {
		return nil, nil, false, 0, err
	}
	return sess, entries, true, 0, nil
}

// pgSnapshotHistory reads, beside the locking UPDATE l (which returns the
// session's id and the caller's known version), the session's history as
// the statement's snapshot holds it, and that snapshot's history_version;
// no history (NULL) when the row's version, read after the lock's wait,
// is the one the caller knows.
const pgSnapshotHistory = `(SELECT s.history_version FROM sessions s WHERE s.id = l.id),
		CASE WHEN l.known <> 0 AND l.known = l.history_version THEN NULL
		     ELSE coalesce((SELECT array_agg(h.data ORDER BY h.position) FROM history h WHERE h.session_id = l.id), '{}') END`

// pgSnapshot is what pgSnapshotHistory read: the history (nil: the
// caller's is the session's) and its version.
type pgSnapshot struct {
	version *int64
	hist    []string
}

// lockedSession is the session out (ID and Owner set) whose lock c's
// holder has just taken, from the row and the history the locking
// statement read (n is the row's history_len). The history is left out
// when the caller holds it (c.known), and read again under the lock when
// that statement's snapshot predates the history's last write (the
// snapshot's version or length is not the row's, which the UPDATE read
// after waiting for the row). On an error the lock is released.
func (s *Store) lockedSession(ctx context.Context, c *pgLockCall, out *store.Session, data string, n int, snap pgSnapshot) (*store.Session, []store.Entry, error) {
	sess, entries := out, []store.Entry(nil)
	var err error
	switch {
	case out.KnownHistory(c.known):
		out.CreatedAt = out.CreatedAt.UTC()
		err = store.DecodeSession(out, []byte(data))
	case len(snap.hist) != n || snap.version == nil || *snap.version != out.HistoryVersion:
		sess, entries, err = s.loadSession(ctx, out.Owner, out.ID)
	default:
		entries, err = s.decodeSessionRow(ctx, out, data, snap.hist)
	}
	if err != nil {
		_ = s.Unlock(context.WithoutCancel(ctx), out.ID, c.holder)
		return nil, nil, err
	}
	return sess, entries, nil
}

// pgLeft is the time a lock has left, at least a millisecond (a lock
// released since it was seen taken), so that Retry-After is never zero.
func pgLeft(seconds *float64) time.Duration {
	if seconds == nil {
		return time.Millisecond
	}
	return max(time.Duration(*seconds*float64(time.Second)), time.Millisecond)
}

// Unlock implements store.Store; it does nothing unless holder has the lock.
func (s *Store) Unlock(ctx context.Context, id, holder string) error {
	if !pgStorable(id, holder) {
		return nil
	}
	_, err := s.locks.Exec(ctx,
		`UPDATE sessions SET lock_holder = NULL, lock_until = NULL WHERE id = $1 AND lock_holder = $2`, id, holder)
	if err != nil {
		return fmt.Errorf("store: postgres: unlock: %w", err)
	}
	return nil
}
