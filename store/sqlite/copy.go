package sqlite

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/store/internal/rowcopy"
	"github.com/aapagui/aapagui/store/internal/rowscan"
)

func init() { rowcopy.FromSQLite = func(st any) rowcopy.Source { return copySource{st.(*Store)} } }

// copySource reads the store's rows as stored, for package transfer.
type copySource struct{ s *Store }

// Sessions implements rowcopy.Source.
func (c copySource) Sessions(ctx context.Context) ([]rowcopy.Session, error) {
	rows, err := c.s.r.QueryContext(ctx, `SELECT seq, id, owner, created_at, data, history_version FROM sessions ORDER BY seq`)
	if err != nil {
		return nil, fmt.Errorf("reading sessions: %w", err)
	}
	out, err := rowscan.Collect(rows, "reading sessions", func(scan rowscan.Scan) (rowcopy.Session, error) {
		var r rowcopy.Session
		var created int64
		err := scan(&r.Seq, &r.ID, &r.Owner, &created, &r.Data, &r.HistoryVersion)
		r.CreatedAt = fromMillis(created)
		return r, err
	})
	if cerr := rows.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("reading sessions: %w", cerr)
	}
	return out, err
}

// History implements rowcopy.Source: a long text held in parts is
// copied whole, into its entry.
func (c copySource) History(ctx context.Context, id string) ([][]byte, error) {
	what := "reading history of " + id
	rows, err := c.s.r.QueryContext(ctx, `SELECT data FROM history WHERE session_id = ? ORDER BY position`, id)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer func() { _ = rows.Close() }()
	hist, err := rowscan.Collect(rows, what, func(scan rowscan.Scan) ([]byte, error) {
		var b []byte
		err := scan(&b)
		return b, err
	})
	if err != nil {
		return nil, err
	}
	return store.ExpandRows(hist, c.s.historyParts(ctx, id))
}

// Threads implements rowcopy.Source.
func (c copySource) Threads(ctx context.Context) ([]rowcopy.Thread, error) {
	rows, err := c.s.r.QueryContext(ctx, `SELECT t.owner, t.id, `+sqliteThreadColumns+` FROM threads t ORDER BY t.owner, t.id`)
	if err != nil {
		return nil, fmt.Errorf("reading threads: %w", err)
	}
	out, err := rowscan.Collect(rows, "reading threads", func(scan rowscan.Scan) (rowcopy.Thread, error) {
		var t rowcopy.Thread
		var row threadRow
		if err := scan(append([]any{&t.Owner, &t.ID}, row.dest()...)...); err != nil {
			return t, err
		}
		t.UpdatedAt, t.Data = fromMillis(row.updated), row.data
		return t, json.Unmarshal([]byte(row.delivered), &t.Delivered)
	})
	if cerr := rows.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("reading threads: %w", cerr)
	}
	return out, err
}

// ThreadRecord implements rowcopy.Source: a long text held in parts is
// copied whole, into its message.
func (c copySource) ThreadRecord(ctx context.Context, owner, id string) ([][]byte, error) {
	what := "reading the record of thread " + id
	rows, err := c.s.r.QueryContext(ctx, `SELECT data FROM thread_records WHERE owner = ? AND id = ? ORDER BY position`, owner, id)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer func() { _ = rows.Close() }()
	rec, err := rowscan.Collect(rows, what, func(scan rowscan.Scan) ([]byte, error) {
		var b []byte
		err := scan(&b)
		return b, err
	})
	if err != nil {
		return nil, err
	}
	return store.ExpandRows(rec, c.s.recordParts(ctx, owner, id))
}
