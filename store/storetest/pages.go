package storetest

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/store"
)

// testThreadPages checks that walking an owner's threads page by page
// gives each exactly once, newest activity first (ties by id, last
// first), when the owner holds more than a few pages, saved close enough
// together to share activity times, among another owner's threads, some
// deleted and some active again before the walk; and that CountThreads
// counts what the walk finds.
func testThreadPages(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	for i := range 40 {
		require.NoError(t, s.SaveThread(ctx, &store.Thread{Owner: "k1", ID: fmt.Sprintf("t%02d", i), Agent: "demo"}, ""))
		require.NoError(t, s.SaveThread(ctx, &store.Thread{Owner: "k2", ID: fmt.Sprintf("o%02d", i), Agent: "demo"}, ""))
	}
	want := 40
	for i := 0; i < 40; i += 7 {
		require.NoError(t, s.DeleteThread(ctx, "k1", fmt.Sprintf("t%02d", i)))
		want--
	}
	for _, id := range []string{"t03", "t11"} { // active again
		th, err := s.GetThread(ctx, "k1", id)
		require.NoError(t, err)
		require.NoError(t, s.SaveThread(ctx, th, ""))
	}
	seen := map[string]bool{}
	var prev *store.Thread
	var after store.ThreadPage
	for pages := 0; ; pages++ {
		require.Less(t, pages, 40, "the walk ends")
		page, err := s.ListThreads(ctx, "k1", after, 3)
		require.NoError(t, err)
		for _, th := range page {
			assert.False(t, seen[th.ID], "%s listed twice", th.ID)
			seen[th.ID] = true
			if prev != nil {
				assert.True(t, th.UpdatedAt.Before(prev.UpdatedAt) || th.UpdatedAt.Equal(prev.UpdatedAt) && th.ID < prev.ID,
					"%s (%v) after %s (%v)", th.ID, th.UpdatedAt, prev.ID, prev.UpdatedAt)
			}
			prev = th
		}
		if len(page) < 3 {
			break
		}
		after = page[len(page)-1].Next()
	}
	assert.Len(t, seen, want)
	n, err := s.CountThreads(ctx, "k1")
	require.NoError(t, err)
	assert.Equal(t, want, n)
}

// testListPages checks that walking an owner's sessions page by page
// gives each exactly once, oldest first, among another owner's sessions,
// some deleted.
func testListPages(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	var ids []string
	for i := range 30 {
		for _, owner := range []string{"alice", "bob"} {
			sess := &store.Session{ID: fmt.Sprintf("%s-%02d", owner, i), Owner: owner}
			require.NoError(t, s.CreateSession(ctx, sess, nil, 0))
			if owner == "alice" && i%4 != 1 {
				ids = append(ids, sess.ID)
			}
		}
	}
	for i := 1; i < 30; i += 4 {
		require.NoError(t, s.DeleteSession(ctx, "alice", fmt.Sprintf("alice-%02d", i)))
	}
	var got []string
	var after int64
	for {
		page, err := s.ListSessions(ctx, "alice", after, 4)
		require.NoError(t, err)
		for _, sess := range page {
			got = append(got, sess.ID)
		}
		if len(page) < 4 {
			break
		}
		after = page[len(page)-1].Seq
	}
	assert.Equal(t, ids, got)
}
