package store

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/internal/pgtest"
)

// Saves that arrive together share batches, and each session gets its own
// data and entries.
func TestPostgresSaveGroupsUnderLoad(t *testing.T) {
	ctx := context.Background()
	s := openPG(t, pgtest.Schema(t))
	const n = 100
	for i := range n {
		id := fmt.Sprint("s", i)
		require.NoError(t, s.CreateSession(ctx, &Session{ID: id, Owner: "alice"}, userEntries(id)))
		ok, _, err := s.Lock(ctx, id, "h"+id, 60e9)
		require.NoError(t, err)
		require.True(t, ok)
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			id := fmt.Sprint("s", i)
			sess := &Session{ID: id, Owner: "alice", State: []byte(fmt.Sprintf(`{"n":%d}`, i))}
			assert.NoError(t, s.SaveSession(ctx, sess, userEntries(id+"-a")))
			assert.NoError(t, s.SaveSessionUnlock(ctx, sess, userEntries(id+"-b", id+"-c"), "h"+id))
		})
	}
	close(start)
	wg.Wait()
	for i := range n {
		id := fmt.Sprint("s", i)
		sess, hist, err := s.LoadSession(ctx, "alice", id)
		require.NoError(t, err)
		assert.JSONEq(t, fmt.Sprintf(`{"n":%d}`, i), string(sess.State))
		assert.Equal(t, entryTexts(t, userEntries(id, id+"-a", id+"-b", id+"-c")), entryTexts(t, hist))
		ok, _, err := s.Lock(ctx, id, "next", 60e9)
		require.NoError(t, err)
		assert.True(t, ok, "%s: the save freed the lock", id)
	}
	s.saveGroups.mu.Lock()
	defer s.saveGroups.mu.Unlock()
	assert.Positive(t, s.saveGroups.shared, "saves that arrived together shared a batch")
	assert.Zero(t, s.saveGroups.running, "no runner left")
	assert.Empty(t, s.saveGroups.queue)
}

// A batch answers each save as it would be answered alone: another
// owner's session is not found, and a statement the server refuses fails
// only its own save (the batch is rolled back and each save sent alone).
func TestPostgresSaveGroupFailures(t *testing.T) {
	ctx := context.Background()
	s := openPG(t, pgtest.Schema(t))
	for _, id := range []string{"s1", "s2", "s3"} {
		require.NoError(t, s.CreateSession(ctx, &Session{ID: id, Owner: "alice"}, nil))
	}
	call := func(id, owner, data string, texts ...string) *pgSaveCall {
		hist, err := encodeEntries(userEntries(texts...))
		require.NoError(t, err)
		return &pgSaveCall{id: id, owner: owner, data: data, hist: pgTexts(hist), done: make(chan error, 1)}
	}
	good := call("s1", "alice", `{"state":{"n":1}}`, "a")
	bobs := call("s2", "bob", `{"state":{"n":2}}`, "b")
	refused := call("s3", "alice", "{\"state\":\"\x00\"}", "c") // text cannot hold NUL: refused by the server
	noEntries := call("s2", "alice", `{"state":{"n":4}}`)
	s.saveGroup([]*pgSaveCall{good, bobs, refused, noEntries})
	assert.NoError(t, <-good.done)
	assert.ErrorIs(t, <-bobs.done, ErrNotFound)
	assert.Error(t, <-refused.done)
	assert.NoError(t, <-noEntries.done)

	for id, want := range map[string]struct {
		state string
		hist  []string
	}{"s1": {`{"n":1}`, []string{"a"}}, "s2": {`{"n":4}`, nil}, "s3": {"", nil}} {
		sess, hist, err := s.LoadSession(ctx, "alice", id)
		require.NoError(t, err)
		assert.Equal(t, want.state, string(sess.State), id)
		assert.Equal(t, entryTexts(t, userEntries(want.hist...)), entryTexts(t, hist), id)
	}
}
