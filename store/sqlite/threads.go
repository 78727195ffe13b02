package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/store/internal/rowscan"
)

// GetThread implements store.ThreadStore.
func (s *Store) GetThread(ctx context.Context, owner, id string) (*store.Thread, error) {
	var updated int64
	var data string
	err := s.readRow(ctx, `SELECT updated_at, data FROM threads WHERE owner = ? AND id = ?`, owner, id).Scan(&updated, &data)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, store.ErrNotFound
	case err != nil:
		return nil, fmt.Errorf("store: sqlite: get thread: %w", err)
	}
	t, err := store.DecodeThread(owner, id, fromMillis(updated), []byte(data))
	if err != nil {
		return nil, fmt.Errorf("store: sqlite: thread %q: %w", id, err)
	}
	return t, nil
}

// SaveThread implements store.ThreadStore.
func (s *Store) SaveThread(ctx context.Context, t *store.Thread) error {
	return s.SaveThreadUnlock(ctx, t, "")
}

// SaveThreadUnlock implements store.ThreadStore in one transaction.
func (s *Store) SaveThreadUnlock(ctx context.Context, t *store.Thread, holder string) error {
	b, err := store.EncodeThread(t)
	if err != nil {
		return err
	}
	err = s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := s.txExec(ctx, tx,
			`INSERT INTO threads (owner, id, updated_at, data) VALUES (?, ?, ?, ?)
			 ON CONFLICT (owner, id) DO UPDATE SET updated_at = CASE WHEN ? THEN threads.updated_at ELSE excluded.updated_at END, data = excluded.data`,
			t.Owner, t.ID, toMillis(time.Now()), string(b), t.KeepUpdatedAt); err != nil {
			return err
		}
		if holder == "" {
			return nil
		}
		_, err := s.txExec(ctx, tx, `DELETE FROM thread_locks WHERE owner = ? AND id = ? AND holder = ?`, t.Owner, t.ID, holder)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: sqlite: save thread: %w", err)
	}
	return nil
}

// LockThread implements store.ThreadStore: one statement, atomic across
// processes sharing the file.
func (s *Store) LockThread(ctx context.Context, owner, id, holder string, ttl time.Duration) (bool, time.Duration, error) {
	if holder == "" {
		return false, 0, errors.New("store: lock needs a holder")
	}
	now := time.Now()
	res, err := s.execLock(ctx,
		`INSERT INTO thread_locks (owner, id, holder, until) VALUES (?, ?, ?, ?)
		 ON CONFLICT (owner, id) DO UPDATE SET holder = excluded.holder, until = excluded.until
		 WHERE thread_locks.holder = excluded.holder OR thread_locks.until <= ?`,
		owner, id, holder, toMillis(now.Add(ttl)), toMillis(now))
	if err != nil {
		return false, 0, fmt.Errorf("store: sqlite: lock thread: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, 0, fmt.Errorf("store: sqlite: lock thread: %w", err)
	}
	if n == 1 {
		return true, 0, nil
	}
	var until sql.NullInt64
	err = s.readRow(ctx, `SELECT until FROM thread_locks WHERE owner = ? AND id = ?`, owner, id).Scan(&until)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return false, 0, fmt.Errorf("store: sqlite: lock thread: %w", err)
	}
	return false, leftUntil(until, now), nil
}

// UnlockThread implements store.ThreadStore.
func (s *Store) UnlockThread(ctx context.Context, owner, id, holder string) error {
	if _, err := s.execLock(ctx, `DELETE FROM thread_locks WHERE owner = ? AND id = ? AND holder = ?`, owner, id, holder); err != nil {
		return fmt.Errorf("store: sqlite: unlock thread: %w", err)
	}
	return nil
}

// ListThreads implements store.ThreadStore.
func (s *Store) ListThreads(ctx context.Context, owner string, after store.ThreadPage, limit int) ([]*store.Thread, error) {
	if limit <= 0 {
		return nil, nil
	}
	q, args := `SELECT id, updated_at, data FROM threads WHERE owner = ?`, []any{owner}
	if !after.UpdatedAt.IsZero() || after.ID != "" {
		ms := toMillis(after.UpdatedAt)
		q += ` AND (updated_at < ? OR (updated_at = ? AND id < ?))`
		args = append(args, ms, ms, after.ID)
	}
	rows, err := s.readRows(ctx, q+` ORDER BY updated_at DESC, id DESC LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("store: sqlite: list threads: %w", err)
	}
	defer rows.Close()
	return rowscan.Collect(rows, "store: sqlite: list threads", func(scan rowscan.Scan) (*store.Thread, error) {
		var id, data string
		var updated int64
		if err := scan(&id, &updated, &data); err != nil {
			return nil, err
		}
		t, err := store.DecodeThread(owner, id, fromMillis(updated), []byte(data))
		if err != nil {
			return nil, fmt.Errorf("store: sqlite: thread %q: %w", id, err)
		}
		return t, nil
	})
}

// CountThreads implements store.ThreadStore (the primary key's index serves it).
func (s *Store) CountThreads(ctx context.Context, owner string) (int, error) {
	var n int
	if err := s.readRow(ctx, `SELECT count(*) FROM threads WHERE owner = ?`, owner).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: sqlite: count threads: %w", err)
	}
	return n, nil
}

// DeleteThread implements store.ThreadStore.
func (s *Store) DeleteThread(ctx context.Context, owner, id string) error {
	res, err := s.exec(ctx, `DELETE FROM threads WHERE owner = ? AND id = ?`, owner, id)
	return affectedOne(res, err, "delete thread")
}
