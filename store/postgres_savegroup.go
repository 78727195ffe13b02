package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// A turn's start and its end each save the session (SaveSession,
// SaveSessionUnlock). On PostgreSQL the saves waiting when one is sent go
// together as one batch: the statements of each, sent at once and run in
// the batch's one implicit transaction, so that a hundred turns starting
// at once cost the database a few round trips and commits instead of a
// hundred. A statement that fails rolls the batch back; each of its saves
// is then sent alone, so that one bad save fails no other.

// pgSaveCall is one save waiting for its group.
type pgSaveCall struct {
	id, owner, holder, data string
	hist                    []string
	done                    chan error // buffered: the group never waits for its caller
}

// SaveSessionUnlock implements Store in one statement (one commit), sent
// in a batch with the saves waiting beside it. A caller whose ctx is
// already done gets ctx's error; once queued, the batch's answer is the
// caller's.
func (s *Postgres) SaveSessionUnlock(ctx context.Context, sess *Session, appended []Entry, holder string) error {
	if !pgStorable(sess.Owner, sess.ID, holder) {
		return ErrNotFound
	}
	data, err := encodeSession(sess)
	if err != nil {
		return err
	}
	hist, err := encodeEntries(appended)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	call := &pgSaveCall{id: sess.ID, owner: sess.Owner, holder: holder, data: string(data), hist: pgTexts(hist), done: make(chan error, 1)}
	s.saveGroups.join(call, s.saveGroup)
	return <-call.done
}

// queue adds c's statement to b.
func (c *pgSaveCall) queue(b *pgx.Batch) {
	if len(c.hist) == 0 {
		b.Queue(`UPDATE sessions SET data = $1,
				lock_holder = CASE WHEN lock_holder = $4 THEN NULL ELSE lock_holder END,
				lock_until = CASE WHEN lock_holder = $4 THEN NULL ELSE lock_until END
			WHERE id = $2 AND owner = $3`, c.data, c.id, c.owner, c.holder)
		return
	}
	// SET sees the row as it was: the lock goes if holder had it.
	b.Queue(`WITH s AS (
			UPDATE sessions SET data = $3, history_len = history_len + cardinality($4::text[]),
				lock_holder = CASE WHEN lock_holder = $5 THEN NULL ELSE lock_holder END,
				lock_until = CASE WHEN lock_holder = $5 THEN NULL ELSE lock_until END
			WHERE id = $1 AND owner = $2
			RETURNING history_len - cardinality($4::text[]) AS first)
		INSERT INTO history (session_id, position, data)
		SELECT $1, s.first + t.ord - 1, t.data FROM s, unnest($4::text[]) WITH ORDINALITY AS t (data, ord)`,
		c.id, c.owner, c.data, c.hist, c.holder)
}

// saveGroup answers each call of group: one batch, or each call alone
// when a statement of the batch failed. The batch writes its sessions in
// the order of their ids, so that two batches touching the same sessions
// (which turn locks all but rule out) take their rows in one order.
func (s *Postgres) saveGroup(group []*pgSaveCall) {
	ctx, cancel := context.WithTimeout(context.Background(), pgLockGroupTimeout)
	defer cancel()
	slices.SortStableFunc(group, func(a, b *pgSaveCall) int { return strings.Compare(a.id, b.id) })
	errs, rolledBack := s.saveBatch(ctx, group)
	if rolledBack && len(group) > 1 {
		for _, c := range group {
			e, _ := s.saveBatch(ctx, []*pgSaveCall{c})
			c.done <- e[0]
		}
		return
	}
	for i, c := range group {
		c.done <- errs[i]
	}
}

// saveBatch sends group's statements as one batch and returns each call's
// error, and whether the server refused a statement (and so rolled back
// the whole batch: nothing of it is stored). Any other failure (the
// connection) leaves it unknown whether the batch committed, as for a
// single statement: each call gets the error.
func (s *Postgres) saveBatch(ctx context.Context, group []*pgSaveCall) (errs []error, rolledBack bool) {
	b := &pgx.Batch{}
	for _, c := range group {
		c.queue(b)
	}
	errs = make([]error, len(group))
	br := s.pool.SendBatch(ctx, b)
	for i := range group {
		tag, err := br.Exec()
		var pe *pgconn.PgError
		if errors.As(err, &pe) {
			rolledBack = true
		}
		errs[i] = pgAffectedOne(tag, err, "save session")
	}
	if err := br.Close(); err != nil {
		var pe *pgconn.PgError
		rolledBack = rolledBack || errors.As(err, &pe)
		for i := range errs {
			if errs[i] == nil || errors.Is(errs[i], ErrNotFound) {
				errs[i] = fmt.Errorf("store: postgres: save session: %w", err)
			}
		}
	}
	if rolledBack {
		// A refused statement rolled back the others too: none stored.
		for i := range errs {
			if errs[i] == nil || errors.Is(errs[i], ErrNotFound) {
				errs[i] = errors.New("store: postgres: save session: rolled back with its batch")
			}
		}
	}
	return errs, rolledBack
}
