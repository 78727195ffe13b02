package rowscan

import (
	"encoding/json"
	"fmt"

	"github.com/aapagui/aapagui/internal/textparts"
	"github.com/aapagui/aapagui/store"
)

// Rows is what database/sql's *sql.Rows and pgx's pgx.Rows have in common:
// the caller closes them.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// Scan reads the current row's columns into dest; its error is already
// wrapped.
type Scan func(dest ...any) error

// Collect calls read on each row of rows and returns what it built, in
// order (nil for no rows). An error of the rows themselves (a Scan, or the
// result set's) is wrapped as "what: err"; read's own errors (a row whose
// data does not decode) are returned as they are. The first error stops
// the loop.
func Collect[T any](rows Rows, what string, read func(Scan) (T, error)) ([]T, error) {
	scan := func(dest ...any) error {
		if err := rows.Scan(dest...); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		return nil
	}
	var out []T
	for rows.Next() {
		v, err := read(scan)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// History decodes the rows of a session LEFT JOIN its history, one entry
// per row (nil: the NULL of a session without entries), the long texts
// held in parts read with read. No rows at all is a session that does not
// exist: store.ErrNotFound.
func History(raw [][]byte, read textparts.Reader) ([]store.Entry, error) {
	if len(raw) == 0 {
		return nil, store.ErrNotFound
	}
	entries := raw[:0]
	for _, r := range raw {
		if r != nil {
			entries = append(entries, r)
		}
	}
	entries, err := store.ExpandRows(entries, read)
	if err != nil {
		return nil, err
	}
	return store.DecodeEntries(entries)
}

// Record is the record of the rows of a thread LEFT JOIN its record, one
// message per row (nil: the NULL of a thread without messages), never nil
// itself, the long texts held in parts read with read. No rows at all is
// a thread that does not exist: store.ErrNotFound.
func Record(raw [][]byte, read textparts.Reader) ([]json.RawMessage, error) {
	if len(raw) == 0 {
		return nil, store.ErrNotFound
	}
	out := make([]json.RawMessage, 0, len(raw))
	for _, r := range raw {
		if r != nil {
			out = append(out, r)
		}
	}
	return store.ExpandRows(out, read)
}

// Parts reads the rows of a query of text parts (part, data), in order,
// up to the first part missing (textparts.Reader).
func Parts(rows Rows, what string) ([][]byte, error) {
	var out [][]byte
	for rows.Next() {
		var i int
		var data []byte
		if err := rows.Scan(&i, &data); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		if i != len(out) {
			break
		}
		out = append(out, data)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}
