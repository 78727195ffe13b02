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

var _ store.RunLogStore = (*Store)(nil)

// pgRunLogColumns are the columns a store.RunLog is read from
// (pgScanRunLog).
const pgRunLogColumns = `id, owner, key, run_id, form, started_at, updated_at, events, finished, input`

// pgNow is the database's clock to the millisecond, as the other stores
// keep their times.
const pgNow = `date_trunc('milliseconds', clock_timestamp())`

// pgStartRunLog inserts log $1 of owner $2's key $3, started at $6, with
// input $7, and drops the key's logs older than it but the newest of them. The DELETE
// sees the table as it was before the INSERT, so every log it sees was
// stored before the new one: of those started at the same time, they are
// the older.
const pgStartRunLog = `WITH n AS (
		INSERT INTO run_logs (id, owner, key, run_id, form, started_at, updated_at, input) VALUES ($1, $2, $3, $4, $5, $6, ` + pgNow + `, $7)
		ON CONFLICT (id) DO NOTHING RETURNING updated_at),
	d AS (
		DELETE FROM run_logs WHERE id IN (
			SELECT id FROM run_logs WHERE owner = $2 AND key = $3 AND started_at <= $6 AND EXISTS (SELECT FROM n)
			ORDER BY started_at DESC, seq DESC OFFSET 1))
	SELECT updated_at FROM n`

// StartRunLog implements store.RunLogStore in one statement: the log is
// inserted and the key's older logs dropped in one commit. It is sent on
// its own, as CreateSession is: it is one per run, and the rows it drops
// are not the ones a batch would order it by.
func (s *Store) StartRunLog(ctx context.Context, l *store.RunLog) error {
	if !pgStorable(l.ID, l.Owner, l.Key, l.RunID, l.Form) {
		return errors.New("store: postgres: start run log: an id, owner, key, run id or form PostgreSQL text cannot hold")
	}
	started := l.Started
	if started.IsZero() {
		started = time.Now().UTC().Truncate(time.Millisecond)
	}
	var input []byte // NULL: none
	if len(l.Input) > 0 {
		input = l.Input
	}
	var updated time.Time
	err := s.pool.QueryRow(ctx, pgStartRunLog, l.ID, l.Owner, l.Key, l.RunID, l.Form, started.UTC().Truncate(time.Millisecond), input).Scan(&updated)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.ErrExists
	}
	if err != nil {
		return fmt.Errorf("store: postgres: start run log: %w", err)
	}
	l.Started, l.Updated, l.Events, l.Finished = started, updated.UTC(), 0, false
	return nil
}

// pgAppendRunLog adds the batch of $3 events from $2 on, frames $5, to
// log $1 and marks it finished if $4, only if the log holds $2-1 events
// and is not finished; it returns a row when it did. The UPDATE waits for
// the row's lock, so of two appends of one batch the second sees the
// first's count and adds nothing.
const pgAppendRunLog = `WITH l AS (
		UPDATE run_logs SET events = events + $3::integer, finished = $4, updated_at = ` + pgNow + `
		WHERE id = $1 AND events = $2::bigint - 1 AND NOT finished
		RETURNING 1),
	b AS (
		INSERT INTO run_log_batches (log_id, first, count, frames)
		SELECT $1, $2, $3, $5 FROM l WHERE $3 > 0)
	SELECT 1 FROM l`

// AppendRunLog implements store.RunLogStore in one statement, sent in a
// batch with the writes waiting beside it (writegroup.go): a run's
// batches are the most frequent writes of a run.
func (s *Store) AppendRunLog(ctx context.Context, id string, b store.RunLogBatch, finished bool) error {
	if !pgStorable(id) {
		return store.ErrNotFound
	}
	frames := b.Frames
	if frames == nil {
		frames = []byte{} // bytea, not NULL
	}
	tag, err := s.exec(ctx, id, pgAppendRunLog, id, b.First, int32(max(min(b.Count, 1<<31-1), 0)), finished, frames)
	if err != nil {
		return fmt.Errorf("store: postgres: append run log: %w", err)
	}
	if tag.RowsAffected() > 0 {
		return nil
	}
	var one int
	err = s.pool.QueryRow(ctx, `SELECT 1 FROM run_logs WHERE id = $1`, id).Scan(&one)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return store.ErrNotFound
	case err != nil:
		return fmt.Errorf("store: postgres: append run log: %w", err)
	}
	return store.ErrRunLogGap
}

// GetRunLog implements store.RunLogStore.
func (s *Store) GetRunLog(ctx context.Context, owner, id string) (*store.RunLog, error) {
	if !pgStorable(owner, id) {
		return nil, store.ErrNotFound
	}
	row := s.pool.QueryRow(ctx, `SELECT `+pgRunLogColumns+` FROM run_logs WHERE id = $1 AND owner = $2`, id, owner)
	return pgScanRunLog(row, "get run log")
}

