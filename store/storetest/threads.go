package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/store"
)

// testThreads checks the ThreadStore: threads saved, listed, deleted and locked, per owner.
func testThreads(t *testing.T, open func(t *testing.T) store.Store) {
	runSteps(t, open, []step{
		{"missing thread", testThreadMissing},
		{"round trip and replace", testThreadRoundTrip},
		{"list and delete", testThreadListDelete},
		{"every page", testThreadPages},
		{"owners are isolated", testThreadOwners},
		{"locks", testThreadLocks},
		{"save and unlock", testThreadSaveUnlock},
		{"delivered ids from DeliveredFrom", testThreadDeliveredFrom},
	})
}

// testThreadDeliveredFrom checks that a save with DeliveredFrom keeps the
// ids before it as stored and makes the rest Delivered's: a run's ids
// added, a thread shortened, a DeliveredFrom past the stored ids (which
// writes them all), in a listing as in GetThread; a save leaves it at 0.
func testThreadDeliveredFrom(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	read := func() []string {
		t.Helper()
		th, err := s.GetThread(ctx, "k1", "t1")
		require.NoError(t, err)
		listed, err := s.ListThreads(ctx, "k1", store.ThreadPage{}, 10)
		require.NoError(t, err)
		require.Len(t, listed, 1)
		assert.Equal(t, th.Delivered, listed[0].Delivered, "listed")
		return th.Delivered
	}
	th := &store.Thread{Owner: "k1", ID: "t1", SessionID: "s", Delivered: []string{"m1", "m2", "m3"}}
	require.NoError(t, s.SaveThread(ctx, th, ""))
	assert.Equal(t, []string{"m1", "m2", "m3"}, read())
	assert.Zero(t, th.DeliveredFrom, "a save leaves DeliveredFrom at 0")

	th.Delivered, th.DeliveredFrom = append(th.Delivered, "m4", "m5"), 3
	require.NoError(t, s.SaveThread(ctx, th, ""))
	assert.Equal(t, []string{"m1", "m2", "m3", "m4", "m5"}, read(), "a run's ids added")

	th.Delivered, th.DeliveredFrom = []string{"m1", "x2"}, 1
	require.NoError(t, s.SaveThread(ctx, th, ""))
	assert.Equal(t, []string{"m1", "x2"}, read(), "changed from DeliveredFrom on, and shortened")

	th.Delivered, th.DeliveredFrom = []string{"n1", "n2", "n3", "n4"}, 3
	require.NoError(t, s.SaveThread(ctx, th, ""))
	assert.Equal(t, []string{"n1", "n2", "n3", "n4"}, read(), "past the stored ids: all written")

	th.Delivered = nil
	require.NoError(t, s.SaveThread(ctx, th, ""))
	assert.Empty(t, read(), "a thread moved to a new session")
}

// testThreadMissing checks that GetThread of a missing thread is ErrNotFound.
func testThreadMissing(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	_, err := open(t).GetThread(ctx, "k1", "t1")
	require.ErrorIs(t, err, store.ErrNotFound)
}

// testThreadRoundTrip checks that a saved thread reads back whole, and a second save replaces it.
func testThreadRoundTrip(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	th := &store.Thread{
		Owner: "k1", ID: "t1", Agent: "demo", SessionID: "sess_1",
		Delivered: []string{"m1", "m2"}, ToolsDigest: "abc", ContextDigest: "def",
		ClientCalls: []string{"call_1"},
		Interrupts:  []types.Interrupt{{ID: "perm-call_2", Reason: "tool_call", ToolCallID: "call_2", Message: "<allow?>"}},
		RunID:       "run-1",
	}
	require.NoError(t, s.SaveThread(ctx, th, ""))
	got, err := s.GetThread(ctx, "k1", "t1")
	require.NoError(t, err)
	assert.Equal(t, th.Delivered, got.Delivered)
	assert.Equal(t, th.Interrupts, got.Interrupts)
	assert.Equal(t, "sess_1", got.SessionID)
	assert.Equal(t, []string{"call_1"}, got.ClientCalls)
	assert.Equal(t, "run-1", got.RunID)
	assert.WithinDuration(t, time.Now(), got.UpdatedAt, time.Minute)

	th.SessionID, th.Delivered, th.Interrupts = "sess_2", []string{"m9"}, nil
	require.NoError(t, s.SaveThread(ctx, th, ""))
	got, err = s.GetThread(ctx, "k1", "t1")
	require.NoError(t, err)
	assert.Equal(t, "sess_2", got.SessionID)
	assert.Equal(t, []string{"m9"}, got.Delivered)
	assert.Empty(t, got.Interrupts)
}

