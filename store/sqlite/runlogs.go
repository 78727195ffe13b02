package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/aapagui/aapagui/store"
)

var _ store.RunLogStore = (*Store)(nil)

// sqliteRunLogColumns are the columns a store.RunLog is read from
// (scanRunLog).
const sqliteRunLogColumns = `id, owner, key, run_id, form, started_at, updated_at, events, finished, input`

// sqliteDropOlderRunLogs drops the logs of owner ?1's key ?2 that are
// older than the log started at ?3 and stored as seq ?4, all but the
// newest of them.
const sqliteDropOlderRunLogs = `DELETE FROM run_logs WHERE seq IN (
	SELECT seq FROM run_logs WHERE owner = ?1 AND key = ?2 AND (started_at, seq) < (?3, ?4)
	ORDER BY started_at DESC, seq DESC LIMIT -1 OFFSET 1)`

// StartRunLog implements store.RunLogStore: the log is inserted and the
// key's older logs dropped in one transaction.
func (s *Store) StartRunLog(ctx context.Context, l *store.RunLog) error {
	now := time.Now().UTC().Truncate(time.Millisecond)
	started := l.Started
	if started.IsZero() {
		started = now
	}
	var input any // NULL: none
	if len(l.Input) > 0 {
		input = l.Input
	}
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := s.txExec(ctx, tx,
			`INSERT INTO run_logs (id, owner, key, run_id, form, started_at, updated_at, input) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
			 ON CONFLICT (id) DO NOTHING`,
			l.ID, l.Owner, l.Key, l.RunID, l.Form, toMillis(started), toMillis(now), input)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return store.ErrExists
		}
		seq, err := res.LastInsertId()
		if err != nil {
			return err
		}
		_, err = s.txExec(ctx, tx, sqliteDropOlderRunLogs, l.Owner, l.Key, toMillis(started), seq)
		return err
	})
	if err != nil {
		return err
	}
	l.Started, l.Updated, l.Events, l.Finished = started, now, 0, false
	return nil
}

// AppendRunLog implements store.RunLogStore in one transaction: the log's
// count moves from b.First-1 only if it is there, and only then is the
// batch stored. It goes on the lane its ctx asks for: behind the writes
// clients wait for when it is store.Progress.
func (s *Store) AppendRunLog(ctx context.Context, id string, b store.RunLogBatch, finished bool) error {
	count := max(b.Count, 0)
	frames := b.Frames
	if frames == nil {
		frames = []byte{} // a blob, not NULL
	}
	return s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := s.txExec(ctx, tx,
			`UPDATE run_logs SET events = events + ?, finished = ?, updated_at = ?
			 WHERE id = ? AND events = ? AND NOT finished`,
			count, finished, toMillis(time.Now()), id, b.First-1)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return s.runLogRefusal(ctx, tx, id)
		}
		if count == 0 {
			return nil
		}
		_, err = s.txExec(ctx, tx, `INSERT INTO run_log_batches (log_id, first, count, frames) VALUES (?, ?, ?, ?)`,
			id, b.First, count, frames)
		return err
	})
}

// runLogRefusal tells why a batch did not go on log id: the log is gone
// (store.ErrNotFound), or the batch does not continue it
// (store.ErrRunLogGap).
func (s *Store) runLogRefusal(ctx context.Context, tx *sql.Tx, id string) error {
	var one int
	err := s.txRow(ctx, tx, `SELECT 1 FROM run_logs WHERE id = ?`, id).Scan(&one)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return store.ErrNotFound
	case err != nil:
		return err
	}
	return store.ErrRunLogGap
}

// GetRunLog implements store.RunLogStore.
func (s *Store) GetRunLog(ctx context.Context, owner, id string) (*store.RunLog, error) {
	row := s.readRow(ctx, `SELECT `+sqliteRunLogColumns+` FROM run_logs WHERE id = ? AND owner = ?`, id, owner)
	return scanRunLog(row, "get run log")
}

// LatestRunLog implements store.RunLogStore: the index on owner, key and
// started_at (which holds seq, the rowid) finds it.
func (s *Store) LatestRunLog(ctx context.Context, owner, key string) (*store.RunLog, error) {
	row := s.readRow(ctx, `SELECT `+sqliteRunLogColumns+` FROM run_logs WHERE owner = ? AND key = ?
		ORDER BY started_at DESC, seq DESC LIMIT 1`, owner, key)
	return scanRunLog(row, "latest run log")
}

