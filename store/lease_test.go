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
	require.NoError(t, s.CreateSession(ctx, storetest.Session("s1", ""), nil, 0))
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
	own, end := context.WithCancelCause(ctx) // a turn's own context (CancelOnLoss)
	defer end(nil)
	l.CancelOnLoss(end)
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
	<-own.Done()
	assert.ErrorIs(t, context.Cause(own), store.ErrLeaseLost, "a context the lease cancels ends with it")
	late, endLate := context.WithCancelCause(ctx)
	defer endLate(nil)
	l.CancelOnLoss(endLate)
	assert.ErrorIs(t, context.Cause(late), store.ErrLeaseLost, "a context given to a lost lease ends at once")
	l.Release()
	ok, _, err = s.Store.Lock(ctx, "s1", "third", time.Hour)
	require.NoError(t, err)
	assert.False(t, ok, "releasing a lost lease leaves the new holder's lock alone")
}

// A bound context of a lease released normally is not cancelled by it.
func TestLeaseBindOutlivesRelease(t *testing.T) {
	ctx := context.Background()
	s := store.NewMemory()
	require.NoError(t, s.CreateSession(ctx, storetest.Session("s1", ""), nil, 0))
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
	// refused: renewals fail at once instead, as PostgreSQL's do while
	// it restarts ("connection refused").
	refused atomic.Bool
}

func (s *stuckLocks) Lock(ctx context.Context, id, holder string, ttl time.Duration) (bool, time.Duration, error) {
	if s.stuck.Load() {
		<-ctx.Done()
		return false, 0, ctx.Err()
	}
	return s.Store.Lock(ctx, id, holder, ttl)
}

func (s *stuckLocks) RenewLock(ctx context.Context, id, holder string, ttl time.Duration) (bool, error) {
	if s.refused.Load() {
		return false, errors.New("dial tcp 127.0.0.1:5432: connect: connection refused")
	}
	if s.stuck.Load() {
		<-ctx.Done()
		return false, ctx.Err()
	}
	return s.Store.RenewLock(ctx, id, holder, ttl)
}

// lateLease takes s1's lock in s with a lease whose renewals then hang
// (a process or a store too busy to answer them) until it is late: past
// the point where it used to give itself up. It returns the lease and a
// context bound to it.
func lateLease(t *testing.T, s *stuckLocks, ttl time.Duration) (*store.Lease, context.Context) {
	ctx := context.Background()
	require.NoError(t, s.CreateSession(ctx, storetest.Session("s1", ""), nil, 0))
	late := make(chan struct{}, 1)
	l, err := store.TakeSession(ctx, s, "s1", store.LeaseOptions{TTL: ttl, OnError: func(op string, err error) {
		if op == "late" {
			assert.ErrorIs(t, err, store.ErrLeaseLate)
			select {
			case late <- struct{}{}:
			default:
			}
		}
	}})
	require.NoError(t, err)
	t.Cleanup(l.Release)
	bound, unbind := l.Bind(ctx)
	t.Cleanup(unbind)
	s.stuck.Store(true)
	select {
	case <-late:
	case <-time.After(10 * time.Second):
		t.Fatal("the lease's renewals were never late")
	}
	require.True(t, l.Lapsed())
	return l, bound
}

// A lease whose renewals are late, past the store's TTL, keeps its lock
// when nobody else took it: the late renewal finds the lock still the
// holder's and extends it. The turn goes on (its context does not end),
// the lock is held again, and its last write is made.
func TestLeaseLateRenewalKeepsLock(t *testing.T) {
	const ttl = 300 * time.Millisecond
	s := &stuckLocks{Store: store.NewMemory()}
	l, bound := lateLease(t, s, ttl)
	time.Sleep(ttl) // past the store's TTL, too
	s.stuck.Store(false)
	require.Eventually(t, func() bool { return !l.Lapsed() }, 10*time.Second, time.Millisecond, "a late renewal kept the lock")
	assert.NoError(t, bound.Err(), "the turn goes on")
	select {
	case <-l.Lost():
		t.Fatal("a lease nobody took was reported lost")
	default:
	}
	_, err := store.TakeSession(context.Background(), s, "s1", store.LeaseOptions{})
	require.ErrorIs(t, err, store.ErrHeld, "held again")
	writes := 0
	require.NoError(t, l.ReleaseWith(func(string) error { writes++; return nil }))
	assert.Equal(t, 1, writes, "the last write is made")
}

