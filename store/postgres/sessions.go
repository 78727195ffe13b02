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

// createSession implements store.Store. It sets s.Seq on success. The session
// and its seed history are one statement: one round trip and one commit,
// and no history is written for an id that is taken.
func (s *Store) createSession(ctx context.Context, sess *store.Session, seed []store.Entry) error {
	data, hist, err := store.EncodeSessionEntries(sess, seed)
	if err != nil {
		return err
	}
	var seq int64
	err = s.pool.QueryRow(ctx, `WITH s AS (
			INSERT INTO sessions (id, owner, created_at, data, history_len, history_version) VALUES ($1, $2, $3, $4, cardinality($5::text[]), 1)
			ON CONFLICT (id) DO NOTHING RETURNING seq),
		h AS (
			INSERT INTO history (session_id, position, data)
			SELECT $1, t.ord - 1, t.data FROM s, unnest($5::text[]) WITH ORDINALITY AS t (data, ord))
		SELECT seq FROM s`,
		sess.ID, sess.Owner, sess.CreatedAt.UTC().Truncate(time.Millisecond), string(data), pgTexts(hist)).Scan(&seq)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.ErrExists
	}
	if err != nil {
		return fmt.Errorf("store: postgres: create session: %w", err)
	}
	sess.Seq, sess.HistoryVersion = seq, 1
	return nil
}

// pgOwnerLock is the first key of the transaction-scoped advisory locks
// under which an owner's sessions are counted and one is added
// (CreateSession with a max), "aaps" in ASCII; the second is the hash of the
// owner.
const pgOwnerLock = 0x61617073

// CreateSession implements store.Store. The owner's sessions are counted
// and the new one inserted under a transaction-scoped advisory lock on the
// owner: concurrent creations for one owner, from any replica, take turns,
// and each counts what the ones before it committed. The lock ends with
// the transaction, so it works through a transaction pooler.
func (s *Store) CreateSession(ctx context.Context, sess *store.Session, seed []store.Entry, max int) error {
	if max <= 0 {
		return s.createSession(ctx, sess, seed)
	}
	data, hist, err := store.EncodeSessionEntries(sess, seed)
	if err != nil {
		return err
	}
	var seq int64
	err = s.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, int32(pgOwnerLock), sess.Owner); err != nil {
			return err
		}
		// A statement of its own after the lock: its snapshot sees every
		// session committed by the holders before.
		var n int64
		var got *int64
		err := tx.QueryRow(ctx, `WITH n AS (SELECT count(*) AS n FROM sessions WHERE owner = $2),
			s AS (
				INSERT INTO sessions (id, owner, created_at, data, history_len, history_version)
				SELECT $1, $2, $3, $4, cardinality($5::text[]), 1 FROM n WHERE n.n < $6
				ON CONFLICT (id) DO NOTHING RETURNING seq),
			h AS (
				INSERT INTO history (session_id, position, data)
				SELECT $1, t.ord - 1, t.data FROM s, unnest($5::text[]) WITH ORDINALITY AS t (data, ord))
			SELECT n.n, (SELECT seq FROM s) FROM n`,
			sess.ID, sess.Owner, sess.CreatedAt.UTC().Truncate(time.Millisecond), string(data), pgTexts(hist), int64(max)).Scan(&n, &got)
		switch {
		case err != nil:
			return err
		case n >= int64(max):
			return store.ErrLimit
		case got == nil:
			return store.ErrExists
		}
		seq = *got
		return nil
	})
	if err != nil {
		if errors.Is(err, store.ErrLimit) || errors.Is(err, store.ErrExists) {
			return err
		}
		return fmt.Errorf("store: postgres: create session: %w", err)
	}
	sess.Seq, sess.HistoryVersion = seq, 1
	return nil
}

// GetSession implements store.Store.
func (s *Store) GetSession(ctx context.Context, owner, id string) (*store.Session, error) {
	if !pgStorable(owner, id) {
		return nil, store.ErrNotFound
	}
	out := &store.Session{ID: id, Owner: owner}
	var data string
	err := s.pool.QueryRow(ctx, `SELECT seq, created_at, data, history_version FROM sessions WHERE id = $1 AND owner = $2`, id, owner).
		Scan(&out.Seq, &out.CreatedAt, &data, &out.HistoryVersion)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store: postgres: get session: %w", err)
	}
	out.CreatedAt = out.CreatedAt.UTC()
	if err := store.DecodeSession(out, []byte(data)); err != nil {
		return nil, err
	}
	return out, nil
}

