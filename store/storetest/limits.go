package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/store"
)

// testLimits: CreateSession with a max counts an owner's sessions and adds one
// in one step, so that concurrent creations never pass the limit; a
// refused creation stores nothing. CountThreads counts an owner's
// threads.
func testLimits(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	t.Run("sessions within a limit", func(t *testing.T) {
		s := open(t)
		require.NoError(t, s.CreateSession(ctx, Session("a1", "alice"), Users("m1"), 2))
		require.NoError(t, s.CreateSession(ctx, Session("a2", "alice"), nil, 2))
		err := s.CreateSession(ctx, Session("a3", "alice"), Users("m1"), 2)
		require.ErrorIs(t, err, store.ErrLimit)
		_, err = s.GetSession(ctx, "alice", "a3")
		require.ErrorIs(t, err, store.ErrNotFound, "a refused session is not stored")
		h, err := s.History(ctx, "a3")
		if err == nil {
			assert.Empty(t, h, "nor its history")
		}
		require.NoError(t, s.CreateSession(ctx, Session("b1", "bob"), nil, 2), "another owner has a count of its own")
		require.NoError(t, s.CreateSession(ctx, Session("a4", "alice"), nil, 0), "zero: no limit")
		require.ErrorIs(t, s.CreateSession(ctx, Session("a1", "bob"), nil, 5), store.ErrExists)
		require.NoError(t, s.DeleteSession(ctx, "alice", "a1"))
		require.NoError(t, s.DeleteSession(ctx, "alice", "a2"))
		require.NoError(t, s.CreateSession(ctx, Session("a5", "alice"), nil, 2), "a deleted session frees its place")
	})
	t.Run("concurrent creations never pass the limit", func(t *testing.T) {
		s := open(t)
		const limit, tries = 5, 24
		var wg sync.WaitGroup
		errs := make([]error, tries)
		for i := range tries {
			wg.Go(func() {
				errs[i] = s.CreateSession(ctx, Session(fmt.Sprintf("c%d", i), "carol"), Users("m1"), limit)
			})
		}
		wg.Wait()
		ok := 0
		for _, err := range errs {
			if err == nil {
				ok++
			} else {
				require.ErrorIs(t, err, store.ErrLimit)
			}
		}
		assert.Equal(t, limit, ok)
		list, err := s.ListSessions(ctx, "carol", 0, 100)
		require.NoError(t, err)
		assert.Len(t, list, limit)
	})
	t.Run("count threads", func(t *testing.T) {
		s := open(t)
		n, err := s.CountThreads(ctx, "k1")
		require.NoError(t, err)
		assert.Zero(t, n)
		for _, id := range []string{"t1", "t2", "t2"} {
			require.NoError(t, s.SaveThread(ctx, &store.Thread{Owner: "k1", ID: id}, ""))
		}
		require.NoError(t, s.SaveThread(ctx, &store.Thread{Owner: "k2", ID: "t1"}, ""))
		n, err = s.CountThreads(ctx, "k1")
		require.NoError(t, err)
		assert.Equal(t, 2, n)
		require.NoError(t, s.DeleteThread(ctx, "k1", "t1"))
		n, err = s.CountThreads(ctx, "k1")
		require.NoError(t, err)
		assert.Equal(t, 1, n)
	})
}
