package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/store/internal/rowscan"
)

// sqliteThreadColumns are what a thread is read from (threads t): its
// row, and its delivered ids in order as a JSON array, read by the same
// statement, so that a save meanwhile is seen whole or not at all.
const sqliteThreadColumns = `t.updated_at, t.data, t.record_len,
	(SELECT json_group_array(d.message_id ORDER BY d.position) FROM thread_delivered d WHERE d.owner = t.owner AND d.id = t.id)`

// threadRow is a thread as sqliteThreadColumns read it.
type threadRow struct {
	updated   int64
	data      string
	recordLen int
	delivered string // a JSON array
}

// dest is where a scan puts sqliteThreadColumns.
func (r *threadRow) dest() []any { return []any{&r.updated, &r.data, &r.recordLen, &r.delivered} }

// thread is owner's thread id of the row.
func (r *threadRow) thread(owner, id string) (*store.Thread, error) {
	t, err := store.DecodeThread(owner, id, fromMillis(r.updated), []byte(r.data))
	if err == nil && r.delivered != "[]" {
		err = json.Unmarshal([]byte(r.delivered), &t.Delivered)
	}
	if err != nil {
		return nil, fmt.Errorf("store: sqlite: thread %q: %w", id, err)
	}
	t.RecordLen = r.recordLen
	return t, nil
}

// GetThread implements store.ThreadStore.
func (s *Store) GetThread(ctx context.Context, owner, id string) (*store.Thread, error) {
	var row threadRow
	err := s.readRow(ctx, `SELECT `+sqliteThreadColumns+` FROM threads t WHERE t.owner = ? AND t.id = ?`, owner, id).Scan(row.dest()...)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, store.ErrNotFound
	case err != nil:
		return nil, fmt.Errorf("store: sqlite: get thread: %w", err)
	}
	return row.thread(owner, id)
}

// sqliteSaveThread creates or replaces thread ?2 of owner ?1, its record
// counted as ?6 messages if ?7 (a save with a tail) and as it was
// otherwise: a thread read before another save does not bring back the
// count it had then. Its delivered ids are counted as ?8.
const sqliteSaveThread = `INSERT INTO threads (owner, id, updated_at, data, record_len, delivered_len) VALUES (?1, ?2, ?3, ?4, ?6, ?8)
	ON CONFLICT (owner, id) DO UPDATE SET updated_at = CASE WHEN ?5 THEN threads.updated_at ELSE excluded.updated_at END,
		data = excluded.data, record_len = CASE WHEN ?7 THEN excluded.record_len ELSE threads.record_len END,
		delivered_len = excluded.delivered_len`

// SaveThread implements store.ThreadStore in one transaction: the
// tail is checked against the stored record first, so that a gap is a
// refusal that changes nothing (and leaves the rest of its group alone),
// then the thread, its record, its delivered ids from DeliveredFrom on
// and the lock are written.
func (s *Store) SaveThread(ctx context.Context, t *store.Thread, holder string) error {
	if err := store.CheckRecordTail(t.RecordTail); err != nil {
		return err
	}
	b, err := store.EncodeThreadApart(t)
	if err != nil {
		return err
	}
	tail, recordLen := t.RecordTail, 0
	if tail != nil {
		recordLen = tail.From + len(tail.Messages)
	}
	err = s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		stored, err := s.storedThread(ctx, tx, t.Owner, t.ID)
		if err != nil {
			return err
		}
		if tail != nil && tail.From > stored.record {
			return store.ErrRecordGap
		}
		if _, err := s.txExec(ctx, tx, sqliteSaveThread,
			t.Owner, t.ID, toMillis(time.Now()), string(b), t.KeepUpdatedAt, recordLen, tail != nil, len(t.Delivered)); err != nil {
			return err
		}
		if err := s.writeRecordTail(ctx, tx, t.Owner, t.ID, tail, stored.record); err != nil {
			return err
		}
		if err := s.writeDelivered(ctx, tx, t, stored.delivered); err != nil {
			return err
		}
		if holder == "" {
			return nil
		}
		_, err = s.txExec(ctx, tx, `DELETE FROM thread_locks WHERE owner = ? AND id = ? AND holder = ?`, t.Owner, t.ID, holder)
		return err
	})
	switch {
	case errors.Is(err, store.ErrRecordGap):
		return err
	case err != nil:
		return fmt.Errorf("store: sqlite: save thread: %w", err)
	}
	if tail != nil {
		t.RecordLen = recordLen
	}
	t.DeliveredFrom = 0
	return nil
}

// storedCounts are how many messages a thread's record holds and how many
// delivered ids it has, as stored (0 and 0 for a thread not stored).
type storedCounts struct{ record, delivered int }

