package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/store/internal/rowscan"
)

// GetThread implements store.ThreadStore.
func (s *Store) GetThread(ctx context.Context, owner, id string) (*store.Thread, error) {
	if !pgStorable(owner, id) {
		return nil, store.ErrNotFound
	}
	var updated time.Time
	var data string
	err := s.pool.QueryRow(ctx, `SELECT updated_at, data FROM threads WHERE owner = $1 AND id = $2`, owner, id).Scan(&updated, &data)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, store.ErrNotFound
	case err != nil:
		return nil, fmt.Errorf("store: postgres: get thread: %w", err)
	}
	t, err := store.DecodeThread(owner, id, updated.UTC(), []byte(data))
	if err != nil {
		return nil, fmt.Errorf("store: postgres: thread %q: %w", id, err)
	}
	return t, nil
}

// SaveThread implements store.ThreadStore.
func (s *Store) SaveThread(ctx context.Context, t *store.Thread) error {
	return s.SaveThreadUnlock(ctx, t, "")
}

// SaveThreadUnlock implements store.ThreadStore in one statement: one round
// trip and one commit.
func (s *Store) SaveThreadUnlock(ctx context.Context, t *store.Thread, holder string) error {
	if !pgStorable(t.Owner, t.ID, holder) {
		return fmt.Errorf("store: postgres: save thread: an owner, thread id or holder PostgreSQL text cannot hold")
	}
	b, err := store.EncodeThread(t)
	if err != nil {
		return err
	}
	_, err = s.exec(ctx, t.Owner+"\x00"+t.ID,
		`WITH unlocked AS (DELETE FROM thread_locks WHERE owner = $1 AND id = $2 AND holder = $5)
		 INSERT INTO threads (owner, id, updated_at, data) VALUES ($1, $2, clock_timestamp(), $3)
		 ON CONFLICT (owner, id) DO UPDATE SET updated_at = CASE WHEN $4 THEN threads.updated_at ELSE excluded.updated_at END, data = excluded.data`,
		t.Owner, t.ID, string(b), t.KeepUpdatedAt, holder)
	if err != nil {
		return fmt.Errorf("store: postgres: save thread: %w", err)
	}
	return nil
}

// LockThread implements store.ThreadStore: one statement on the database's
// clock, atomic across replicas.
func (s *Store) LockThread(ctx context.Context, owner, id, holder string, ttl time.Duration) (bool, time.Duration, error) {
	if !pgStorable(owner, id) {
		return false, 0, store.ErrNotFound
	}
	if holder == "" {
		return false, 0, errors.New("store: lock needs a holder")
	}
	tag, err := s.locks.Exec(ctx,
		`INSERT INTO thread_locks (owner, id, holder, until) VALUES ($1, $2, $3, clock_timestamp() + $4 * interval '1 microsecond')
		 ON CONFLICT (owner, id) DO UPDATE SET holder = excluded.holder, until = excluded.until
		 WHERE thread_locks.holder = excluded.holder OR thread_locks.until <= clock_timestamp()`,
		owner, id, holder, ttl.Microseconds())
	if err != nil {
		return false, 0, fmt.Errorf("store: postgres: lock thread: %w", err)
	}
	if tag.RowsAffected() == 1 {
		return true, 0, nil
	}
	var left *float64
	err = s.locks.QueryRow(ctx, `SELECT extract(epoch FROM until - clock_timestamp())::float8 FROM thread_locks WHERE owner = $1 AND id = $2`, owner, id).Scan(&left)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return false, 0, fmt.Errorf("store: postgres: lock thread: %w", err)
	}
	return false, pgLeft(left), nil
}

// UnlockThread implements store.ThreadStore.
func (s *Store) UnlockThread(ctx context.Context, owner, id, holder string) error {
	if !pgStorable(owner, id, holder) {
		return nil
	}
	if _, err := s.locks.Exec(ctx, `DELETE FROM thread_locks WHERE owner = $1 AND id = $2 AND holder = $3`, owner, id, holder); err != nil {
		return fmt.Errorf("store: postgres: unlock thread: %w", err)
	}
	return nil
}

// ListThreads implements store.ThreadStore.
func (s *Store) ListThreads(ctx context.Context, owner string, after store.ThreadPage, limit int) ([]*store.Thread, error) {
	if limit <= 0 {
		return nil, nil
	}
	q, args := `SELECT id, updated_at, data FROM threads WHERE owner = $1`, []any{owner}
	if !after.UpdatedAt.IsZero() || after.ID != "" {
		q += ` AND (updated_at, id) < ($2, $3)`
		args = append(args, after.UpdatedAt, after.ID)
	}
	args = append(args, limit)
	rows, err := s.pool.Query(ctx, q+fmt.Sprintf(` ORDER BY updated_at DESC, id DESC LIMIT $%d`, len(args)), args...)
	if err != nil {
		return nil, fmt.Errorf("store: postgres: list threads: %w", err)
	}
	defer rows.Close()
	return rowscan.Collect(rows, "store: postgres: list threads", func(scan rowscan.Scan) (*store.Thread, error) {
		var id, data string
		var updated time.Time
		if err := scan(&id, &updated, &data); err != nil {
			return nil, err
		}
		t, err := store.DecodeThread(owner, id, updated.UTC(), []byte(data))
		if err != nil {
			return nil, fmt.Errorf("store: postgres: thread %q: %w", id, err)
		}
		return t, nil
	})
}

// CountThreads implements store.ThreadStore (the primary key's index serves it).
func (s *Store) CountThreads(ctx context.Context, owner string) (int, error) {
	if !pgStorable(owner) {
		return 0, nil
	}
	var n int64
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM threads WHERE owner = $1`, owner).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: postgres: count threads: %w", err)
	}
	return int(n), nil
}

// DeleteThread implements store.ThreadStore.
func (s *Store) DeleteThread(ctx context.Context, owner, id string) error {
	if !pgStorable(owner, id) {
		return store.ErrNotFound
	}
	tag, err := s.pool.Exec(ctx, `DELETE FROM threads WHERE owner = $1 AND id = $2`, owner, id)
	return pgAffectedOne(tag, err, "delete thread")
}