// A late lease whose lock another holder took meanwhile is lost at its
// next renewal: its bound contexts end with ErrLeaseLost, and its last
// write is not made, so that two turns never both finish one session.
func TestLeaseLateRenewalFindsAnotherHolder(t *testing.T) {
	const ttl = 300 * time.Millisecond
	s := &stuckLocks{Store: store.NewMemory()}
	l, bound := lateLease(t, s, ttl)
	require.Eventually(t, func() bool {
		ok, _, err := s.Store.Lock(context.Background(), "s1", "other", time.Hour)
		return err == nil && ok
	}, 10*time.Second, time.Millisecond, "the store lets the late lock go")
	s.stuck.Store(false)
	select {
	case <-bound.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the lease another holder took was kept")
	}
	assert.ErrorIs(t, context.Cause(bound), store.ErrLeaseLost)
	<-l.Lost()
	writes := 0
	err := l.ReleaseWith(func(string) error { writes++; return nil })
	assert.ErrorIs(t, err, store.ErrLeaseLost)
	assert.Zero(t, writes, "a lost lease's last write is not made")
}

// ReleaseWith tries a failed write again while the lease holds, and the
// lock is free once one try went through, even after a try that was
// stored but reported failed (its unlock done, and the lock renewed since).
func TestReleaseWithRetries(t *testing.T) {
	ctx := context.Background()
	s := store.NewMemory()
	require.NoError(t, s.CreateSession(ctx, storetest.Session("s1", ""), nil, 0))
	l, err := store.TakeSession(ctx, s, "s1", store.LeaseOptions{TTL: 2 * time.Second})
	require.NoError(t, err)
	tries := 0
	require.NoError(t, l.ReleaseWith(func(holder string) error {
		tries++
		switch tries {
		case 1:
			return errors.New("unexpected EOF")
		case 2: // stored, then the connection broke
			require.NoError(t, s.SaveSession(ctx, storetest.Session("s1", ""), nil, holder))
			return errors.New("unexpected EOF")
		}
		return nil // a retry that found it stored
	}))
	assert.Equal(t, 3, tries)
	other, err := store.TakeSession(ctx, s, "s1", store.LeaseOptions{})
	require.NoError(t, err, "the lock is free")
	other.Release()
}

// A lease whose renewals fail at once (a store that refuses connections
// while it restarts) is late shortly before the store may let its lock
// go, and renews every margin from then: the first renewal that goes
// through keeps the lock, and its turn goes on.
func TestLeaseRefusedRenewalsAreLate(t *testing.T) {
	const ttl = 400 * time.Millisecond
	ctx := context.Background()
	s := &stuckLocks{Store: store.NewMemory()}
	require.NoError(t, s.CreateSession(ctx, storetest.Session("s1", ""), nil, 0))
	var renewErrs, lates atomic.Int32
	l, err := store.TakeSession(ctx, s, "s1", store.LeaseOptions{TTL: ttl, OnError: func(op string, err error) {
		switch op {
		case "renew":
			renewErrs.Add(1)
		case "late":
			lates.Add(1)
		}
	}})
	require.NoError(t, err)
	t.Cleanup(l.Release)
	bound, unbind := l.Bind(ctx)
	t.Cleanup(unbind)
	s.refused.Store(true)
	require.Eventually(t, l.Lapsed, 10*time.Second, time.Millisecond, "renewals refused past the lease's doom make it late")
	assert.Equal(t, int32(1), lates.Load(), "late is told once")
	// Lapsed, it renews every margin (ttl/8: about 8 in a ttl), not every
	// ttl/3.
	before := renewErrs.Load()
	time.Sleep(ttl)
	assert.GreaterOrEqual(t, renewErrs.Load()-before, int32(4), "renewals while late, in a ttl")
	s.refused.Store(false)
	require.Eventually(t, func() bool { return !l.Lapsed() }, 10*time.Second, time.Millisecond, "a renewal that went through kept the lock")
	assert.NoError(t, bound.Err(), "the turn goes on")
	_, err = store.TakeSession(ctx, s, "s1", store.LeaseOptions{})
	require.ErrorIs(t, err, store.ErrHeld, "held again")
}
