package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/store"
)

// leaseTTL is the TTL of the leases the lease checks take.
const leaseTTL = 300 * time.Millisecond

// testLeases checks the Lease over a store: the heartbeat keeps a live
// holder's lock, a dead holder's lock runs out, and a release that fails is
// retried until it holds.
func testLeases(t *testing.T, open func(t *testing.T) store.Store) {
	runSteps(t, open, []step{
		{"held, then released", testLeaseHeldThenReleased},
		{"released by the turn's last save", testLeaseReleasedBySave},
		{"a last save stored though it failed", testLeaseSaveOfUnknownOutcome},
		{"take and load", testLeaseTakeAndLoad},
		{"each holder sees what the one before saved", testLeaseHoldersInTurn},
		{"the heartbeat keeps a live holder's lock", testLeaseHeartbeat},
		{"a dead holder's lock runs out", testLeaseDeadHolder},
		{"a failed release is retried", testLeaseReleaseRetried},
		{"renewals together", testLeaseRenewals},
		{"a late renewal keeps a lock nobody took", testLeaseLateRenewal},
	})
}

// testLeaseLateRenewal checks a store's RenewLock of a lock
// whose time has run out: still the holder's (nobody took it since), it
// is renewed and held again; taken by another holder meanwhile, even one
// whose own time has run out too, or released, it is not.
func testLeaseLateRenewal(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	r := s
	const short = 10 * time.Millisecond
	for _, id := range []string{"s1", "s2", "s3"} {
		require.NoError(t, s.CreateSession(ctx, Session(id, ""), nil, 0))
		ok, _, err := s.Lock(ctx, id, "h", short)
		require.NoError(t, err)
		require.True(t, ok)
		ok, _, err = s.LockThread(ctx, "k", "t"+id, "h", short)
		require.NoError(t, err)
		require.True(t, ok)
	}
	time.Sleep(10 * short) // every lock ran out
	ok, _, err := s.Lock(ctx, "s2", "other", short)
	require.NoError(t, err)
	require.True(t, ok, "a lock that ran out is free to take")
	ok, _, err = s.LockThread(ctx, "k", "ts2", "other", short)
	require.NoError(t, err)
	require.True(t, ok, "a lock that ran out is free to take")
	require.NoError(t, s.Unlock(ctx, "s3", "h"))
	require.NoError(t, s.UnlockThread(ctx, "k", "ts3", "h"))
	time.Sleep(10 * short) // the other holder's ran out too

	for _, c := range []struct {
		id   string
		want bool
		why  string
	}{{"s1", true, "late, nobody took it"}, {"s2", false, "another holder took it"}, {"s3", false, "released"}} {
		ok, err := r.RenewLock(ctx, c.id, "h", time.Hour)
		require.NoError(t, err)
		assert.Equal(t, c.want, ok, "session lock: %s", c.why)
		ok, err = r.RenewThreadLock(ctx, "k", "t"+c.id, "h", time.Hour)
		require.NoError(t, err)
		assert.Equal(t, c.want, ok, "thread lock: %s", c.why)
	}
	ok, _, err = s.Lock(ctx, "s1", "third", time.Hour)
	require.NoError(t, err)
	assert.False(t, ok, "the renewed lock is held again")
	ok, _, err = s.LockThread(ctx, "k", "ts1", "third", time.Hour)
	require.NoError(t, err)
	assert.False(t, ok, "the renewed lock is held again")
}

