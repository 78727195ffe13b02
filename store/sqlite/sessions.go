package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/store/internal/rowscan"
)

// CreateSession implements store.Store: the owner's sessions are counted
// in the transaction that inserts, and SQLite has one writer at a time.
func (s *Store) CreateSession(ctx context.Context, sess *store.Session, seed []store.Entry, max int) error {
	data, hist, err := store.EncodeSessionEntries(sess, seed)
	if err != nil {
		return err
	}
	var seq int64
	err = s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if max > 0 {
			var n int
			if err := s.txRow(ctx, tx, `SELECT count(*) FROM sessions WHERE owner = ?`, sess.Owner).Scan(&n); err != nil {
				return err
			}
			if n >= max {
				return store.ErrLimit
			}
		}
		res, err := s.txExec(ctx, tx,
			`INSERT INTO sessions (id, owner, created_at, data, history_version) VALUES (?, ?, ?, ?, 1)
			 ON CONFLICT (id) DO NOTHING`,
			sess.ID, sess.Owner, toMillis(sess.CreatedAt), string(data))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return store.ErrExists
		}
		if seq, err = res.LastInsertId(); err != nil {
			return err
		}
		return s.insertHistory(ctx, tx, sess.ID, 0, hist)
	})
	if err != nil {
		return err
	}
	sess.Seq, sess.HistoryVersion = seq, 1
	return nil
}

// GetSession implements store.Store.
func (s *Store) GetSession(ctx context.Context, owner, id string) (*store.Session, error) {
	row := s.readRow(ctx,
		`SELECT seq, created_at, data, history_version FROM sessions WHERE id = ? AND owner = ?`, id, owner)
	out := &store.Session{ID: id, Owner: owner}
	var created int64
	var data []byte
	if err := row.Scan(&out.Seq, &created, &data, &out.HistoryVersion); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, store.ErrNotFound
		}
		return nil, fmt.Errorf("store: sqlite: get session: %w", err)
	}
	out.CreatedAt = fromMillis(created)
	if err := store.DecodeSession(out, data); err != nil {
		return nil, err
	}
	return out, nil
}

// ListSessions implements store.Store. A limit of zero or less lists nothing.
func (s *Store) ListSessions(ctx context.Context, owner string, after int64, limit int) ([]*store.Session, error) {
	if limit <= 0 {
		return nil, nil
	}
	rows, err := s.readRows(ctx,
		`SELECT id, seq, created_at, data, history_version FROM sessions
		 WHERE owner = ? AND seq > ? ORDER BY seq LIMIT ?`, owner, after, limit)
	if err != nil {
		return nil, fmt.Errorf("store: sqlite: list sessions: %w", err)
	}
	defer func() { _ = rows.Close() }()
	return rowscan.Collect(rows, "store: sqlite: list sessions", func(scan rowscan.Scan) (*store.Session, error) {
		sess := &store.Session{Owner: owner}
		var created int64
		var data []byte
		if err := scan(&sess.ID, &sess.Seq, &created, &data, &sess.HistoryVersion); err != nil {
			return nil, err
		}
		sess.CreatedAt = fromMillis(created)
		return sess, store.DecodeSession(sess, data)
	})
}

// SaveSession implements store.Store in one transaction.
func (s *Store) SaveSession(ctx context.Context, sess *store.Session, appended []store.Entry, holder string) error {
	data, hist, err := store.EncodeSessionEntries(sess, appended)
	if err != nil {
		return err
	}
	return s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		// SET sees the row as it was: the lock goes if holder had it.
		res, err := s.txExec(ctx, tx, `UPDATE sessions SET data = ?, history_version = history_version + 1,
				lock_holder = CASE WHEN lock_holder = ? THEN NULL ELSE lock_holder END,
				lock_until = CASE WHEN lock_holder = ? THEN NULL ELSE lock_until END
			WHERE id = ? AND owner = ?`, string(data), holder, holder, sess.ID, sess.Owner)
		if err := affectedOne(res, err, "save session"); err != nil {
			return err
		}
		var next int64
		if err := s.txRow(ctx, tx, `SELECT coalesce(max(position) + 1, 0) FROM history WHERE session_id = ?`, sess.ID).Scan(&next); err != nil {
			return err
		}
		return s.insertHistory(ctx, tx, sess.ID, next, hist)
	})
}

// DeleteSession implements store.Store; the history goes with the session (ON
// DELETE CASCADE).
func (s *Store) DeleteSession(ctx context.Context, owner, id string) error {
	res, err := s.exec(ctx, `DELETE FROM sessions WHERE id = ? AND owner = ?`, id, owner)
	return affectedOne(res, err, "delete session")
}