func (s *Store) storedThread(ctx context.Context, tx *sql.Tx, owner, id string) (storedCounts, error) {
	var n storedCounts
	err := s.txRow(ctx, tx, `SELECT record_len, delivered_len FROM threads WHERE owner = ? AND id = ?`, owner, id).Scan(&n.record, &n.delivered)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return n, err
	}
	return n, nil
}

// writeDelivered makes t's delivered ids from t.DeliveredFrom on the
// thread's, stored holding stored ids: those past the first
// DeliveredFrom are deleted, unless there are none (a run's append), and
// the ids from there written. A DeliveredFrom past the stored ids writes
// them all.
func (s *Store) writeDelivered(ctx context.Context, tx *sql.Tx, t *store.Thread, stored int) error {
	from := min(t.DeliveredFrom, len(t.Delivered))
	if from > stored || from < 0 {
		from = 0
	}
	if from < stored {
		if _, err := s.txExec(ctx, tx, `DELETE FROM thread_delivered WHERE owner = ? AND id = ? AND position >= ?`,
			t.Owner, t.ID, from); err != nil {
			return err
		}
	}
	for i := from; i < len(t.Delivered); i++ {
		if _, err := s.txExec(ctx, tx, `INSERT INTO thread_delivered (owner, id, position, message_id) VALUES (?, ?, ?, ?)`,
			t.Owner, t.ID, i, t.Delivered[i]); err != nil {
			return err
		}
	}
	return nil
}

// writeRecordTail makes tail's messages the thread's record from
// tail.From on, the record holding stored messages before: those from
// tail.From on are deleted first, unless there are none (a run's append).
func (s *Store) writeRecordTail(ctx context.Context, tx *sql.Tx, owner, id string, tail *store.RecordTail, stored int) error {
	if tail == nil {
		return nil
	}
	if tail.From < stored {
		if _, err := s.txExec(ctx, tx, `DELETE FROM thread_records WHERE owner = ? AND id = ? AND position >= ?`,
			owner, id, tail.From); err != nil {
			return err
		}
	}
	for i, m := range tail.Messages {
		if _, err := s.txExec(ctx, tx, `INSERT INTO thread_records (owner, id, position, data) VALUES (?, ?, ?, ?)`,
			owner, id, tail.From+i, []byte(m)); err != nil {
			return err
		}
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
	q, args := `SELECT t.id, `+sqliteThreadColumns+` FROM threads t WHERE t.owner = ?`, []any{owner}
	if !after.UpdatedAt.IsZero() || after.ID != "" {
		ms := toMillis(after.UpdatedAt)
		q += ` AND (t.updated_at, t.id) < (?, ?)` // as threads_owner_updated orders them
		args = append(args, ms, after.ID)
	}
	rows, err := s.readRows(ctx, q+` ORDER BY t.updated_at DESC, t.id DESC LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("store: sqlite: list threads: %w", err)
	}
	defer rows.Close()
	return rowscan.Collect(rows, "store: sqlite: list threads", func(scan rowscan.Scan) (*store.Thread, error) {
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
	var n int
	if err := s.readRow(ctx, `SELECT count(*) FROM threads WHERE owner = ?`, owner).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: sqlite: count threads: %w", err)
	}
	return n, nil
}

// DeleteThread implements store.ThreadStore; the record goes with the
// thread (ON DELETE CASCADE).
func (s *Store) DeleteThread(ctx context.Context, owner, id string) error {
	res, err := s.exec(ctx, `DELETE FROM threads WHERE owner = ? AND id = ?`, owner, id)
	return affectedOne(res, err, "delete thread")
}

// ThreadRecord implements store.ThreadStore. One statement reads the
// thread and its messages, so that a thread deleted or saved meanwhile is
// seen whole or not at all.
func (s *Store) ThreadRecord(ctx context.Context, owner, id string) ([]json.RawMessage, error) {
	rows, err := s.readRows(ctx, `SELECT r.data FROM threads t LEFT JOIN thread_records r ON r.owner = t.owner AND r.id = t.id
		WHERE t.owner = ? AND t.id = ? ORDER BY r.position`, owner, id)
	if err != nil {
		return nil, fmt.Errorf("store: sqlite: thread record: %w", err)
	}
	defer func() { _ = rows.Close() }()
	raw, err := rowscan.Collect(rows, "store: sqlite: thread record", func(scan rowscan.Scan) ([]byte, error) {
		var b []byte // nil: the NULL of a thread without messages
		err := scan(&b)
		return b, err
	})
	if err != nil {
		return nil, err
	}
	return rowscan.Record(raw, s.recordParts(ctx, owner, id))
}
