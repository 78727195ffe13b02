package rowcopy

import (
	"context"
	"time"
)

// Session is a session's row as stored.
type Session struct {
	Seq       int64
	ID, Owner string
	CreatedAt time.Time
	Data      string
	// HistoryVersion is carried over, so that the copy is exact.
	HistoryVersion int64
}

// Thread is a thread's row as stored.
type Thread struct {
	Owner, ID string
	UpdatedAt time.Time
	Data      string
	// Delivered are the thread's delivered ids, which the stores keep in
	// rows of their own (store.EncodeThreadApart).
	Delivered []string
}

// Source reads a store's rows as stored.
type Source interface {
	// Sessions reads every session, in seq order.
	Sessions(ctx context.Context) ([]Session, error)
	// History reads a session's history entries, in order.
	History(ctx context.Context, id string) ([][]byte, error)
	// Threads reads every thread, by owner and id.
	Threads(ctx context.Context) ([]Thread, error)
	// ThreadRecord reads a thread's record, its messages in order.
	ThreadRecord(ctx context.Context, owner, id string) ([][]byte, error)
}

// Tx writes rows as stored into a store, in one transaction (Sink).
type Tx interface {
	// HasSessions reports whether the store holds a session.
	HasSessions(ctx context.Context) (bool, error)
	// InsertSession inserts s with its history hist, keeping s.Seq if
	// keepSeq; false when the store already has a session of that id (it
	// is left as it is).
	InsertSession(ctx context.Context, s Session, hist [][]byte, keepSeq bool) (bool, error)
	// ContinueSeq makes new sessions' seq continue after the highest one
	// stored.
	ContinueSeq(ctx context.Context) error
	// InsertThread inserts t with its record; false when the store
	// already has that thread (it is left as it is, record included).
	InsertThread(ctx context.Context, t Thread, record [][]byte) (bool, error)
}

// Sink runs fn in one transaction of a store, committed when fn returns
// nil and rolled back otherwise.
type Sink func(ctx context.Context, fn func(Tx) error) error

var (
	// FromSQLite is the Source of a *sqlite.Store; store/sqlite sets it.
	FromSQLite func(st any) Source
	// IntoPostgres is the Sink of a *postgres.Store; store/postgres sets
	// it.
	IntoPostgres func(st any) Sink
)