// testLeaseRenewals checks a store's RenewLock: renewals sent together
// renew each holder's own lock, session or thread, and report a lock that
// is not the holder's (another holder has it, or the session is gone) as
// not renewed. (That a renewal extends the lock, the heartbeat check
// shows: the Lease renews through it.)
func testLeaseRenewals(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	r := s
	const n = 20
	for i := range n {
		id := fmt.Sprint("s", i)
		require.NoError(t, s.CreateSession(ctx, Session(id, ""), nil, 0))
		ok, _, err := s.Lock(ctx, id, "h"+id, time.Hour)
		require.True(t, ok)
		require.NoError(t, err)
		ok, _, err = s.LockThread(ctx, "k", "t"+id, "h"+id, time.Hour)
		require.True(t, ok)
		require.NoError(t, err)
	}
	type result struct {
		ok  bool
		err error
	}
	results := make([]result, 4*n)
	done := make(chan struct{})
	for i := range n {
		id := fmt.Sprint("s", i)
		for j, renew := range []func() (bool, error){
			func() (bool, error) { return r.RenewLock(ctx, id, "h"+id, time.Hour) },
			func() (bool, error) { return r.RenewThreadLock(ctx, "k", "t"+id, "h"+id, time.Hour) },
			func() (bool, error) { return r.RenewLock(ctx, id, "other", time.Hour) },
			func() (bool, error) { return r.RenewThreadLock(ctx, "k", "t"+id, "other", time.Hour) },
		} {
			go func() {
				ok, err := renew()
				results[4*i+j] = result{ok, err}
				done <- struct{}{}
			}()
		}
	}
	for range 4 * n {
		<-done
	}
	for i, res := range results {
		require.NoError(t, res.err, "renewal %d", i)
		assert.Equal(t, i%4 < 2, res.ok, "renewal %d", i)
	}
	require.NoError(t, s.DeleteSession(ctx, "", "s4"))
	ok, err := r.RenewLock(ctx, "s4", "hs4", time.Hour)
	if !errors.Is(err, store.ErrNotFound) { // (a store renewing with Lock says so)
		require.NoError(t, err)
	}
	assert.False(t, ok, "the session is gone")
}

// testLeaseHeldThenReleased checks that a taken session is held, and free as soon as Release returns.
func testLeaseHeldThenReleased(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	opts := store.LeaseOptions{TTL: leaseTTL}
	s := open(t)
	require.NoError(t, s.CreateSession(ctx, Session("s1", ""), nil, 0))
	a, err := store.TakeSession(ctx, s, "s1", opts)
	require.NoError(t, err)
	_, err = store.TakeSession(ctx, s, "s1", opts)
	var held *store.HeldError
	require.ErrorAs(t, err, &held)
	require.ErrorIs(t, err, store.ErrHeld)
	assert.Greater(t, held.Left, time.Duration(0))
	assert.LessOrEqual(t, held.Left, leaseTTL)
	a.Release()
	b, err := store.TakeSession(ctx, s, "s1", opts)
	require.NoError(t, err, "free as soon as Release returns")
	b.Release()
	b.Release() // twice is harmless

	_, err = store.TakeSession(ctx, s, "missing", opts)
	require.ErrorIs(t, err, store.ErrNotFound)
}

// testLeaseReleasedBySave checks that ReleaseWith frees the lock with the turn's last save, even a failed one.
func testLeaseReleasedBySave(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	opts := store.LeaseOptions{TTL: leaseTTL}
	// ReleaseWith gives the write the lease's holder, so that
	// SaveSession with the holder saves and frees the lock in one write; after
	// a heartbeat (the renewal has stopped, so the lock stays free).
	s := open(t)
	require.NoError(t, s.CreateSession(ctx, Session("s1", ""), nil, 0))
	a, _, _, err := store.TakeAndLoadSession(ctx, s, "", "s1", 0, opts)
	require.NoError(t, err)
	time.Sleep(leaseTTL / 2)
	writes := 0
	require.NoError(t, a.ReleaseWith(func(holder string) error {
		writes++
		return s.SaveSession(ctx, Session("s1", ""), Users("u1"), holder)
	}))
	assert.Equal(t, 1, writes)
	time.Sleep(leaseTTL / 2)
	b, err := store.TakeSession(ctx, s, "s1", opts)
	require.NoError(t, err, "the save freed the lock")
	assert.Equal(t, Users("u1"), History(t, s, "s1"))

	// A failed write still frees the lock, as Release does.
	failed := errors.New("disk full")
	require.ErrorIs(t, b.ReleaseWith(func(string) error { return failed }), failed)
	c, err := store.TakeSession(ctx, s, "s1", opts)
	require.NoError(t, err, "free after a failed last save")

	// After Release it only writes.
	c.Release()
	require.NoError(t, c.ReleaseWith(func(holder string) error {
		writes++
		return s.SaveSession(ctx, Session("s1", ""), Users("u2"), holder)
	}))
	assert.Equal(t, 2, writes)
	assert.Equal(t, Users("u1", "u2"), History(t, s, "s1"))
}

