package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/internal/testkit/pgtest"
	"github.com/aapagui/aapagui/store"
)

func openPG(t *testing.T, dsn string) *Store {
	t.Helper()
	s, err := Open(context.Background(), dsn)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func userEntries(texts ...string) []store.Entry {
	out := make([]store.Entry, len(texts))
	for i, text := range texts {
		out[i] = store.Entry{Message: aap.UserText(text), AGUIID: "m-" + text}
	}
	return out
}

func entryTexts(t *testing.T, es []store.Entry) []string {
	t.Helper()
	out := make([]string, len(es))
	for i, e := range es {
		b, err := json.Marshal(e.Message)
		require.NoError(t, err)
		out[i] = e.AGUIID + " " + string(b)
	}
	return out
}

// One group statement answers each kind of call as LockLoadSession does
// alone: free sessions are locked and read, a session named twice is
// locked for one caller (the other finds it held), a held lock gives the
// time it has left, and another owner's or a missing session is not
// found, its lock left alone.
func TestPostgresLockGroupStatement(t *testing.T) {
	ctx := context.Background()
	s := openPG(t, pgtest.Schema(t))
	require.NoError(t, s.CreateSession(ctx, &store.Session{ID: "s1", Owner: "alice"}, userEntries("a", "b"), 0))
	require.NoError(t, s.CreateSession(ctx, &store.Session{ID: "s2", Owner: "alice"}, userEntries("c"), 0))
	require.NoError(t, s.CreateSession(ctx, &store.Session{ID: "s3", Owner: "alice"}, nil, 0))
	require.NoError(t, s.CreateSession(ctx, &store.Session{ID: "bobs", Owner: "bob"}, userEntries("secret"), 0))
	require.NoError(t, s.CreateSession(ctx, &store.Session{ID: "held", Owner: "alice"}, nil, 0))
	ok, _, err := s.Lock(ctx, "held", "someone", time.Minute)
	require.NoError(t, err)
	require.True(t, ok)

	call := func(owner, id, holder string) *pgLockCall {
		return &pgLockCall{ctx: context.Background(), owner: owner, id: id, holder: holder, ttl: time.Minute, done: make(chan pgLockResult, 1)}
	}
	group := []*pgLockCall{
		call("alice", "s1", "h1"),
		call("alice", "s2", "h2"),
		call("alice", "s2", "h2-again"),
		call("alice", "bobs", "h3"),
		call("alice", "missing", "h4"),
		call("alice", "held", "h5"),
		call("alice", "s3", "h6"),
	}
	rs, err := s.lockLoadGroup(ctx, group)
	require.NoError(t, err)
	require.Len(t, rs, len(group))

	require.NoError(t, rs[0].err)
	require.True(t, rs[0].ok)
	assert.Equal(t, "s1", rs[0].sess.ID)
	assert.Equal(t, "alice", rs[0].sess.Owner)
	assert.Equal(t, entryTexts(t, userEntries("a", "b")), entryTexts(t, rs[0].hist))

	require.NoError(t, rs[1].err)
	require.NoError(t, rs[2].err)
	assert.True(t, rs[1].ok != rs[2].ok, "exactly one of two calls on s2 takes its lock")
	for _, r := range rs[1:3] {
		if r.ok {
			assert.Equal(t, entryTexts(t, userEntries("c")), entryTexts(t, r.hist))
		} else {
			assert.Greater(t, r.left, 50*time.Second, "the winner's lease")
		}
	}

	assert.ErrorIs(t, rs[3].err, store.ErrNotFound, "another owner's session")
	assert.ErrorIs(t, rs[4].err, store.ErrNotFound)
	require.NoError(t, rs[5].err)
	assert.False(t, rs[5].ok)
	assert.Greater(t, rs[5].left, 50*time.Second)
	require.NoError(t, rs[6].err)
	assert.True(t, rs[6].ok)
	assert.Empty(t, rs[6].hist)

	ok, _, err = s.Lock(ctx, "bobs", "bob-holder", time.Minute)
	require.NoError(t, err)
	assert.True(t, ok, "bob's lock was left alone")
	ok, _, err = s.Lock(ctx, "s1", "other", time.Minute)
	require.NoError(t, err)
	assert.False(t, ok, "s1 is held by h1")
}

// A group statement that reaches a row only after another holder had
// locked, appended and released it reads the history with that append.
func TestPostgresLockGroupSeesTheLastAppend(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Schema(t)
	s := openPG(t, dsn)
	require.NoError(t, s.CreateSession(ctx, &store.Session{ID: "s1", Owner: "alice"}, userEntries("u1"), 0))
	require.NoError(t, s.CreateSession(ctx, &store.Session{ID: "s2", Owner: "alice"}, userEntries("u2"), 0))
	commit := AppendInOpenTx(t, dsn, "s1")

	group := []*pgLockCall{
		{owner: "alice", id: "s1", holder: "h1", ttl: time.Minute},
		{owner: "alice", id: "s2", holder: "h2", ttl: time.Minute},
	}
	done := make(chan []pgLockResult, 1)
	go func() {
		rs, err := s.lockLoadGroup(ctx, group)
		assert.NoError(t, err)
		done <- rs
	}()
	WaitForRowLock(t, dsn, "lock_holder = req.holder")
	commit()

	rs := <-done
	require.Len(t, rs, 2)
	require.True(t, rs[0].ok)
	assert.Equal(t, entryTexts(t, userEntries("u1", "u1")), entryTexts(t, rs[0].hist), "the append committed during the wait is read")
	require.True(t, rs[1].ok)
	assert.Equal(t, entryTexts(t, userEntries("u2")), entryTexts(t, rs[1].hist))
}

// Turn starts that arrive together share statements, and each gets its
// own session and history.
func TestPostgresLockGroupsUnderLoad(t *testing.T) {
	ctx := context.Background()
	s := openPG(t, pgtest.Schema(t))
	const n = 100
	for i := range n {
		id := fmt.Sprint("s", i)
		require.NoError(t, s.CreateSession(ctx, &store.Session{ID: id, Owner: "alice"}, userEntries(id), 0))
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			id := fmt.Sprint("s", i)
			sess, hist, ok, _, err := s.LockLoadSession(ctx, "alice", id, "h"+id, 0, time.Minute)
			if assert.NoError(t, err) && assert.True(t, ok, id) {
				assert.Equal(t, id, sess.ID)
				assert.Equal(t, entryTexts(t, userEntries(id)), entryTexts(t, hist))
			}
		})
	}
	close(start)
	wg.Wait()
	s.lockGroups.mu.Lock()
	assert.Positive(t, s.lockGroups.shared, "calls that arrived together shared a statement")
	s.lockGroups.mu.Unlock()
	// A runner answers its calls before it counts itself out.
	assert.Eventually(t, func() bool {
		s.lockGroups.mu.Lock()
		defer s.lockGroups.mu.Unlock()
		return s.lockGroups.running == 0
	}, 10*time.Second, time.Millisecond, "no runner left")
	assert.Empty(t, s.lockGroups.queue)
}

