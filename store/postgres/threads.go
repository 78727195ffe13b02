package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
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
	var recordLen int
	err := s.pool.QueryRow(ctx, `SELECT updated_at, data, record_len FROM threads WHERE owner = $1 AND id = $2`, owner, id).Scan(&updated, &data, &recordLen)
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
	t.RecordLen = recordLen
	return t, nil
}

// SaveThread implements store.ThreadStore.
func (s *Store) SaveThread(ctx context.Context, t *store.Thread) error {
	return s.SaveThreadUnlock(ctx, t, "")
}

// pgSaveThread creates or replaces thread $2 of owner $1 and frees
// holder $5's lock on it; the record and its count stay as they are.
const pgSaveThread = `WITH unlocked AS (DELETE FROM thread_locks WHERE owner = $1 AND id = $2 AND holder = $5)
	INSERT INTO threads (owner, id, updated_at, data) VALUES ($1, $2, clock_timestamp(), $3)
	ON CONFLICT (owner, id) DO UPDATE SET updated_at = CASE WHEN $4 THEN threads.updated_at ELSE excluded.updated_at END, data = excluded.data`

// pgSaveThreadRecord is pgSaveThread with the messages $7 as the record
// from position $6 on, when it is 0: the whole record, of a thread that
// may be new.
const pgSaveThreadRecord = `WITH t AS (
		INSERT INTO threads (owner, id, updated_at, data, record_len) VALUES ($1, $2, clock_timestamp(), $3, $6 + cardinality($7::bytea[]))
		ON CONFLICT (owner, id) DO UPDATE SET updated_at = CASE WHEN $4 THEN threads.updated_at ELSE excluded.updated_at END,
			data = excluded.data, record_len = excluded.record_len
		RETURNING 1),` + pgRecordTail

// pgSaveThreadRecordAfter is pgSaveThreadRecord from a position past 0:
// only a stored thread whose record holds $6 messages at least is saved
// (an INSERT would create a thread with a gap in its record). The UPDATE
// waits for the row's lock, so it checks the count the save before it
// left.
const pgSaveThreadRecordAfter = `WITH t AS (
		UPDATE threads SET updated_at = CASE WHEN $4 THEN updated_at ELSE clock_timestamp() END,
			data = $3, record_len = $6 + cardinality($7::bytea[])
		WHERE owner = $1 AND id = $2 AND record_len >= $6
		RETURNING 1),` + pgRecordTail

// pgRecordTail goes on from a thread's save t: only when t saved it, it
// frees the lock, deletes the messages past the new end and writes the
// messages $7 from position $6 on (an upsert: a DELETE and an INSERT of
// the same key cannot share a statement), and returns a row.
const pgRecordTail = `
	unlocked AS (DELETE FROM thread_locks WHERE owner = $1 AND id = $2 AND holder = $5 AND EXISTS (SELECT FROM t)),
	d AS (
		DELETE FROM thread_records WHERE owner = $1 AND id = $2 AND position >= $6 + cardinality($7::bytea[]) AND EXISTS (SELECT FROM t)),
	i AS (
		INSERT INTO thread_records (owner, id, position, data)
		SELECT $1, $2, $6 + m.ord - 1, m.data FROM t, unnest($7::bytea[]) WITH ORDINALITY AS m (data, ord)
		ON CONFLICT (owner, id, position) DO UPDATE SET data = EXCLUDED.data)
	SELECT 1 FROM t`

// SaveThreadUnlock implements store.ThreadStore in one statement, sent in
// a batch with the writes waiting beside it (writegroup.go): the thread,
// its record's tail and the lock in one commit. A tail is checked against
// the stored record by the statement itself: a save that finds a gap
// saves nothing and returns no row (store.ErrRecordGap).
func (s *Store) SaveThreadUnlock(ctx context.Context, t *store.Thread, holder string) error {
	if !pgStorable(t.Owner, t.ID, holder) {
		return fmt.Errorf("store: postgres: save thread: an owner, thread id or holder PostgreSQL text cannot hold")
	}
	if err := store.CheckRecordTail(t.RecordTail); err != nil {
		return err
	}
	b, err := store.EncodeThread(t)
	if err != nil {
		return err
	}
	key := t.Owner + "\x00" + t.ID
	tail := t.RecordTail
	if tail == nil {
		if _, err := s.exec(ctx, key, pgSaveThread, t.Owner, t.ID, string(b), t.KeepUpdatedAt, holder); err != nil {
			return fmt.Errorf("store: postgres: save thread: %w", err)
		}
		return nil
	}
	q := pgSaveThreadRecord
	switch {
	case tail.From > math.MaxInt32:
		return store.ErrRecordGap // past any record: its count is an integer
	case tail.From > 0:
		q = pgSaveThreadRecordAfter
	}
	msgs := make([][]byte, len(tail.Messages))
	for i, m := range tail.Messages {
		msgs[i] = m
	}
	tag, err := s.exec(ctx, key, q, t.Owner, t.ID, string(b), t.KeepUpdatedAt, holder, tail.From, msgs)
	switch {
	case err != nil:
		return fmt.Errorf("store: postgres: save thread: %w", err)
	case tag.RowsAffected() == 0:
		return store.ErrRecordGap
	}
	t.RecordLen = tail.From + len(msgs)
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
	q, args := `SELECT id, updated_at, data, record_len FROM threads WHERE owner = $1`, []any{owner}
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
		var recordLen int
		if err := scan(&id, &updated, &data, &recordLen); err != nil {
			return nil, err
		}
		t, err := store.DecodeThread(owner, id, updated.UTC(), []byte(data))
		if err != nil {
			return nil, fmt.Errorf("store: postgres: thread %q: %w", id, err)
		}
		t.RecordLen = recordLen
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

// DeleteThread implements store.ThreadStore; the record goes with the
// thread (ON DELETE CASCADE).
func (s *Store) DeleteThread(ctx context.Context, owner, id string) error {
	if !pgStorable(owner, id) {
		return store.ErrNotFound
	}
	tag, err := s.pool.Exec(ctx, `DELETE FROM threads WHERE owner = $1 AND id = $2`, owner, id)
	return pgAffectedOne(tag, err, "delete thread")
}

// ThreadRecord implements store.ThreadStore. One statement reads the
// thread and its messages, so that a thread deleted or saved meanwhile is
// seen whole or not at all.
func (s *Store) ThreadRecord(ctx context.Context, owner, id string) ([]json.RawMessage, error) {
	if !pgStorable(owner, id) {
		return nil, store.ErrNotFound
	}
	rows, err := s.pool.Query(ctx,
		`SELECT r.data FROM threads t LEFT JOIN thread_records r ON r.owner = t.owner AND r.id = t.id
		 WHERE t.owner = $1 AND t.id = $2 ORDER BY r.position`, owner, id)
	if err != nil {
		return nil, fmt.Errorf("store: postgres: thread record: %w", err)
	}
	defer rows.Close()
	raw, err := rowscan.Collect(rows, "store: postgres: thread record", func(scan rowscan.Scan) ([]byte, error) {
		var b []byte // nil: the NULL of a thread without messages
		err := scan(&b)
		return b, err
	})
	if err != nil {
		return nil, err
	}
	return rowscan.Record(raw)
}
