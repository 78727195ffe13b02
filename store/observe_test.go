package store_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/store/sqlite"
	"github.com/aapagui/aapagui/store/storetest"
)

type ctxKey struct{}

// TestObserve runs the conformance suite on an observed memory store: the
// store behaves the same, every operation is reported with its result, and
// runs with the context the observer returned.
func TestObserve(t *testing.T) {
	var mu sync.Mutex
	calls, errs, started := map[string]int{}, map[string]int{}, 0
	observer := func(ctx context.Context, op string) (context.Context, func(error)) {
		mu.Lock()
		started++
		mu.Unlock()
		return context.WithValue(ctx, ctxKey{}, op), func(err error) {
			mu.Lock()
			defer mu.Unlock()
			calls[op]++
			if err != nil {
				errs[op]++
			}
		}
	}
	t.Run("conformance", func(t *testing.T) {
		storetest.Run(t, func(*testing.T) store.Store { return store.Observe(store.NewMemory(), observer) })
	})
	mu.Lock()
	for _, op := range []string{"CreateSession", "GetSession", "ListSessions", "SaveSession", "SaveSessionUnlock", "DeleteSession",
		"AppendHistory", "ReplaceTail", "History", "Lock", "Unlock", "GetThread", "SaveThread", "SaveThreadUnlock", "LockThread", "UnlockThread",
		"ThreadRecord", "StartRunLog", "AppendRunLog", "GetRunLog", "LatestRunLog", "ReadRunLog", "DeleteRunLogs", "StopRunLog", "StoppingRunLogs"} {
		assert.Positive(t, calls[op], op)
	}
	assert.Positive(t, errs["GetSession"], "ErrNotFound is reported as the result")
	n := 0
	for _, c := range calls {
		n += c
	}
	assert.Equal(t, started, n, "every operation started also ended")
	mu.Unlock()

	// The operation runs with the observer's context.
	var seen any
	st := store.Observe(ctxStore{Store: store.NewMemory(), seen: &seen}, observer)
	assert.NoError(t, st.Ping(context.Background()))
	assert.Equal(t, "Ping", seen)
	assert.True(t, errors.Is(st.DeleteSession(context.Background(), "", "nope"), store.ErrNotFound))

	// A store that takes a lock and loads in one round trip (SQLite) keeps
	// doing so.
	sq, err := sqlite.Open(filepath.Join(t.TempDir(), "s.db"))
	require.NoError(t, err)
	defer sq.Close()
	require.NoError(t, sq.CreateSession(context.Background(), &store.Session{ID: "s1", Owner: "alice"}, nil, 0))
	st = store.Observe(sq, observer)
	mu.Lock()
	before := calls["LockLoadSession"]
	mu.Unlock()
	l, sess, _, err := store.TakeAndLoadSession(context.Background(), st, "alice", "s1", 0, store.LeaseOptions{})
	require.NoError(t, err)
	l.Release()
	assert.Equal(t, "s1", sess.ID)
	mu.Lock()
	assert.Equal(t, before+1, calls["LockLoadSession"])
	mu.Unlock()
}

type ctxStore struct {
	store.Store
	seen *any
}

func (s ctxStore) Ping(ctx context.Context) error {
	*s.seen = ctx.Value(ctxKey{})
	return nil
}

// renewCounter is a store that counts the renewals that reach it.
type renewCounter struct {
	store.Store
	renewals int
}

func (s *renewCounter) RenewLock(context.Context, string, string, time.Duration) (bool, error) {
	s.renewals++
	return true, nil
}

func (s *renewCounter) RenewThreadLock(context.Context, string, string, string, time.Duration) (bool, error) {
	s.renewals++
	return true, nil
}

// An observed store's heartbeats reach the store's own RenewLock (the
// lane ahead of its other writes), not its Lock: the bridges observe
// every store they use.
func TestObservedRenewalsKeepTheirLane(t *testing.T) {
	under := &renewCounter{Store: store.NewMemory()}
	st := store.Observe(under, func(ctx context.Context, _ string) (context.Context, func(error)) { return ctx, func(error) {} })
	r := st
	_, err := r.RenewLock(context.Background(), "s1", "h", time.Second)
	require.NoError(t, err)
	_, err = r.RenewThreadLock(context.Background(), "k", "t1", "h", time.Second)
	require.NoError(t, err)
	assert.Equal(t, 2, under.renewals)
}