// AppendInOpenTx is another holder's turn end on session id, left
// uncommitted: its first history entry appended again, in a transaction
// that holds the session's row until commit is called.
func AppendInOpenTx(t *testing.T, dsn, id string) (commit func()) {
	t.Helper()
	return inOpenTx(t, dsn, id,
		`UPDATE sessions SET history_len = history_len + 1 WHERE id = $1`,
		`INSERT INTO history (session_id, position, data) SELECT session_id, 1, data FROM history WHERE session_id = $1 AND position = 0`)
}

// inOpenTx runs statements (each with session id as $1) in a transaction
// of a connection of its own, left open; commit commits it.
func inOpenTx(t *testing.T, dsn, id string, statements ...string) (commit func()) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	tx, err := conn.Begin(ctx)
	require.NoError(t, err)
	for _, q := range statements {
		_, err = tx.Exec(ctx, q, id)
		require.NoError(t, err)
	}
	return func() { require.NoError(t, tx.Commit(ctx)) }
}

// RewriteInOpenTx rewrites the first history entry of session id with the
// second's data, as a replica of an earlier build would (history_len set
// again, history_version left alone), in a transaction it leaves open; the
// history keeps its length. commit commits it.
func RewriteInOpenTx(t *testing.T, dsn, id string) (commit func()) {
	t.Helper()
	return inOpenTx(t, dsn, id,
		`UPDATE sessions SET history_len = history_len WHERE id = $1`,
		`UPDATE history SET data = (SELECT data FROM history WHERE session_id = $1 AND position = 1) WHERE session_id = $1 AND position = 0`)
}