// testLeaseSaveOfUnknownOutcome: a run's last save that was stored, and
// so freed the lock, but whose answer was lost (the database restarted
// at the commit) is tried again and holds: the lease takes the freed lock
// again rather than take it for lost, so the run is acknowledged, not
// failed (a client that then dropped its message would find the thread
// moved on without it).
func testLeaseSaveOfUnknownOutcome(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	opts := store.LeaseOptions{TTL: leaseTTL}
	s := open(t)
	l, err := store.TakeThread(ctx, s, "", "t1", opts)
	require.NoError(t, err)
	lost := errors.New("the connection broke at the commit")
	tries := 0
	require.NoError(t, l.ReleaseWith(func(holder string) error {
		tries++
		err := s.SaveThread(ctx, &store.Thread{ID: "t1", SessionID: "sess-1", Delivered: []string{"u1"}}, holder)
		if tries == 1 {
			require.NoError(t, err)
			return lost // stored, and its lock freed, but the answer lost
		}
		return err
	}), "the save is tried again and holds")
	assert.Equal(t, 2, tries)
	th, err := s.GetThread(ctx, "", "t1")
	require.NoError(t, err)
	assert.Equal(t, []string{"u1"}, th.Delivered)
	_, err = store.TakeThread(ctx, s, "", "t1", opts)
	require.NoError(t, err, "the lock is free after the save")
}

// testLeaseTakeAndLoad checks that store.TakeAndLoadSession locks and reads the owner's session only.
func testLeaseTakeAndLoad(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	opts := store.LeaseOptions{TTL: leaseTTL}
	// store.TakeAndLoadSession (one round trip on PostgreSQL) locks
	// the owner's session and reads it with its history; another
	// owner's session is not found and its lock left alone.
	s := open(t)
	require.NoError(t, s.CreateSession(ctx, Session("s1", "alice"), Users("u1", "u2"), 0))
	_, _, _, err := store.TakeAndLoadSession(ctx, s, "bob", "s1", 0, opts)
	require.ErrorIs(t, err, store.ErrNotFound, "another owner's session")
	_, _, _, err = store.TakeAndLoadSession(ctx, s, "alice", "missing", 0, opts)
	require.ErrorIs(t, err, store.ErrNotFound)

	a, sess, hist, err := store.TakeAndLoadSession(ctx, s, "alice", "s1", 0, opts)
	require.NoError(t, err, "bob's attempt did not take the lock")
	want, err := s.GetSession(ctx, "alice", "s1")
	require.NoError(t, err)
	assert.Equal(t, want, sess)
	assert.Equal(t, Users("u1", "u2"), hist)

	_, _, _, err = store.TakeAndLoadSession(ctx, s, "alice", "s1", 0, opts)
	var held *store.HeldError
	require.ErrorAs(t, err, &held)
	assert.Greater(t, held.Left, time.Duration(0))
	_, err = store.TakeSession(ctx, s, "s1", opts)
	require.ErrorIs(t, err, store.ErrHeld, "one lock for both ways of taking it")
	time.Sleep(3 * leaseTTL)
	_, _, _, err = store.TakeAndLoadSession(ctx, s, "alice", "s1", 0, opts)
	require.ErrorIs(t, err, store.ErrHeld, "the heartbeat renews it")
	a.Release()
	b, _, _, err := store.TakeAndLoadSession(ctx, s, "alice", "s1", 0, opts)
	require.NoError(t, err, "free as soon as Release returns")
	b.Release()
}

// testLeaseHoldersInTurn checks that contending holders each read what the one before saved.
func testLeaseHoldersInTurn(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	opts := store.LeaseOptions{TTL: leaseTTL}
	// Holders contend for one session; each appends an entry naming
	// how many it found, then releases. The history is then 0, 1, 2,
	// …: nobody read it from before the previous holder's append.
	s := open(t)
	require.NoError(t, s.CreateSession(ctx, Session("s1", ""), nil, 0))
	const workers, each = 4, 10
	errs := make(chan error, workers)
	for range workers {
		go func() {
			for done := 0; done < each; {
				l, _, hist, err := store.TakeAndLoadSession(ctx, s, "", "s1", 0, opts)
				if errors.Is(err, store.ErrHeld) {
					time.Sleep(time.Millisecond)
					continue
				}
				if err != nil {
					errs <- err
					return
				}
				err = s.AppendHistory(ctx, "s1", Users(fmt.Sprint(len(hist))))
				l.Release()
				if err != nil {
					errs <- err
					return
				}
				done++
			}
			errs <- nil
		}()
	}
	for range workers {
		require.NoError(t, <-errs)
	}
	want := make([]string, workers*each)
	for i := range want {
		want[i] = fmt.Sprint(i)
	}
	assert.Equal(t, Users(want...), History(t, s, "s1"))
}