// scanRunLog reads a log's row of sqliteRunLogColumns.
func scanRunLog(row *sql.Row, what string) (*store.RunLog, error) {
	var l store.RunLog
	var started, updated int64
	err := row.Scan(&l.ID, &l.Owner, &l.Key, &l.RunID, &l.Form, &started, &updated, &l.Events, &l.Finished, &l.Input)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, store.ErrNotFound
	case err != nil:
		return nil, fmt.Errorf("store: sqlite: %s: %w", what, err)
	}
	l.Started, l.Updated = fromMillis(started), fromMillis(updated)
	if len(l.Input) == 0 {
		l.Input = nil // NULL, or an empty blob another program stored
	}
	return &l, nil
}

// sqliteReadRunLog reads the batches of log ?1 that hold events after ?2,
// in order, and a row of NULLs when there are none; no row at all when
// the log does not exist. One statement, so that a log dropped meanwhile
// is seen whole or not at all. The batches follow each other, so the one
// holding event ?3 (?2+1) is the last one to begin at or before it:
// bounding first by it lets the primary key's index skip the batches
// before it, which a follower of a long run has read already.
const sqliteReadRunLog = `SELECT b.first, b.count, b.frames FROM run_logs l
	LEFT JOIN run_log_batches b ON b.log_id = l.id AND b.first + b.count - 1 > ?2
		AND b.first >= coalesce((SELECT max(first) FROM run_log_batches WHERE log_id = ?1 AND first <= ?3), 0)
	WHERE l.id = ?1 ORDER BY b.first`

// ReadRunLog implements store.RunLogStore. The rows are read one at a
// time, so that the read stops at the byte budget without reading the
// batches after it.
func (s *Store) ReadRunLog(ctx context.Context, id string, after int64, maxBytes int) ([]store.RunLogBatch, error) {
	next := after + 1
	if next < after {
		next = after
	}
	rows, err := s.readRows(ctx, sqliteReadRunLog, id, after, next)
	if err != nil {
		return nil, fmt.Errorf("store: sqlite: read run log: %w", err)
	}
	defer func() { _ = rows.Close() }()
	var out []store.RunLogBatch
	found, size := false, 0
	for rows.Next() {
		found = true
		var first, count sql.NullInt64
		var frames []byte
		if err := rows.Scan(&first, &count, &frames); err != nil {
			return nil, fmt.Errorf("store: sqlite: read run log: %w", err)
		}
		if !first.Valid || (len(out) > 0 && size+len(frames) > maxBytes) {
			break
		}
		out = append(out, store.RunLogBatch{First: first.Int64, Count: int(count.Int64), Frames: frames})
		size += len(frames)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: sqlite: read run log: %w", err)
	}
	if !found {
		return nil, store.ErrNotFound
	}
	return out, nil
}

// DeleteRunLogs implements store.RunLogStore; the batches go with their
// logs (ON DELETE CASCADE).
func (s *Store) DeleteRunLogs(ctx context.Context, owner, key string) error {
	if _, err := s.exec(ctx, `DELETE FROM run_logs WHERE owner = ? AND key = ?`, owner, key); err != nil {
		return fmt.Errorf("store: sqlite: delete run logs: %w", err)
	}
	return nil
}

// StopRunLog implements store.RunLogStore.
func (s *Store) StopRunLog(ctx context.Context, owner, id string) error {
	res, err := s.exec(ctx, `UPDATE run_logs SET stopping = 1 WHERE id = ? AND owner = ? AND NOT finished`, id, owner)
	if err != nil {
		return fmt.Errorf("store: sqlite: stop run log: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("store: sqlite: stop run log: %w", err)
	} else if n == 0 {
		return store.ErrNotFound
	}
	return nil
}

// StoppingRunLogs implements store.RunLogStore: the partial index
// run_logs_stopping holds exactly the rows it reads.
func (s *Store) StoppingRunLogs(ctx context.Context) ([]string, error) {
	rows, err := s.readRows(ctx, `SELECT id FROM run_logs WHERE stopping AND NOT finished`)
	if err != nil {
		return nil, fmt.Errorf("store: sqlite: stopping run logs: %w", err)
	}
	defer func() { _ = rows.Close() }()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("store: sqlite: stopping run logs: %w", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: sqlite: stopping run logs: %w", err)
	}
	return ids, nil
}
