package store_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/store/storetest"
)

// holderSpy records the holder of the last Lock.
type holderSpy struct {
	store.Store
	holder atomic.Value
}

func (s *holderSpy) Lock(ctx context.Context, id, holder string, ttl time.Duration) (bool, time.Duration, error) {
	s.holder.Store(holder)
	return s.Store.Lock(ctx, id, holder, ttl)
}

// A holder whose lock another holder took (it stalled past its TTL) is
// told by Lost.
func TestLeaseLost(t *testing.T) {
	ctx := context.Background()
	s := &holderSpy{Store: store.NewMemory()}
	require.NoError(t, s.CreateSession(ctx, storetest.Session("s1", ""), nil))
	var lost atomic.Int32
	l, err := store.TakeSession(ctx, s, "s1", store.LeaseOptions{TTL: 150 * time.Millisecond, OnError: func(op string, err error) {
		if op == "lost" {
			lost.Add(1)
		}
	}})
	require.NoError(t, err)
	defer l.Release()
	bound, unbind := l.Bind(ctx)
	defer unbind()
	// The lease ran out while its holder stalled, and another took it.
	require.NoError(t, s.Store.Unlock(ctx, "s1", s.holder.Load().(string)))
	ok, _, err := s.Store.Lock(ctx, "s1", "other", time.Hour)
	require.NoError(t, err)
	require.True(t, ok)
	select {
	case <-l.Lost():
	case <-time.After(5 * time.Second):
		t.Fatal("the lost lease was not reported")
	}
	assert.EqualValues(t, 1, lost.Load())
	<-bound.Done()
	assert.ErrorIs(t, context.Cause(bound), store.ErrLeaseLost, "a bound context ends with the lease")
	l.Release()
	ok, _, err = s.Store.Lock(ctx, "s1", "third", time.Hour)
	require.NoError(t, err)
	assert.False(t, ok, "releasing a lost lease leaves the new holder's lock alone")
}

// A bound context of a lease released normally is not cancelled by it.
func TestLeaseBindOutlivesRelease(t *testing.T) {
	ctx := context.Background()
	s := store.NewMemory()
	require.NoError(t, s.CreateSession(ctx, storetest.Session("s1", ""), nil))
	l, err := store.TakeSession(ctx, s, "s1", store.LeaseOptions{})
	require.NoError(t, err)
	bound, unbind := l.Bind(ctx)
	l.Release()
	time.Sleep(20 * time.Millisecond)
	assert.NoError(t, bound.Err())
	unbind()
	assert.ErrorIs(t, bound.Err(), context.Canceled)
}

// stuckLocks is a store whose renewals hang until their context ends, as
// a SQLite store's did with thousands of streams ("turn lock renew:
// context deadline exceeded"), once stuck is set.
type stuckLocks struct {
	store.Store
	stuck atomic.Bool
}

func (s *stuckLocks) Lock(ctx context.Context, id, holder string, ttl time.Duration) (bool, time.Duration, error) {
	if s.stuck.Load() {
		<-ctx.Done()
		return false, 0, ctx.Err()
	}
	return s.Store.Lock(ctx, id, holder, ttl)
}

// A lease whose renewals fail gives itself up before the store may give
// the lock to another holder: its bound contexts end (ErrLeaseExpired)
// and its last write is not made, so that two turns never write at once.
func TestLeaseExpiresBeforeTheStoreLetsItGo(t *testing.T) {
	ctx := context.Background()
	s := &stuckLocks{Store: store.NewMemory()}
	require.NoError(t, s.CreateSession(ctx, storetest.Session("s1", ""), nil))
	// The lease gives up TTL/8 before the store may let the lock go: a
	// TTL long enough that the margin (200ms) outlasts the timer delays of
	// a loaded machine running the race detector.
	const ttl = 1600 * time.Millisecond
	taken := time.Now()
	l, err := store.TakeSession(ctx, s, "s1", store.LeaseOptions{TTL: ttl})
	require.NoError(t, err)
	defer l.Release()
	bound, unbind := l.Bind(ctx)
	defer unbind()
	s.stuck.Store(true)
	select {
	case <-bound.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the lease that could not be renewed was kept")
	}
	assert.Less(t, time.Since(taken), ttl, "given up before the store could let it go")
	assert.ErrorIs(t, context.Cause(bound), store.ErrLeaseExpired)
	assert.ErrorIs(t, context.Cause(bound), store.ErrLeaseLost)
	<-l.Lost()
	writes := 0
	err = l.ReleaseWith(func(string) error { writes++; return nil })
	assert.ErrorIs(t, err, store.ErrLeaseLost)
	assert.Zero(t, writes, "a lost lease's last write is not made")
}

// ReleaseWith tries a failed write again while the lease holds, and the
// lock is free once one try went through, even after a try that was
// stored but reported failed (its unlock done, and the lock renewed since).
func TestReleaseWithRetries(t *testing.T) {
	ctx := context.Background()
	s := store.NewMemory()
	require.NoError(t, s.CreateSession(ctx, storetest.Session("s1", ""), nil))
	l, err := store.TakeSession(ctx, s, "s1", store.LeaseOptions{TTL: 2 * time.Second})
	require.NoError(t, err)
	tries := 0
	require.NoError(t, l.ReleaseWith(func(holder string) error {
		tries++
		switch tries {
		case 1:
			return errors.New("unexpected EOF")
		case 2: // stored, then the connection broke
			require.NoError(t, s.SaveSessionUnlock(ctx, storetest.Session("s1", ""), nil, holder))
			return errors.New("unexpected EOF")
		}
		return nil // a retry that found it stored
	}))
	assert.Equal(t, 3, tries)
	other, err := store.TakeSession(ctx, s, "s1", store.LeaseOptions{})
	require.NoError(t, err, "the lock is free")
	other.Release()
}