// testThreadListDelete checks ListThreads (newest activity first, paged) and DeleteThread, per owner.
func testThreadListDelete(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	// Five threads of k1 saved one after the other, one of k2.
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		require.NoError(t, s.SaveThread(ctx, &store.Thread{Owner: "k1", ID: id, Agent: "demo", Title: "title " + id}, ""))
		time.Sleep(2 * time.Millisecond) // distinct activity times on every store's clock
	}
	require.NoError(t, s.SaveThread(ctx, &store.Thread{Owner: "k2", ID: "x", Agent: "demo"}, ""))
	// Activity moves b to the front.
	b, err := s.GetThread(ctx, "k1", "b")
	require.NoError(t, err)
	created := b.CreatedAt
	b.Delivered = []string{"m1"}
	require.NoError(t, s.SaveThread(ctx, b, ""))
	// A save that is no activity keeps d where it was, and its data.
	time.Sleep(2 * time.Millisecond)
	d, err := s.GetThread(ctx, "k1", "d")
	require.NoError(t, err)
	d.Delivered, d.KeepUpdatedAt = []string{"hist-1"}, true
	require.NoError(t, s.SaveThread(ctx, d, ""))
	d2, err := s.GetThread(ctx, "k1", "d")
	require.NoError(t, err)
	assert.Equal(t, []string{"hist-1"}, d2.Delivered)
	assert.Equal(t, d.UpdatedAt, d2.UpdatedAt, "the last activity kept")
	assert.False(t, d2.KeepUpdatedAt, "not stored")
	// A new thread saved that way still gets a time.
	require.NoError(t, s.SaveThread(ctx, &store.Thread{Owner: "k3", ID: "n", KeepUpdatedAt: true}, ""))
	n, err := s.ListThreads(ctx, "k3", store.ThreadPage{}, 10)
	require.NoError(t, err)
	require.Len(t, n, 1)
	assert.False(t, n[0].UpdatedAt.IsZero())

	var ids []string
	var after store.ThreadPage
	for {
		page, err := s.ListThreads(ctx, "k1", after, 2)
		require.NoError(t, err)
		require.LessOrEqual(t, len(page), 2)
		for _, th := range page {
			ids = append(ids, th.ID)
		}
		if len(page) < 2 {
			break
		}
		after = page[len(page)-1].Next()
	}
	assert.Equal(t, []string{"b", "e", "d", "c", "a"}, ids, "newest activity first, paged two at a time")
	all, err := s.ListThreads(ctx, "k1", store.ThreadPage{}, 10)
	require.NoError(t, err)
	require.Len(t, all, 5)
	assert.Equal(t, "title b", all[0].Title)
	assert.Equal(t, created, all[0].CreatedAt, "creation time kept across saves")
	assert.True(t, all[0].UpdatedAt.After(created), "last activity moved on")
	none, err := s.ListThreads(ctx, "k1", store.ThreadPage{}, 0)
	require.NoError(t, err)
	assert.Empty(t, none)

	require.ErrorIs(t, s.DeleteThread(ctx, "k2", "b"), store.ErrNotFound, "another owner's thread")
	require.NoError(t, s.DeleteThread(ctx, "k1", "b"))
	_, err = s.GetThread(ctx, "k1", "b")
	require.ErrorIs(t, err, store.ErrNotFound)
	require.ErrorIs(t, s.DeleteThread(ctx, "k1", "b"), store.ErrNotFound)
	all, err = s.ListThreads(ctx, "k1", store.ThreadPage{}, 10)
	require.NoError(t, err)
	assert.Len(t, all, 4)
	k2, err := s.ListThreads(ctx, "k2", store.ThreadPage{}, 10)
	require.NoError(t, err)
	require.Len(t, k2, 1)
	assert.Equal(t, "x", k2[0].ID)
}

