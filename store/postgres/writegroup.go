package postgres

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// The writes a turn or a run makes on PostgreSQL are single statements: a
// turn's start and end (SaveSession), the messages it
// settles (AppendHistory), a thread's save (SaveThread), a run's
// log as it grows (AppendRunLog). The ones
// waiting when one is sent go together as one batch: their statements,
// sent at once and run in the batch's one implicit transaction, so that a
// hundred turns starting at once cost the database a few round trips and
// commits instead of a hundred. A statement the server refuses rolls the
// batch back; each of its statements is then sent alone, so that one bad
// write fails no other.

// pgWrite is one statement waiting for its batch.
type pgWrite struct {
	key  string // what it writes (a session's id): a batch runs in key order
	sql  string
	args []any
	done chan pgWriteResult // buffered: the batch never waits for its caller
}

type pgWriteResult struct {
	tag pgconn.CommandTag
	err error
}

// exec runs one write statement in the next batch. A caller whose ctx is
// already done gets ctx's error; once queued, the batch's answer is the
// caller's (a batch is bounded by a timeout of its own, as it serves many
// callers).
func (s *Store) exec(ctx context.Context, key, sql string, args ...any) (pgconn.CommandTag, error) {
	if err := ctx.Err(); err != nil {
		return pgconn.CommandTag{}, err
	}
	w := &pgWrite{key: key, sql: sql, args: args, done: make(chan pgWriteResult, 1)}
	s.writeGroups.join(w, s.writeGroup)
	r := <-w.done
	return r.tag, r.err
}

// writeGroup answers each write of group: one batch, or each alone when
// the server refused a statement of the batch. The batch runs its
// statements in key order, so that two batches touching the same sessions
// (which turn locks all but rule out) take their rows in one order.
func (s *Store) writeGroup(group []*pgWrite) {
	ctx, cancel := context.WithTimeout(context.Background(), pgGroupTimeout)
	defer cancel()
	slices.SortStableFunc(group, func(a, b *pgWrite) int { return strings.Compare(a.key, b.key) })
	results, rolledBack := s.writeBatch(ctx, group)
	if rolledBack && len(group) > 1 {
		for _, w := range group {
			r, _ := s.writeBatch(ctx, []*pgWrite{w})
			w.done <- r[0]
		}
		return
	}
	for i, w := range group {
		w.done <- results[i]
	}
}

// errRolledBack is the error of a statement whose batch the server rolled
// back because of another statement.
var errRolledBack = errors.New("rolled back with its batch")

// writeBatch sends group's statements as one batch and returns each one's
// result, and whether the server refused a statement (and so rolled back
// the whole batch: the commit comes after the last statement, so nothing
// of it is stored). Any other failure (the connection, or an error at the
// commit) leaves it unknown whether the batch committed, as for a single
// statement: each write gets the error.
func (s *Store) writeBatch(ctx context.Context, group []*pgWrite) (results []pgWriteResult, rolledBack bool) {
	b := &pgx.Batch{}
	for _, w := range group {
		b.Queue(w.sql, w.args...)
	}
	results = make([]pgWriteResult, len(group))
	br := s.pool.SendBatch(ctx, b)
	var pe *pgconn.PgError
	for i := range group {
		results[i].tag, results[i].err = br.Exec()
		rolledBack = rolledBack || errors.As(results[i].err, &pe)
	}
	if err := br.Close(); err != nil {
		// An error only at the end (the commit, or the connection around
		// it) leaves the outcome unknown: nothing is resent.
		for i := range results {
			if results[i].err == nil {
				results[i].err = err
			}
		}
	}
	if rolledBack {
		for i := range results {
			if results[i].err == nil || !errors.As(results[i].err, &pe) {
				results[i].err = errRolledBack
			}
		}
	}
	return results, rolledBack
}
