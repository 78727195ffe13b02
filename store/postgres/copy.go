package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/aapagui/aapagui/store/internal/rowcopy"
)

func init() {
	rowcopy.IntoPostgres = func(st any) rowcopy.Sink {
		s := st.(*Store)
		return func(ctx context.Context, fn func(rowcopy.Tx) error) error {
			return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error { return fn(copyTx{tx}) })
		}
	}
}

// copyTx writes rows as stored, for package transfer.
type copyTx struct{ tx pgx.Tx }

// HasSessions implements rowcopy.Tx.
func (c copyTx) HasSessions(ctx context.Context) (bool, error) {
	var existing int
	if err := c.tx.QueryRow(ctx, `SELECT count(*) FROM sessions`).Scan(&existing); err != nil {
		return false, err
	}
	return existing > 0, nil
}

// InsertSession implements rowcopy.Tx.
func (c copyTx) InsertSession(ctx context.Context, s rowcopy.Session, hist [][]byte, keepSeq bool) (bool, error) {
	var tag interface{ RowsAffected() int64 }
	var err error
	if keepSeq {
		tag, err = c.tx.Exec(ctx, `INSERT INTO sessions (seq, id, owner, created_at, data, history_len, history_version) VALUES ($1, $2, $3, $4, $5, $6, $7)
			ON CONFLICT (id) DO NOTHING`, s.Seq, s.ID, s.Owner, s.CreatedAt, s.Data, len(hist), s.HistoryVersion)
	} else {
		tag, err = c.tx.Exec(ctx, `INSERT INTO sessions (id, owner, created_at, data, history_len, history_version) VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (id) DO NOTHING`, s.ID, s.Owner, s.CreatedAt, s.Data, len(hist), s.HistoryVersion)
	}
	if err != nil || tag.RowsAffected() == 0 {
		return false, err
	}
	return true, pgInsertHistory(ctx, c.tx, s.ID, 0, hist)
}

// ContinueSeq implements rowcopy.Tx.
func (c copyTx) ContinueSeq(ctx context.Context) error {
	_, err := c.tx.Exec(ctx, `SELECT setval(pg_get_serial_sequence('sessions', 'seq'), (SELECT max(seq) FROM sessions))`)
	return err
}

// InsertThread implements rowcopy.Tx: the thread, counting its record,
// then the record's messages.
func (c copyTx) InsertThread(ctx context.Context, t rowcopy.Thread, record [][]byte) (bool, error) {
	tag, err := c.tx.Exec(ctx, `INSERT INTO threads (owner, id, updated_at, data, record_len, delivered_len) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (owner, id) DO NOTHING`, t.Owner, t.ID, t.UpdatedAt, t.Data, len(record), len(t.Delivered))
	if err != nil || tag.RowsAffected() == 0 {
		return false, err
	}
	if len(t.Delivered) > 0 {
		ids := make([][]byte, len(t.Delivered))
		for i, id := range t.Delivered {
			ids[i] = []byte(id)
		}
		if _, err := c.tx.Exec(ctx, `INSERT INTO thread_delivered (owner, id, position, message_id)
			SELECT $1, $2, m.ord - 1, m.id FROM unnest($3::bytea[]) WITH ORDINALITY AS m (id, ord)`, t.Owner, t.ID, ids); err != nil {
			return false, err
		}
	}
	if len(record) > 0 {
		if _, err := c.tx.Exec(ctx, `INSERT INTO thread_records (owner, id, position, data)
			SELECT $1, $2, m.ord - 1, m.data FROM unnest($3::bytea[]) WITH ORDINALITY AS m (data, ord)`, t.Owner, t.ID, record); err != nil {
			return false, err
		}
	}
	return true, nil
}
