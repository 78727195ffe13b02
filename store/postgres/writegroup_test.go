package postgres

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/internal/testkit/pgtest"
	"github.com/aapagui/aapagui/store"
)

// Saves that arrive together share batches, and each session gets its own
// data and entries.
func TestPostgresWriteGroupsUnderLoad(t *testing.T) {
	ctx := context.Background()
	s := openPG(t, pgtest.Schema(t))
	const n = 100
	for i := range n {
		id := fmt.Sprint("s", i)
		require.NoError(t, s.CreateSession(ctx, &store.Session{ID: id, Owner: "alice"}, userEntries(id), 0))
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
			sess := &store.Session{ID: id, Owner: "alice", State: []byte(fmt.Sprintf(`{"n":%d}`, i))}
			assert.NoError(t, s.SaveSession(ctx, sess, userEntries(id+"-a"), ""))
			assert.NoError(t, s.SaveSession(ctx, sess, userEntries(id+"-b", id+"-c"), "h"+id))
		})
	}
	close(start)
	wg.Wait()
	for i := range n {
		id := fmt.Sprint("s", i)
		sess, hist, err := s.loadSession(ctx, "alice", id)
		require.NoError(t, err)
		assert.JSONEq(t, fmt.Sprintf(`{"n":%d}`, i), string(sess.State))
		assert.Equal(t, entryTexts(t, userEntries(id, id+"-a", id+"-b", id+"-c")), entryTexts(t, hist))
		ok, _, err := s.Lock(ctx, id, "next", 60e9)
		require.NoError(t, err)
		assert.True(t, ok, "%s: the save freed the lock", id)
	}
	s.writeGroups.mu.Lock()
	defer s.writeGroups.mu.Unlock()
	assert.Positive(t, s.writeGroups.shared, "saves that arrived together shared a batch")
	assert.Zero(t, s.writeGroups.running, "no runner left")
	assert.Empty(t, s.writeGroups.queue)
}

// A batch answers each write as it would be answered alone: a statement
// that matches no row affects none, and a statement the server refuses
// fails only itself (the batch is rolled back and each write sent alone).
func TestPostgresWriteGroupFailures(t *testing.T) {
	ctx := context.Background()
	s := openPG(t, pgtest.Schema(t))
	for _, id := range []string{"s1", "s2", "s3"} {
		require.NoError(t, s.CreateSession(ctx, &store.Session{ID: id, Owner: "alice"}, nil, 0))
	}
	update := func(id, owner, data string) *pgWrite {
		return &pgWrite{key: id, sql: `UPDATE sessions SET data = $1 WHERE id = $2 AND owner = $3`,
			args: []any{data, id, owner}, done: make(chan pgWriteResult, 1)}
	}
	good := update("s1", "alice", `{"state":{"n":1}}`)
	bobs := update("s2", "bob", `{"state":{"n":2}}`)
	refused := update("s3", "alice", "{\"state\":\"\x00\"}") // text cannot hold NUL: refused by the server
	other := update("s2", "alice", `{"state":{"n":4}}`)
	s.writeGroup([]*pgWrite{good, bobs, refused, other})
	for name, w := range map[string]*pgWrite{"good": good, "other": other} {
		r := <-w.done
		require.NoError(t, r.err, name)
		assert.EqualValues(t, 1, r.tag.RowsAffected(), name)
	}
	r := <-bobs.done
	require.NoError(t, r.err)
	assert.Zero(t, r.tag.RowsAffected(), "another owner's session: no row")
	r = <-refused.done
	var pe *pgconn.PgError
	assert.ErrorAs(t, r.err, &pe, "the server's own error")

	for id, want := range map[string]string{"s1": `{"n":1}`, "s2": `{"n":4}`, "s3": ""} {
		sess, err := s.GetSession(ctx, "alice", id)
		require.NoError(t, err)
		assert.Equal(t, want, string(sess.State), id)
	}
}
