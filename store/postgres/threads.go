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

// pgThreadColumns are what a thread is read from (threads t): its row,
// and its delivered ids in order, read by the same statement, so that a
// save meanwhile is seen whole or not at all.
const pgThreadColumns = `t.updated_at, t.data, t.record_len,
	ARRAY(SELECT d.message_id FROM thread_delivered d WHERE d.owner = t.owner AND d.id = t.id ORDER BY d.position)`

// threadRow is a thread as pgThreadColumns read it.
type threadRow struct {
	updated   time.Time
	data      string
	recordLen int
	delivered [][]byte
}

// dest is where a scan puts pgThreadColumns.
func (r *threadRow) dest() []any { return []any{&r.updated, &r.data, &r.recordLen, &r.delivered} }

// thread is owner's thread id of the row.
func (r *threadRow) thread(owner, id string) (*store.Thread, error) {
	t, err := store.DecodeThread(owner, id, r.updated.UTC(), []byte(r.data))
	if err != nil {
		return nil, fmt.Errorf("store: postgres: thread %q: %w", id, err)
	}
	if len(r.delivered) > 0 {
		t.Delivered = make([]string, len(r.delivered))
		for i, b := range r.delivered {
			t.Delivered[i] = string(b)
		}
	}
	t.RecordLen = r.recordLen
	return t, nil
}

// GetThread implements store.ThreadStore.
func (s *Store) GetThread(ctx context.Context, owner, id string) (*store.Thread, error) {
	if !pgStorable(owner, id) {
		return nil, store.ErrNotFound
	}
	var row threadRow
	err := s.pool.QueryRow(ctx, `SELECT `+pgThreadColumns+` FROM threads t WHERE t.owner = $1 AND t.id = $2`, owner, id).Scan(row.dest()...)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, store.ErrNotFound
	case err != nil:
		return nil, fmt.Errorf("store: postgres: get thread: %w", err)
	}
	return row.thread(owner, id)
}

// pgSaveThreadUpsert creates or replaces thread $2 of owner $1: its
// record counted as $6 + the messages $7 when $10 (a save with a tail,
// from 0) and as it was otherwise, its delivered ids counted as $8 + the
// ids $9 (from 0). pgSaveThreadParts go on from it.
const pgSaveThreadUpsert = `WITH t AS (
		INSERT INTO threads (owner, id, updated_at, data, record_len, delivered_len)
		VALUES ($1, $2, clock_timestamp(), $3, $6 + cardinality($7::bytea[]), $8 + cardinality($9::bytea[]))
		ON CONFLICT (owner, id) DO UPDATE SET updated_at = CASE WHEN $4 THEN threads.updated_at ELSE excluded.updated_at END,
			data = excluded.data, record_len = CASE WHEN $10 THEN excluded.record_len ELSE threads.record_len END,
			delivered_len = excluded.delivered_len
		RETURNING 1),` + pgSaveThreadParts

// pgSaveThreadAfter is pgSaveThreadUpsert for a save that goes on from
// what is stored (a record's tail from $6 past 0, delivered ids from $8
// past 0): only a stored thread that holds them is saved (an INSERT
// would leave a gap). The UPDATE waits for the row's lock, so it checks
// the counts the save before it left.
const pgSaveThreadAfter = `WITH t AS (
		UPDATE threads SET updated_at = CASE WHEN $4 THEN updated_at ELSE clock_timestamp() END, data = $3,
			record_len = CASE WHEN $10 THEN $6 + cardinality($7::bytea[]) ELSE record_len END,
			delivered_len = $8 + cardinality($9::bytea[])
		WHERE owner = $1 AND id = $2 AND (NOT $10 OR record_len >= $6) AND delivered_len >= $8
		RETURNING 1),` + pgSaveThreadParts