// WaitForRowLock waits until one statement whose text contains fragment
// waits for a row lock.
func WaitForRowLock(t *testing.T, dsn, fragment string) {
	t.Helper()
	ctx := context.Background()
	watch, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer watch.Close(ctx)
	require.Eventually(t, func() bool {
		var n int
		err := watch.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND position($1 in query) > 0`, fragment).Scan(&n)
		return err == nil && n == 1
	}, 10*time.Second, 5*time.Millisecond)
}

// A group whose statement fails falls back to one statement per call, so
// one bad call fails alone and the turns grouped with it start. The bad
// call here has an id PostgreSQL cannot store: LockLoadSession turns such
// ids away before they join a group, so it is put in directly.
func TestPostgresLockGroupFallsBackAlone(t *testing.T) {
	ctx := context.Background()
	s := openPG(t, pgtest.Schema(t))
	require.NoError(t, s.CreateSession(ctx, &store.Session{ID: "s1", Owner: "alice"}, userEntries("u1"), 0))
	require.NoError(t, s.CreateSession(ctx, &store.Session{ID: "s2", Owner: "alice"}, nil, 0))

	call := func(id, holder string) *pgLockCall {
		return &pgLockCall{ctx: context.Background(), owner: "alice", id: id, holder: holder, ttl: time.Minute, done: make(chan pgLockResult, 1)}
	}
	group := []*pgLockCall{call("s1", "h1"), call("bad\x00id", "h2"), call("s2", "h3")}
	_, err := s.lockLoadGroup(ctx, group)
	require.Error(t, err, "the group statement fails as a whole")

	s.lockGroup(group)
	r1, bad, r2 := <-group[0].done, <-group[1].done, <-group[2].done
	require.NoError(t, r1.err)
	assert.True(t, r1.ok)
	assert.Equal(t, entryTexts(t, userEntries("u1")), entryTexts(t, r1.hist))
	assert.ErrorIs(t, bad.err, store.ErrNotFound)
	require.NoError(t, r2.err)
	assert.True(t, r2.ok)
}

// A call whose context ended while it waited for its group (a turn start
// past its bound) is answered with the context's error, and its lock is
// not taken; the others of the group are served.
func TestPostgresLockGroupLeavesOutCallsThatGaveUp(t *testing.T) {
	ctx := context.Background()
	s := openPG(t, pgtest.Schema(t))
	require.NoError(t, s.CreateSession(ctx, &store.Session{ID: "s1", Owner: "alice"}, nil, 0))
	require.NoError(t, s.CreateSession(ctx, &store.Session{ID: "s2", Owner: "alice"}, nil, 0))
	gone, cancel := context.WithCancel(ctx)
	cancel()
	group := []*pgLockCall{
		{ctx: gone, owner: "alice", id: "s1", holder: "h1", ttl: time.Minute, done: make(chan pgLockResult, 1)},
		{ctx: ctx, owner: "alice", id: "s2", holder: "h2", ttl: time.Minute, done: make(chan pgLockResult, 1)},
	}
	s.lockGroup(group)
	r1, r2 := <-group[0].done, <-group[1].done
	require.ErrorIs(t, r1.err, context.Canceled)
	require.NoError(t, r2.err)
	assert.True(t, r2.ok)
	ok, _, err := s.Lock(ctx, "s1", "next", time.Minute)
	require.NoError(t, err)
	assert.True(t, ok, "the call that gave up took no lock")
}
