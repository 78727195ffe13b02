package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/aapagui/aapagui/internal/textparts"
	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/store/internal/rowscan"
)

// AppendHistory implements store.Store in one statement: the session's row
// counts its history, and bumping the count takes the row's lock, so
// appends to one session from several replicas get distinct positions.
func (s *Store) AppendHistory(ctx context.Context, id string, entries []store.Entry) error {
	if !pgStorable(id) {
		return store.ErrNotFound
	}
	hist, err := store.EncodeEntries(entries)
	if err != nil {
		return err
	}
	tag, err := s.exec(ctx, id, pgAppend, id, pgTexts(hist))
	if err != nil {
		return fmt.Errorf("store: postgres: append history: %w", err)
	}
	if tag.RowsAffected() == 0 {
		if len(hist) > 0 {
			return store.ErrNotFound
		}
		return s.exists(ctx, id)
	}
	return nil
}

// pgAppend appends $2 to the history of session $1: the UPDATE's RETURNING
// sees the row as the last append left it, after waiting for its lock.
const pgAppend = `WITH s AS (
		UPDATE sessions SET history_len = history_len + cardinality($2::text[]), history_version = history_version + 1 WHERE id = $1
		RETURNING history_len - cardinality($2::text[]) AS first)
	` + pgAppendTail

// pgAppendTail inserts the entries $2 of session $1 after those counted
// when the UPDATE s ran.
const pgAppendTail = `INSERT INTO history (session_id, position, data)
	SELECT $1, s.first + t.ord - 1, t.data FROM s, unnest($2::text[]) WITH ORDINALITY AS t (data, ord)`

// ReplaceTail implements store.Store in one statement, sent in a batch with the
// writes waiting beside it (writegroup.go): the entries from
// position from on are written over (an upsert: a DELETE and an INSERT of
// the same key cannot share a statement), those past the new end deleted,
// and the count moved, all only when the session has at least from
// entries. A checkpoint of a streaming answer costs one statement of a
// batch, not a transaction of four.
func (s *Store) ReplaceTail(ctx context.Context, id string, from int, entries []store.Entry) error {
	if !pgStorable(id) {
		return store.ErrNotFound
	}
	if from < 0 {
		return store.ErrShortHistory
	}
	hist, err := store.EncodeEntries(entries)
	if err != nil {
		return err
	}
	tag, err := s.exec(ctx, id, pgReplaceTail, id, from, pgTexts(hist))
	if err != nil {
		return fmt.Errorf("store: postgres: replace the history's tail: %w", err)
	}
	if tag.RowsAffected() == 0 {
		if err := s.exists(ctx, id); err != nil {
			return err
		}
		return store.ErrShortHistory
	}
	return nil
}

// pgReplaceTail makes the entries $3 session $1's history from position $2
// on; it returns a row when it did (the session had $2 entries at least).
const pgReplaceTail = `WITH s AS (
		UPDATE sessions SET history_len = $2 + cardinality($3::text[]), history_version = history_version + 1
		WHERE id = $1 AND history_len >= $2
		RETURNING 1),
	d AS (
		DELETE FROM history WHERE session_id = $1 AND position >= $2 + cardinality($3::text[]) AND EXISTS (SELECT FROM s)),
	i AS (
		INSERT INTO history (session_id, position, data)
		SELECT $1, $2 + t.ord - 1, t.data FROM s, unnest($3::text[]) WITH ORDINALITY AS t (data, ord)
		ON CONFLICT (session_id, position) DO UPDATE SET data = EXCLUDED.data)
	SELECT 1 FROM s`

// pgInsertHistory inserts entries at positions first, first+1, … in one
// statement.
func pgInsertHistory(ctx context.Context, tx pgx.Tx, id string, first int64, hist [][]byte) error {
	if len(hist) == 0 {
		return nil
	}
	_, err := tx.Exec(ctx,
		`INSERT INTO history (session_id, position, data)
		 SELECT $1, $2 + t.ord - 1, t.data FROM unnest($3::text[]) WITH ORDINALITY AS t (data, ord)`,
		id, first, pgTexts(hist))
	return err
}

// History implements store.Store. One statement reads the session and its
// entries, so a concurrent delete is seen whole or not at all.
func (s *Store) History(ctx context.Context, id string) ([]store.Entry, error) {
	if !pgStorable(id) {
		return nil, store.ErrNotFound
	}
	rows, err := s.pool.Query(ctx,
		`SELECT h.data FROM sessions s LEFT JOIN history h ON h.session_id = s.id
		 WHERE s.id = $1 ORDER BY h.position`, id)
	if err != nil {
		return nil, fmt.Errorf("store: postgres: history: %w", err)
	}
	defer rows.Close()
	raw, err := rowscan.Collect(rows, "store: postgres: history", func(scan rowscan.Scan) ([]byte, error) {
		var data *string // NULL: no entries
		if err := scan(&data); err != nil || data == nil {
			return nil, err
		}
		return []byte(*data), nil
	})
	if err != nil {
		return nil, err
	}
	return rowscan.History(raw, s.historyParts(ctx, id))
}

// AddHistoryPart implements store.HistoryStore.
func (s *Store) AddHistoryPart(ctx context.Context, sessionID string, p store.TextPart) error {
	if !pgStorable(sessionID) {
		return store.ErrNotFound
	}
	_, err := s.exec(ctx, sessionID, `INSERT INTO history_parts (session_id, ref, part, data) VALUES ($1, $2, $3, $4)
		ON CONFLICT (session_id, ref, part) DO UPDATE SET data = EXCLUDED.data`, sessionID, p.Ref, p.Index, p.Data)
	if err != nil {
		return fmt.Errorf("store: postgres: history part: %w", err)
	}
	return nil
}

// AddRecordPart implements store.ThreadStore.
func (s *Store) AddRecordPart(ctx context.Context, owner, threadID string, p store.TextPart) error {
	if !pgStorable(owner, threadID) {
		return fmt.Errorf("store: postgres: record part: a thread's owner or id holds a NUL")
	}
	_, err := s.exec(ctx, owner+"\x00"+threadID, `INSERT INTO record_parts (owner, id, ref, part, data) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (owner, id, ref, part) DO UPDATE SET data = EXCLUDED.data`, owner, threadID, p.Ref, p.Index, p.Data)
	if err != nil {
		return fmt.Errorf("store: postgres: record part: %w", err)
	}
	return nil
}

// historyParts reads the parts of session id's long texts.
func (s *Store) historyParts(ctx context.Context, id string) textparts.Reader {
	return func(ref string, n int) ([][]byte, error) {
		return s.parts(ctx, `SELECT part, data FROM history_parts WHERE session_id = $1 AND ref = $2 AND part < $3 ORDER BY part`, id, ref, n)
	}
}

// recordParts reads the parts of a thread's record's long texts.
func (s *Store) recordParts(ctx context.Context, owner, id string) textparts.Reader {
	return func(ref string, n int) ([][]byte, error) {
		return s.parts(ctx, `SELECT part, data FROM record_parts WHERE owner = $1 AND id = $2 AND ref = $3 AND part < $4 ORDER BY part`, owner, id, ref, n)
	}
}

// parts reads the parts query selects (part, data), up to the first
// missing one.
func (s *Store) parts(ctx context.Context, query string, args ...any) ([][]byte, error) {
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("store: postgres: text parts: %w", err)
	}
	defer rows.Close()
	return rowscan.Parts(rows, "store: postgres: text parts")
}
