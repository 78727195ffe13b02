package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/aapagui/aapagui/store"
)

// Lock implements store.Store with one conditional UPDATE, atomic across
// processes sharing the file. A lock whose time has come (until <= now) is
// free.
func (s *Store) Lock(ctx context.Context, id, holder string, ttl time.Duration) (bool, time.Duration, error) {
	if holder == "" {
		return false, 0, errors.New("store: lock needs a holder")
	}
	now := time.Now()
	res, err := s.execLock(ctx,
		`UPDATE sessions SET lock_holder = ?, lock_until = ?
		 WHERE id = ? AND (lock_holder IS NULL OR lock_holder = ? OR lock_until <= ?)`,
		holder, toMillis(now.Add(ttl)), id, holder, toMillis(now))
	err = affectedOne(res, err, "lock")
	if !errors.Is(err, store.ErrNotFound) {
		return err == nil, 0, err
	}
	// No row changed: the session is missing or someone else holds it.
	var until sql.NullInt64
	err = s.readRow(ctx, `SELECT lock_until FROM sessions WHERE id = ?`, id).Scan(&until)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, 0, store.ErrNotFound
	case err != nil:
		return false, 0, fmt.Errorf("store: sqlite: lock: %w", err)
	}
	return false, leftUntil(until, now), nil
}

// RenewLock implements store.SessionLocker: holder's lock extended, late
// or not, as long as it is still holder's (nobody else took it), sent on
// the writer's renewal lane, ahead of every other write.
func (s *Store) RenewLock(ctx context.Context, id, holder string, ttl time.Duration) (bool, error) {
	return s.renew(ctx, "renew lock",
		`UPDATE sessions SET lock_until = ? WHERE id = ? AND lock_holder = ?`,
		toMillis(time.Now().Add(ttl)), id, holder)
}

// RenewThreadLock implements store.ThreadLocker: holder's lock extended,
// late or not, as long as it is still holder's (a lock row that is gone
// was released, and is not renewed), sent on the writer's renewal lane,
// ahead of every other write.
func (s *Store) RenewThreadLock(ctx context.Context, owner, id, holder string, ttl time.Duration) (bool, error) {
	return s.renew(ctx, "renew thread lock",
		`UPDATE thread_locks SET until = ? WHERE owner = ? AND id = ? AND holder = ?`,
		toMillis(time.Now().Add(ttl)), owner, id, holder)
}

// renew runs a lock's renewal statement on the renewal lane; it reports
// whether it changed the lock's row.
func (s *Store) renew(ctx context.Context, what, query string, args ...any) (bool, error) {
	var n int64
	err := s.submitWrite(&sqliteWrite{ctx: ctx, done: make(chan error, 1), lock: true, renewal: true, fn: func(ctx context.Context, tx *sql.Tx) error {
		res, err := s.txExec(ctx, tx, query, args...)
		if err == nil {
			n, err = res.RowsAffected()
		}
		return err
	}})
	if err != nil {
		return false, fmt.Errorf("store: sqlite: %s: %w", what, err)
	}
	return n == 1, nil
}

// LockLoadSession implements store.SessionLocker: Lock's conditional UPDATE,
// limited to owner's session, returns the session's row; the history is
// then read under the lock just taken. One write and one read, instead of
// a read before the lock and two after.
func (s *Store) LockLoadSession(ctx context.Context, owner, id, holder string, known int64, ttl time.Duration) (*store.Session, []store.Entry, bool, time.Duration, error) {
	if holder == "" {
		return nil, nil, false, 0, errors.New("store: lock needs a holder")
	}
	now := time.Now()
	out := &store.Session{ID: id, Owner: owner}
	var created int64
	var data []byte
	taken := false
	err := s.submitWrite(&sqliteWrite{ctx: ctx, done: make(chan error, 1), lock: true, fn: func(ctx context.Context, tx *sql.Tx) error {
		err := s.txRow(ctx, tx,
			`UPDATE sessions SET lock_holder = ?, lock_until = ?
			 WHERE id = ? AND owner = ? AND (lock_holder IS NULL OR lock_holder = ? OR lock_until <= ?)
			 RETURNING seq, created_at, data, history_version`,
			holder, toMillis(now.Add(ttl)), id, owner, holder, toMillis(now)).Scan(&out.Seq, &created, &data, &out.HistoryVersion)
		if errors.Is(err, sql.ErrNoRows) {
			return nil // not taken: nothing changed
		}
		taken = err == nil
		return err
	}})
	if err != nil {
		return nil, nil, false, 0, fmt.Errorf("store: sqlite: lock and load session: %w", err)
	}
	if !taken {
		var until sql.NullInt64
		err := s.readRow(ctx, `SELECT lock_until FROM sessions WHERE id = ? AND owner = ?`, id, owner).Scan(&until)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return nil, nil, false, 0, store.ErrNotFound
		case err != nil:
			return nil, nil, false, 0, fmt.Errorf("store: sqlite: lock: %w", err)
		}
		return nil, nil, false, leftUntil(until, now), nil
	}
	out.CreatedAt = fromMillis(created)
	err = store.DecodeSession(out, data)
	var hist []store.Entry
	if err == nil && !out.KnownHistory(known) {
		hist, err = s.History(ctx, id)
	}
	if err != nil {
		_ = s.Unlock(context.WithoutCancel(ctx), id, holder)
		return nil, nil, false, 0, err
	}
	return out, hist, true, 0, nil
}

// leftUntil is the time a lock ending at until (Unix milliseconds) has
// left; a lock released since it was seen taken has a little left, so that
// the caller's Retry-After is never zero.
func leftUntil(until sql.NullInt64, now time.Time) time.Duration {
	if !until.Valid {
		return time.Millisecond
	}
	return max(fromMillis(until.Int64).Sub(now), time.Millisecond)
}

// Unlock implements store.Store; it does nothing unless holder has the lock.
func (s *Store) Unlock(ctx context.Context, id, holder string) error {
	_, err := s.execLock(ctx,
		`UPDATE sessions SET lock_holder = NULL, lock_until = NULL WHERE id = ? AND lock_holder = ?`,
		id, holder)
	if err != nil {
		return fmt.Errorf("store: sqlite: unlock: %w", err)
	}
	return nil
}