// LatestRunLog implements store.RunLogStore: the index on owner, key,
// started_at and seq finds it.
func (s *Store) LatestRunLog(ctx context.Context, owner, key string) (*store.RunLog, error) {
	if !pgStorable(owner, key) {
		return nil, store.ErrNotFound
	}
	row := s.pool.QueryRow(ctx, `SELECT `+pgRunLogColumns+` FROM run_logs WHERE owner = $1 AND key = $2
		ORDER BY started_at DESC, seq DESC LIMIT 1`, owner, key)
	return pgScanRunLog(row, "latest run log")
}

// pgScanRunLog reads a log's row of pgRunLogColumns.
func pgScanRunLog(row pgx.Row, what string) (*store.RunLog, error) {
	var l store.RunLog
	err := row.Scan(&l.ID, &l.Owner, &l.Key, &l.RunID, &l.Form, &l.Started, &l.Updated, &l.Events, &l.Finished, &l.Input)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, store.ErrNotFound
	case err != nil:
		return nil, fmt.Errorf("store: postgres: %s: %w", what, err)
	}
	l.Started, l.Updated = l.Started.UTC(), l.Updated.UTC()
	if len(l.Input) == 0 {
		l.Input = nil // NULL, or an empty bytea another program stored
	}
	return &l, nil
}

// pgReadRunLog reads the batches of log $1 that hold events after $2, in
// order, while their frames come to $4 bytes at most (the first one
// whatever its size), and a row of NULLs when there are none; no row at
// all when the log does not exist. The budget is the server's, not the
// reader's: pgx reads a result to its end, so a reader that stopped early
// would still be sent every batch of the log. octet_length does not
// detoast the frames it measures. The batches follow each other, so the
// one holding event $3 ($2+1) is the last one to begin at or before it:
// bounding first by it lets the primary key's index skip the batches
// before it, which a follower of a long run has read already.
const pgReadRunLog = `SELECT b.first, b.count, b.frames FROM run_logs l
	LEFT JOIN LATERAL (
		SELECT first, count, frames, row_number() OVER w AS n, sum(octet_length(frames)) OVER w AS total
		FROM run_log_batches
		WHERE log_id = l.id AND first + count - 1 > $2
			AND first >= coalesce((SELECT max(first) FROM run_log_batches WHERE log_id = $1 AND first <= $3), 0)
		WINDOW w AS (ORDER BY first)) b ON b.n = 1 OR b.total <= $4
	WHERE l.id = $1 ORDER BY b.first`

// ReadRunLog implements store.RunLogStore in one statement, so that a log
// dropped meanwhile is seen whole or not at all.
func (s *Store) ReadRunLog(ctx context.Context, id string, after int64, maxBytes int) ([]store.RunLogBatch, error) {
	if !pgStorable(id) {
		return nil, store.ErrNotFound
	}
	next := after + 1
	if next < after {
		next = after
	}
	rows, err := s.pool.Query(ctx, pgReadRunLog, id, after, next, int64(maxBytes))
	if err != nil {
		return nil, fmt.Errorf("store: postgres: read run log: %w", err)
	}
	defer rows.Close()
	read, err := rowscan.Collect(rows, "store: postgres: read run log", func(scan rowscan.Scan) (*store.RunLogBatch, error) {
		var first *int64 // NULL, as the others: no batch after after
		var count *int32
		var frames []byte
		if err := scan(&first, &count, &frames); err != nil || first == nil || count == nil {
			return nil, err
		}
		return &store.RunLogBatch{First: *first, Count: int(*count), Frames: frames}, nil
	})
	if err != nil {
		return nil, err
	}
	if len(read) == 0 {
		return nil, store.ErrNotFound
	}
	var out []store.RunLogBatch
	for _, b := range read {
		if b != nil {
			out = append(out, *b)
		}
	}
	return out, nil
}

// DeleteRunLogs implements store.RunLogStore; the batches go with their
// logs (ON DELETE CASCADE).
func (s *Store) DeleteRunLogs(ctx context.Context, owner, key string) error {
	if !pgStorable(owner, key) {
		return nil
	}
	if _, err := s.pool.Exec(ctx, `DELETE FROM run_logs WHERE owner = $1 AND key = $2`, owner, key); err != nil {
		return fmt.Errorf("store: postgres: delete run logs: %w", err)
	}
	return nil
}

// StopRunLog implements store.RunLogStore.
func (s *Store) StopRunLog(ctx context.Context, owner, id string) error {
	if !pgStorable(owner, id) {
		return store.ErrNotFound
	}
	tag, err := s.pool.Exec(ctx, `UPDATE run_logs SET stopping = true WHERE id = $1 AND owner = $2 AND NOT finished`, id, owner)
	if err != nil {
		return fmt.Errorf("store: postgres: stop run log: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return store.ErrNotFound
	}
	return nil
}

// StoppingRunLogs implements store.RunLogStore: the partial index
// run_logs_stopping holds exactly the rows it reads.
func (s *Store) StoppingRunLogs(ctx context.Context) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT id FROM run_logs WHERE stopping AND NOT finished`)
	if err != nil {
		return nil, fmt.Errorf("store: postgres: stopping run logs: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("store: postgres: stopping run logs: %w", err)
	}
	return ids, nil
}
