package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/aapagui/aapagui/internal/textparts"
	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/store/internal/rowscan"
)

// AppendHistory implements store.Store: the entries get the positions after the
// last one, in one transaction.
func (s *Store) AppendHistory(ctx context.Context, id string, entries []store.Entry) error {
	hist, err := store.EncodeEntries(entries)
	if err != nil {
		return err
	}
	return s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if err := s.bumpHistory(ctx, tx, id); err != nil {
			return err
		}
		var next int64
		if err := s.txRow(ctx, tx, `SELECT coalesce(max(position) + 1, 0) FROM history WHERE session_id = ?`, id).Scan(&next); err != nil {
			return err
		}
		return s.insertHistory(ctx, tx, id, next, hist)
	})
}

// ReplaceTail implements store.Store, in one transaction.
func (s *Store) ReplaceTail(ctx context.Context, id string, from int, entries []store.Entry) error {
	hist, err := store.EncodeEntries(entries)
	if err != nil {
		return err
	}
	return s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if err := s.bumpHistory(ctx, tx, id); err != nil {
			return err
		}
		var n int64
		if err := s.txRow(ctx, tx, `SELECT count(*) FROM history WHERE session_id = ?`, id).Scan(&n); err != nil {
			return err
		}
		if from < 0 || int64(from) > n {
			return store.ErrShortHistory
		}
		if _, err := s.txExec(ctx, tx, `DELETE FROM history WHERE session_id = ? AND position >= ?`, id, from); err != nil {
			return err
		}
		return s.insertHistory(ctx, tx, id, int64(from), hist)
	})
}

// bumpHistory adds one to session id's history_version (see
// store.Session.HistoryVersion), in the transaction that writes its
// history; a session that does not exist is store.ErrNotFound.
func (s *Store) bumpHistory(ctx context.Context, tx *sql.Tx, id string) error {
	res, err := s.txExec(ctx, tx, `UPDATE sessions SET history_version = history_version + 1 WHERE id = ?`, id)
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err == nil && n == 0 {
		err = store.ErrNotFound
	}
	return err
}

func (s *Store) insertHistory(ctx context.Context, tx *sql.Tx, id string, first int64, hist [][]byte) error {
	for i, h := range hist {
		if _, err := s.txExec(ctx, tx, `INSERT INTO history (session_id, position, data) VALUES (?, ?, ?)`, id, first+int64(i), string(h)); err != nil {
			return err
		}
	}
	return nil
}

// History implements store.Store. One statement reads the session and its
// entries, so a concurrent delete is seen whole or not at all.
func (s *Store) History(ctx context.Context, id string) ([]store.Entry, error) {
	rows, err := s.readRows(ctx,
		`SELECT h.data FROM sessions s LEFT JOIN history h ON h.session_id = s.id
		 WHERE s.id = ? ORDER BY h.position`, id)
	if err != nil {
		return nil, fmt.Errorf("store: sqlite: history: %w", err)
	}
	defer func() { _ = rows.Close() }()
	raw, err := rowscan.Collect(rows, "store: sqlite: history", func(scan rowscan.Scan) ([]byte, error) {
		var data []byte // NULL (no entries) scans as nil
		err := scan(&data)
		return data, err
	})
	if err != nil {
		return nil, err
	}
	return rowscan.History(raw, s.historyParts(ctx, id))
}

// AddHistoryPart implements store.HistoryStore.
func (s *Store) AddHistoryPart(ctx context.Context, sessionID string, p store.TextPart) error {
	_, err := s.exec(ctx, `INSERT OR REPLACE INTO history_parts (session_id, ref, part, data) VALUES (?, ?, ?, ?)`, sessionID, p.Ref, p.Index, p.Data)
	if err != nil {
		return fmt.Errorf("store: sqlite: history part: %w", err)
	}
	return nil
}

// AddRecordPart implements store.ThreadStore.
func (s *Store) AddRecordPart(ctx context.Context, owner, threadID string, p store.TextPart) error {
	_, err := s.exec(ctx, `INSERT OR REPLACE INTO record_parts (owner, id, ref, part, data) VALUES (?, ?, ?, ?, ?)`, owner, threadID, p.Ref, p.Index, p.Data)
	if err != nil {
		return fmt.Errorf("store: sqlite: record part: %w", err)
	}
	return nil
}

// historyParts reads the parts of session id's long texts.
func (s *Store) historyParts(ctx context.Context, id string) textparts.Reader {
	return func(ref string, n int) ([][]byte, error) {
		return s.parts(ctx, `SELECT part, data FROM history_parts WHERE session_id = ? AND ref = ? AND part < ? ORDER BY part`, id, ref, n)
	}
}

// recordParts reads the parts of a thread's record's long texts.
func (s *Store) recordParts(ctx context.Context, owner, id string) textparts.Reader {
	return func(ref string, n int) ([][]byte, error) {
		return s.parts(ctx, `SELECT part, data FROM record_parts WHERE owner = ? AND id = ? AND ref = ? AND part < ? ORDER BY part`, owner, id, ref, n)
	}
}

// parts reads the parts query selects (part, data), up to the first
// missing one.
func (s *Store) parts(ctx context.Context, query string, args ...any) ([][]byte, error) {
	rows, err := s.readRows(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("store: sqlite: text parts: %w", err)
	}
	defer func() { _ = rows.Close() }()
	return rowscan.Parts(rows, "store: sqlite: text parts")
}