// testLeaseHeartbeat checks that the heartbeat renews a live holder's session and thread locks.
func testLeaseHeartbeat(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	opts := store.LeaseOptions{TTL: leaseTTL}
	s := open(t)
	require.NoError(t, s.CreateSession(ctx, Session("s1", ""), nil, 0))
	a, err := store.TakeSession(ctx, s, "s1", opts)
	require.NoError(t, err)
	defer a.Release()
	th, err := store.TakeThread(ctx, s, "k", "t1", opts)
	require.NoError(t, err)
	defer th.Release()
	time.Sleep(3 * leaseTTL)
	_, err = store.TakeSession(ctx, s, "s1", opts)
	require.ErrorIs(t, err, store.ErrHeld, "renewed past its first TTL")
	_, err = store.TakeThread(ctx, s, "k", "t1", opts)
	require.ErrorIs(t, err, store.ErrHeld, "renewed past its first TTL")
	select {
	case <-a.Lost():
		t.Fatal("a renewed lease was reported lost")
	default:
	}
}

// testLeaseDeadHolder checks that a lock never renewed can be taken once its TTL runs out.
func testLeaseDeadHolder(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	opts := store.LeaseOptions{TTL: leaseTTL}
	s := open(t)
	require.NoError(t, s.CreateSession(ctx, Session("s1", ""), nil, 0))
	// A holder that died: it took the lock and never renewed it.
	ok, _, err := s.Lock(ctx, "s1", "dead", leaseTTL)
	require.NoError(t, err)
	require.True(t, ok)
	ok, _, err = s.LockThread(ctx, "k", "t1", "dead", leaseTTL)
	require.NoError(t, err)
	require.True(t, ok)
	_, err = store.TakeSession(ctx, s, "s1", opts)
	require.ErrorIs(t, err, store.ErrHeld)
	time.Sleep(leaseTTL + 50*time.Millisecond)
	l, err := store.TakeSession(ctx, s, "s1", opts)
	require.NoError(t, err, "taken over once the dead holder's lease ran out")
	l.Release()
	l, err = store.TakeThread(ctx, s, "k", "t1", opts)
	require.NoError(t, err, "taken over once the dead holder's lease ran out")
	l.Release()
}

// testLeaseReleaseRetried checks that a release that fails is retried and reported until it holds.
func testLeaseReleaseRetried(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	opts := store.LeaseOptions{TTL: leaseTTL}
	s := &flakyUnlock{Store: open(t)}
	s.fail.Store(3)
	require.NoError(t, s.CreateSession(ctx, Session("s1", ""), nil, 0))
	var errs atomic.Int32
	l, err := store.TakeSession(ctx, s, "s1", store.LeaseOptions{TTL: time.Hour, OnError: func(op string, err error) {
		if op == "release" {
			errs.Add(1)
		}
	}})
	require.NoError(t, err)
	l.Release()
	assert.EqualValues(t, 3, errs.Load(), "each failed attempt is reported")
	next, err := store.TakeSession(ctx, s, "s1", opts)
	require.NoError(t, err, "free when Release returns, although its first attempts failed")
	next.Release()

	s.fail.Store(3)
	th, err := store.TakeThread(ctx, s, "k", "t1", store.LeaseOptions{TTL: time.Hour})
	require.NoError(t, err)
	th.Release()
	th, err = store.TakeThread(ctx, s, "k", "t1", opts)
	require.NoError(t, err)
	th.Release()
}

// flakyUnlock fails the next n unlocks, as a store does when its writer is
// busy past the caller's deadline.
type flakyUnlock struct {
	store.Store
	fail atomic.Int32
}

var errBusy = errors.New("unlock: context deadline exceeded")

func (s *flakyUnlock) Unlock(ctx context.Context, id, holder string) error {
	if s.fail.Add(-1) >= 0 {
		return errBusy
	}
	return s.Store.Unlock(ctx, id, holder)
}

func (s *flakyUnlock) UnlockThread(ctx context.Context, owner, id, holder string) error {
	if s.fail.Add(-1) >= 0 {
		return errBusy
	}
	return s.Store.UnlockThread(ctx, owner, id, holder)
}
