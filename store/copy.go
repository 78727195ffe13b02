package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// CopyReport counts what Copy did.
type CopyReport struct {
	// Sessions and Threads were copied; SkippedSessions and SkippedThreads
	// were already in the destination (same id) and were left as they are.
	Sessions, SkippedSessions int
	Messages                  int
	Threads, SkippedThreads   int
}

// Copy copies every session (with its history, state and open interrupts)
// and every thread of a SQLite store into a PostgreSQL store, in one
// transaction: a copy that fails leaves the destination as it was. Turn
// locks are not copied. A session or thread whose id the destination
// already has is skipped, so running Copy again copies only what is new.
// Sessions keep their listing order; into an empty destination they keep
// their seq too, so that listing cursors stay valid.
//
// Stop the programs using src first: what they write during the copy may
// be missed.
func Copy(ctx context.Context, dst *Postgres, src *SQLite) (CopyReport, error) {
	var rep CopyReport
	err := pgx.BeginFunc(ctx, dst.pool, func(tx pgx.Tx) error {
		var existing int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM sessions`).Scan(&existing); err != nil {
			return err
		}
		keepSeq := existing == 0
		rows, err := src.r.QueryContext(ctx, `SELECT seq, id, owner, created_at, data FROM sessions ORDER BY seq`)
		if err != nil {
			return fmt.Errorf("reading sessions: %w", err)
		}
		type session struct {
			seq, created int64
			id, owner    string
			data         string
		}
		var sessions []session
		for rows.Next() {
			var s session
			if err := rows.Scan(&s.seq, &s.id, &s.owner, &s.created, &s.data); err != nil {
				_ = rows.Close()
				return fmt.Errorf("reading sessions: %w", err)
			}
			sessions = append(sessions, s)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return fmt.Errorf("reading sessions: %w", err)
		}
		for _, s := range sessions {
			hist, err := src.rawHistory(ctx, s.id)
			if err != nil {
				return err
			}
			created := fromMillis(s.created)
			var tag interface{ RowsAffected() int64 }
			if keepSeq {
				tag, err = tx.Exec(ctx, `INSERT INTO sessions (seq, id, owner, created_at, data, history_len) VALUES ($1, $2, $3, $4, $5, $6)
					ON CONFLICT (id) DO NOTHING`, s.seq, s.id, s.owner, created, s.data, len(hist))
			} else {
				tag, err = tx.Exec(ctx, `INSERT INTO sessions (id, owner, created_at, data, history_len) VALUES ($1, $2, $3, $4, $5)
					ON CONFLICT (id) DO NOTHING`, s.id, s.owner, created, s.data, len(hist))
			}
			if err != nil {
				return fmt.Errorf("session %s: %w", s.id, err)
			}
			if tag.RowsAffected() == 0 {
				rep.SkippedSessions++
				continue
			}
			if err := pgInsertHistory(ctx, tx, s.id, 0, hist); err != nil {
				return fmt.Errorf("session %s: %w", s.id, err)
			}
			rep.Sessions++
			rep.Messages += len(hist)
		}
		if keepSeq && len(sessions) > 0 {
			// New sessions continue after the copied ones.
			if _, err := tx.Exec(ctx, `SELECT setval(pg_get_serial_sequence('sessions', 'seq'), (SELECT max(seq) FROM sessions))`); err != nil {
				return err
			}
		}

		trows, err := src.r.QueryContext(ctx, `SELECT owner, id, updated_at, data FROM threads ORDER BY owner, id`)
		if err != nil {
			return fmt.Errorf("reading threads: %w", err)
		}
		type thread struct {
			owner, id, data string
			updated         int64
		}
		var threads []thread
		for trows.Next() {
			var t thread
			if err := trows.Scan(&t.owner, &t.id, &t.updated, &t.data); err != nil {
				_ = trows.Close()
				return fmt.Errorf("reading threads: %w", err)
			}
			threads = append(threads, t)
		}
		if err := errors.Join(trows.Err(), trows.Close()); err != nil {
			return fmt.Errorf("reading threads: %w", err)
		}
		for _, t := range threads {
			tag, err := tx.Exec(ctx, `INSERT INTO threads (owner, id, updated_at, data) VALUES ($1, $2, $3, $4)
				ON CONFLICT (owner, id) DO NOTHING`, t.owner, t.id, fromMillis(t.updated), t.data)
			if err != nil {
				return fmt.Errorf("thread %s: %w", t.id, err)
			}
			if tag.RowsAffected() == 0 {
				rep.SkippedThreads++
			} else {
				rep.Threads++
			}
		}
		return nil
	})
	if err != nil {
		return CopyReport{}, fmt.Errorf("store: copy: %w", err)
	}
	return rep, nil
}

// rawHistory reads a session's history entries as stored.
func (s *SQLite) rawHistory(ctx context.Context, id string) ([][]byte, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT data FROM history WHERE session_id = ? ORDER BY position`, id)
	if err != nil {
		return nil, fmt.Errorf("reading history of %s: %w", id, err)
	}
	defer func() { _ = rows.Close() }()
	var out [][]byte
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			return nil, fmt.Errorf("reading history of %s: %w", id, err)
		}
		out = append(out, b)
	}
	return out, rows.Err()
}

// CopyTimeout bounds a copy started from the command line.
const CopyTimeout = time.Hour
