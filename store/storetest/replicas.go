package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"

	"github.com/aapagui/aapagui/store"
)

// TwoReplicas checks two stores on one database, as two replicas see
// it: each sees the other's writes, and exactly one wins a lock.
func TwoReplicas(t *testing.T, a, b store.Store) {
	ctx := context.Background()

	t.Run("see each other's writes", func(t *testing.T) {
		require.NoError(t, a.CreateSession(ctx, Session("s1", "alice"), Users("1"), 0))
		got, err := b.GetSession(ctx, "alice", "s1")
		require.NoError(t, err)
		assert.Equal(t, "agent", got.Agent.Name)
		require.ErrorIs(t, b.CreateSession(ctx, Session("s1", "bob"), nil, 0), store.ErrExists)

		require.NoError(t, b.AppendHistory(ctx, "s1", Users("2")))
		require.NoError(t, a.AppendHistory(ctx, "s1", Users("3")))
		assert.Equal(t, Users("1", "2", "3"), History(t, a, "s1"))

		upd := Session("s1", "alice")
		upd.State = json.RawMessage(`{"from":"a"}`)
		require.NoError(t, a.SaveSession(ctx, upd, nil, ""))
		got, err = b.GetSession(ctx, "alice", "s1")
		require.NoError(t, err)
		assert.Equal(t, `{"from":"a"}`, string(got.State))

		require.NoError(t, b.DeleteSession(ctx, "alice", "s1"))
		_, err = a.GetSession(ctx, "alice", "s1")
		require.ErrorIs(t, err, store.ErrNotFound)
		_, err = a.History(ctx, "s1")
		require.ErrorIs(t, err, store.ErrNotFound)
	})

	t.Run("contend for the lock", func(t *testing.T) {
		for round := range 20 {
			id := fmt.Sprintf("lock%d", round)
			require.NoError(t, a.CreateSession(ctx, Session(id, ""), nil, 0))
			var wg sync.WaitGroup
			wins := make(chan string, 16)
			for i := range 16 {
				s := []store.Store{a, b}[i%2]
				wg.Go(func() {
					holder := fmt.Sprintf("h%d", i)
					ok, _, err := s.Lock(ctx, id, holder, time.Hour)
					assert.NoError(t, err)
					if ok {
						wins <- holder
					}
				})
			}
			wg.Wait()
			close(wins)
			require.Len(t, wins, 1, "round %d: exactly one holder", round)
			winner := <-wins
			require.NoError(t, a.Unlock(ctx, id, "h-other"))
			require.NoError(t, b.Unlock(ctx, id, winner))
			ok, _, err := a.Lock(ctx, id, "next", time.Hour)
			require.NoError(t, err)
			assert.True(t, ok, "unlocked through the other replica")
		}
	})

	t.Run("a thread's record", func(t *testing.T) {
		th := withTail(&store.Thread{Owner: "k", ID: "t1"}, 0, "m1", "m2")
		require.NoError(t, a.SaveThread(ctx, th, ""))
		other, err := b.GetThread(ctx, "k", "t1")
		require.NoError(t, err)
		require.Equal(t, 2, other.RecordLen)
		require.NoError(t, b.SaveThread(ctx, withTail(other, 2, "m3"), ""))
		th.RecordTail = nil // a's copy says 2 messages
		require.NoError(t, a.SaveThread(ctx, th, ""))
		assert.Equal(t, RecordMessages("m1", "m2", "m3"), record(t, a, "k", "t1"), "a's stale count not stored")
		require.ErrorIs(t, a.SaveThread(ctx, withTail(th, 4, "m5"), ""), store.ErrRecordGap)
		require.NoError(t, a.DeleteThread(ctx, "k", "t1"))
		_, err = b.ThreadRecord(ctx, "k", "t1")
		require.ErrorIs(t, err, store.ErrNotFound)
	})

	t.Run("a run asked to stop", func(t *testing.T) {
		StartLog(t, a, "stop1", "k", "thread/t1", time.Time{})
		require.NoError(t, b.StopRunLog(ctx, "k", "stop1"))
		ids, err := a.StoppingRunLogs(ctx)
		require.NoError(t, err)
		assert.Contains(t, ids, "stop1", "marked through the other replica")
		require.NoError(t, a.AppendRunLog(ctx, "stop1", store.RunLogBatch{First: 1}, true))
		ids, err = b.StoppingRunLogs(ctx)
		require.NoError(t, err)
		assert.NotContains(t, ids, "stop1", "finished through the other replica")
	})

	t.Run("concurrent writers", func(t *testing.T) {
		testConcurrentAppends(t, []store.Store{a, b}, 16, 20)
	})
}