// testThreadOwners checks that threads of the same id of different owners are apart.
func testThreadOwners(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	require.NoError(t, s.SaveThread(ctx, &store.Thread{Owner: "k1", ID: "same", SessionID: "a"}, ""))
	require.NoError(t, s.SaveThread(ctx, &store.Thread{Owner: "k2", ID: "same", SessionID: "b"}, ""))
	a, err := s.GetThread(ctx, "k1", "same")
	require.NoError(t, err)
	b, err := s.GetThread(ctx, "k2", "same")
	require.NoError(t, err)
	assert.Equal(t, "a", a.SessionID)
	assert.Equal(t, "b", b.SessionID)
	_, err = s.GetThread(ctx, "k3", "same")
	require.ErrorIs(t, err, store.ErrNotFound)
}

// testThreadLocks checks LockThread and UnlockThread: holders, refusals, owners and expiry.
func testThreadLocks(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	ok, _, err := s.LockThread(ctx, "k1", "t1", "h1", time.Minute)
	require.NoError(t, err)
	assert.True(t, ok, "a thread that does not exist yet can be locked")
	ok, left, err := s.LockThread(ctx, "k1", "t1", "h2", time.Minute)
	require.NoError(t, err)
	assert.Greater(t, left, 50*time.Second, "a refusal says how long the lock has left")
	assert.False(t, ok, "second holder refused")
	ok, _, err = s.LockThread(ctx, "k2", "t1", "h2", time.Minute)
	require.NoError(t, err)
	assert.True(t, ok, "another owner's thread of the same id is another lock")
	ok, _, err = s.LockThread(ctx, "k1", "t1", "h1", time.Minute)
	require.NoError(t, err)
	assert.True(t, ok, "same holder extends")
	require.NoError(t, s.UnlockThread(ctx, "k1", "t1", "h2"))
	ok, _, err = s.LockThread(ctx, "k1", "t1", "h2", time.Minute)
	require.NoError(t, err)
	assert.False(t, ok, "unlock by a non-holder does nothing")
	require.NoError(t, s.UnlockThread(ctx, "k1", "t1", "h1"))
	ok, _, err = s.LockThread(ctx, "k1", "t1", "h2", time.Millisecond)
	require.NoError(t, err)
	assert.True(t, ok, "free after unlock")
	time.Sleep(5 * time.Millisecond)
	ok, _, err = s.LockThread(ctx, "k1", "t1", "h3", time.Minute)
	require.NoError(t, err)
	assert.True(t, ok, "an expired lock can be taken")
	_, _, err = s.LockThread(ctx, "k1", "t1", "", time.Minute)
	require.Error(t, err, "empty holder")
}

// testThreadSaveUnlock checks that SaveThread with a holder saves and frees the holder's lock only.
func testThreadSaveUnlock(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	lock := func(owner, holder string) bool {
		t.Helper()
		ok, _, err := s.LockThread(ctx, owner, "t1", holder, time.Minute)
		require.NoError(t, err)
		return ok
	}
	require.True(t, lock("k1", "h1"))
	require.True(t, lock("k2", "h2"))
	require.NoError(t, s.SaveThread(ctx, &store.Thread{Owner: "k1", ID: "t1", Agent: "demo", SessionID: "s1"}, "h1"))
	got, err := s.GetThread(ctx, "k1", "t1")
	require.NoError(t, err)
	assert.Equal(t, "s1", got.SessionID, "a new thread is created")
	assert.True(t, lock("k1", "h3"), "the holder's lock is free after its save")
	assert.False(t, lock("k2", "h3"), "another owner's thread of the same id keeps its lock")

	require.NoError(t, s.SaveThread(ctx, &store.Thread{Owner: "k1", ID: "t1", Agent: "demo", SessionID: "s2"}, "h1"))
	got, err = s.GetThread(ctx, "k1", "t1")
	require.NoError(t, err)
	assert.Equal(t, "s2", got.SessionID, "saved whoever holds the lock")
	assert.False(t, lock("k1", "h4"), "another holder's lock is left alone")
}
