package bridgetest

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/internal/testkit/pgtest"
	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/store/postgres"
	"github.com/aapagui/aapagui/store/sqlite"
)

// Store is a store a test or benchmark runs on, opened fresh by Open and
// closed when it ends.
type Store struct {
	Name string
	Open func(tb testing.TB) store.Store
}

// Stores are memory, SQLite in a temp file and PostgreSQL (a schema of
// its own; a test of it is skipped without a database, see pgtest).
func Stores() []Store {
	return []Store{
		{"memory", func(testing.TB) store.Store { return store.NewMemory() }},
		{"sqlite", func(tb testing.TB) store.Store {
			s, err := sqlite.Open(filepath.Join(tb.TempDir(), "s.db"))
			require.NoError(tb, err)
			tb.Cleanup(func() { _ = s.Close() })
			return s
		}},
		{"postgres", func(tb testing.TB) store.Store {
			s, err := postgres.Open(context.Background(), pgtest.Schema(tb))
			require.NoError(tb, err)
			tb.Cleanup(func() { _ = s.Close() })
			return s
		}},
	}
}

// Replicas are the processes a test of several replicas runs on: Open
// returns the stores of two processes, one (memory: both are the one
// store) or two sharing a database (a SQLite file, PostgreSQL: each
// process's own connections).
type Replicas struct {
	Name string
	Open func(t *testing.T) (a, b store.Store)
}

// ReplicaSetups are one process, two processes on one SQLite file and two
// on PostgreSQL (skipped without a database, see pgtest).
func ReplicaSetups() []Replicas {
	return []Replicas{
		{"one process", func(*testing.T) (store.Store, store.Store) { st := store.NewMemory(); return st, st }},
		{"two processes on one SQLite file", func(t *testing.T) (store.Store, store.Store) {
			path := filepath.Join(t.TempDir(), "s.db")
			open := func() store.Store {
				st, err := sqlite.Open(path)
				require.NoError(t, err)
				t.Cleanup(func() { _ = st.Close() })
				return st
			}
			return open(), open()
		}},
		{"two processes on PostgreSQL", func(t *testing.T) (store.Store, store.Store) {
			dsn := pgtest.Schema(t)
			open := func() store.Store {
				st, err := postgres.Open(context.Background(), dsn)
				require.NoError(t, err)
				t.Cleanup(func() { _ = st.Close() })
				return st
			}
			return open(), open()
		}},
	}
}

// FailingUnlocks fails the next N releases of a lock (of a session or a
// thread), as the SQLite store did under load ("unlock: context deadline
// exceeded").
type FailingUnlocks struct {
	store.Store
	N atomic.Int32
}

// Unlock fails while N was positive, then releases the session.
func (s *FailingUnlocks) Unlock(ctx context.Context, id, holder string) error {
	if s.N.Add(-1) >= 0 {
		return context.DeadlineExceeded
	}
	return s.Store.Unlock(ctx, id, holder)
}

// UnlockThread fails while N was positive, then releases the thread.
func (s *FailingUnlocks) UnlockThread(ctx context.Context, owner, id, holder string) error {
	if s.N.Add(-1) >= 0 {
		return context.DeadlineExceeded
	}
	return s.Store.UnlockThread(ctx, owner, id, holder)
}

// DownStore is a store whose database cannot be reached.
type DownStore struct{ store.Store }

// Ping fails as an unreachable database does.
func (DownStore) Ping(context.Context) error { return errors.New("dial tcp: connection refused") }

// RequireLeaseLeft checks a 409's Retry-After and the time the running
// turn's lease has left, in the body: within the lease's TTL.
func RequireLeaseLeft(t *testing.T, h http.Header, body string) {
	t.Helper()
	secs, err := strconv.Atoi(h.Get("Retry-After"))
	require.NoError(t, err, "Retry-After %q", h.Get("Retry-After"))
	assert.GreaterOrEqual(t, secs, 1)
	assert.LessOrEqual(t, secs, int(store.LeaseTTL.Seconds()))
	var er struct {
		Error struct {
			LeaseRemainingMs int64 `json:"leaseRemainingMs"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &er), body)
	assert.Positive(t, er.Error.LeaseRemainingMs, body)
	assert.LessOrEqual(t, er.Error.LeaseRemainingMs, store.LeaseTTL.Milliseconds(), body)
}

// OnEachStore runs test on each of Stores, as a subtest named after it.
func OnEachStore(t *testing.T, test func(t *testing.T, st store.Store)) {
	for _, st := range Stores() {
		t.Run(st.Name, func(t *testing.T) { test(t, st.Open(t)) })
	}
}

// PartsStore is a store that counts the parts of long texts it is given
// (AddHistoryPart, AddRecordPart).
type PartsStore struct {
	store.Store
	Parts atomic.Int64
}

// AddHistoryPart is the store's, counted.
func (s *PartsStore) AddHistoryPart(ctx context.Context, id string, part store.TextPart) error {
	s.Parts.Add(1)
	return s.Store.AddHistoryPart(ctx, id, part)
}

// AddRecordPart is the store's, counted.
func (s *PartsStore) AddRecordPart(ctx context.Context, owner, id string, part store.TextPart) error {
	s.Parts.Add(1)
	return s.Store.AddRecordPart(ctx, owner, id, part)
}

// LongDeltas are the deltas of an answer of 2.5 MiB (two parts of a MiB
// and a rest, internal/textparts), with runes of two and four bytes and
// characters JSON escapes among them.
func LongDeltas() []string {
	var deltas []string
	for n := 0; n < 5<<19; n += 60_003 {
		deltas = append(deltas, strings.Repeat("wörd 🎉 ", 5000), "\"é\"\n")
	}
	return deltas
}