// decodeSessionRow fills out from a session row's data and returns its
// history entries, as read by one statement (their long texts read from
// their parts).
func (s *Store) decodeSessionRow(ctx context.Context, out *store.Session, data string, hist []string) ([]store.Entry, error) {
	out.CreatedAt = out.CreatedAt.UTC()
	if err := store.DecodeSession(out, []byte(data)); err != nil {
		return nil, err
	}
	raw := make([][]byte, len(hist))
	for i, h := range hist {
		raw[i] = []byte(h)
	}
	raw, err := store.ExpandRows(raw, s.historyParts(ctx, out.ID))
	if err != nil {
		return nil, err
	}
	return store.DecodeEntries(raw)
}

// ListSessions implements store.Store. A limit of zero or less lists nothing.
func (s *Store) ListSessions(ctx context.Context, owner string, after int64, limit int) ([]*store.Session, error) {
	if limit <= 0 {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx,
		`SELECT id, seq, created_at, data, history_version FROM sessions WHERE owner = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
		owner, after, limit)
	if err != nil {
		return nil, fmt.Errorf("store: postgres: list sessions: %w", err)
	}
	defer rows.Close()
	return rowscan.Collect(rows, "store: postgres: list sessions", func(scan rowscan.Scan) (*store.Session, error) {
		sess := &store.Session{Owner: owner}
		var data string
		if err := scan(&sess.ID, &sess.Seq, &sess.CreatedAt, &data, &sess.HistoryVersion); err != nil {
			return nil, err
		}
		sess.CreatedAt = sess.CreatedAt.UTC()
		return sess, store.DecodeSession(sess, []byte(data))
	})
}

// pgSave saves session $1 of owner $3 (its data $4, and the count of the
// entries $2 appended), and frees holder $5's lock: SET sees the row as it
// was, so the lock goes only if $5 had it.
const pgSave = `UPDATE sessions SET data = $4, history_len = history_len + cardinality($2::text[]), history_version = history_version + 1,
		lock_holder = CASE WHEN lock_holder = $5 THEN NULL ELSE lock_holder END,
		lock_until = CASE WHEN lock_holder = $5 THEN NULL ELSE lock_until END
	WHERE id = $1 AND owner = $3`

// SaveSession implements store.Store in one statement (one commit), sent
// in a batch with the writes waiting beside it (writegroup.go).
// With no entries it is pgSave alone, so that a missing session still
// shows as no row affected.
func (s *Store) SaveSession(ctx context.Context, sess *store.Session, appended []store.Entry, holder string) error {
	if !pgStorable(sess.Owner, sess.ID, holder) {
		return store.ErrNotFound
	}
	data, hist, err := store.EncodeSessionEntries(sess, appended)
	if err != nil {
		return err
	}
	q := pgSave
	if len(hist) > 0 {
		q = `WITH s AS (` + pgSave + ` RETURNING history_len - cardinality($2::text[]) AS first) ` + pgAppendTail
	}
	tag, err := s.exec(ctx, sess.ID, q, sess.ID, pgTexts(hist), sess.Owner, string(data), holder)
	return pgAffectedOne(tag, err, "save session")
}

// DeleteSession implements store.Store; the history goes with the session.
func (s *Store) DeleteSession(ctx context.Context, owner, id string) error {
	if !pgStorable(owner, id) {
		return store.ErrNotFound
	}
	tag, err := s.pool.Exec(ctx, `DELETE FROM sessions WHERE id = $1 AND owner = $2`, id, owner)
	return pgAffectedOne(tag, err, "delete session")
}

// loadSession reads the session and its history in one
// statement, so one round trip and one snapshot.
func (s *Store) loadSession(ctx context.Context, owner, id string) (*store.Session, []store.Entry, error) {
	if !pgStorable(owner, id) {
		return nil, nil, store.ErrNotFound
	}
	out := &store.Session{ID: id, Owner: owner}
	var data string
	var hist []string
	err := s.pool.QueryRow(ctx,
		`SELECT s.seq, s.created_at, s.data, s.history_version,
		        coalesce((SELECT array_agg(h.data ORDER BY h.position) FROM history h WHERE h.session_id = s.id), '{}')
		 FROM sessions s WHERE s.id = $1 AND s.owner = $2`, id, owner).
		Scan(&out.Seq, &out.CreatedAt, &data, &out.HistoryVersion, &hist)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil, store.ErrNotFound
	}
	if err != nil {
		return nil, nil, fmt.Errorf("store: postgres: load session: %w", err)
	}
	entries, err := s.decodeSessionRow(ctx, out, data, hist)
	if err != nil {
		return nil, nil, err
	}
	return out, entries, nil
}