// pgSaveThreadParts go on from a thread's save t: only when t saved it,
// they free holder $5's lock, delete the record's messages past its new
// end and write the messages $7 from position $6 on (when $10), and do
// the same with the delivered ids $9 from position $8 (upserts: a DELETE
// and an INSERT of the same key cannot share a statement); one row is
// returned.
const pgSaveThreadParts = `
	unlocked AS (DELETE FROM thread_locks WHERE owner = $1 AND id = $2 AND holder = $5 AND EXISTS (SELECT FROM t)),
	d AS (
		DELETE FROM thread_records WHERE $10 AND owner = $1 AND id = $2 AND position >= $6 + cardinality($7::bytea[]) AND EXISTS (SELECT FROM t)),
	i AS (
		INSERT INTO thread_records (owner, id, position, data)
		SELECT $1, $2, $6 + m.ord - 1, m.data FROM t, unnest($7::bytea[]) WITH ORDINALITY AS m (data, ord) WHERE $10
		ON CONFLICT (owner, id, position) DO UPDATE SET data = EXCLUDED.data),
	dd AS (
		DELETE FROM thread_delivered WHERE owner = $1 AND id = $2 AND position >= $8 + cardinality($9::bytea[]) AND EXISTS (SELECT FROM t)),
	di AS (
		INSERT INTO thread_delivered (owner, id, position, message_id)
		SELECT $1, $2, $8 + m.ord - 1, m.id FROM t, unnest($9::bytea[]) WITH ORDINALITY AS m (id, ord)
		ON CONFLICT (owner, id, position) DO UPDATE SET message_id = EXCLUDED.message_id)
	SELECT 1 FROM t`

// SaveThread implements store.ThreadStore in one statement, sent in
// a batch with the writes waiting beside it (writegroup.go): the thread,
// its record's tail, its delivered ids from DeliveredFrom on and the lock
// in one commit. A tail is checked against the stored record by the
// statement itself: a save that finds a gap saves nothing and returns no
// row (store.ErrRecordGap). A DeliveredFrom past the stored ids is one
// too, and the save is made again with every id.
func (s *Store) SaveThread(ctx context.Context, t *store.Thread, holder string) error {
	if !pgStorable(t.Owner, t.ID, holder) {
		return fmt.Errorf("store: postgres: save thread: an owner, thread id or holder PostgreSQL text cannot hold")
	}
	if err := store.CheckRecordTail(t.RecordTail); err != nil {
		return err
	}
	b, err := store.EncodeThreadApart(t)
	if err != nil {
		return err
	}
	tail := t.RecordTail
	from, msgs := 0, [][]byte{}
	if tail != nil {
		if tail.From > math.MaxInt32 {
			return store.ErrRecordGap // past any record: its count is an integer
		}
		from = tail.From
		for _, m := range tail.Messages {
			msgs = append(msgs, m)
		}
	}
	// save writes the thread with its ids from delivered on; false: the
	// statement found a gap and saved nothing.
	save := func(delivered int) (bool, error) {
		q := pgSaveThreadUpsert
		if from > 0 || delivered > 0 {
			q = pgSaveThreadAfter
		}
		ids := make([][]byte, 0, len(t.Delivered)-delivered)
		for _, id := range t.Delivered[delivered:] {
			ids = append(ids, []byte(id))
		}
		tag, err := s.exec(ctx, t.Owner+"\x00"+t.ID, q, t.Owner, t.ID, string(b), t.KeepUpdatedAt, holder, from, msgs, delivered, ids, tail != nil)
		return tag.RowsAffected() > 0, err
	}
	delivered := min(max(t.DeliveredFrom, 0), len(t.Delivered), math.MaxInt32)
	saved, err := save(delivered)
	if err == nil && !saved && delivered > 0 {
		saved, err = save(0) // DeliveredFrom past the stored ids, or a gap in the record: once more with every id
	}
	switch {
	case err != nil:
		return fmt.Errorf("store: postgres: save thread: %w", err)
	case !saved:
		return store.ErrRecordGap
	}
	if tail != nil {
		t.RecordLen = from + len(msgs)
	}
	t.DeliveredFrom = 0
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
	q, args := `SELECT t.id, `+pgThreadColumns+` FROM threads t WHERE t.owner = $1`, []any{owner}
	if !after.UpdatedAt.IsZero() || after.ID != "" {
		q += ` AND (t.updated_at, t.id) < ($2, $3)`
		args = append(args, after.UpdatedAt, after.ID)
	}
	args = append(args, limit)
	rows, err := s.pool.Query(ctx, q+fmt.Sprintf(` ORDER BY t.updated_at DESC, t.id DESC LIMIT $%d`, len(args)), args...)
	if err != nil {
		return nil, fmt.Errorf("store: postgres: list threads: %w", err)
	}
	defer rows.Close()
	return rowscan.Collect(rows, "store: postgres: list threads", func(scan rowscan.Scan) (*store.Thread, error) {
		var id string
		var row threadRow
		if err := scan(append([]any{&id}, row.dest()...)...); err != nil {
			return nil, err
		}
		return row.thread(owner, id)
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
	return rowscan.Record(raw, s.recordParts(ctx, owner, id))
}
