package agui2aap_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/bridge/agui2aap"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
)

type threadList struct {
	Threads []struct {
		ThreadID       string
		Title          string
		CreatedAt      time.Time
		LastActiveAt   time.Time
		Messages       int
		InterruptsOpen bool
	}
	NextCursor string
}

func (e *env) listThreads(t *testing.T, query, key string) threadList {
	t.Helper()
	r := e.get(t, "/agents/demo/threads"+query, "Authorization", "Bearer "+key)
	require.Equal(t, http.StatusOK, r.Status, r.Body)
	var out threadList
	require.NoError(t, json.Unmarshal([]byte(r.Body), &out))
	require.NotNil(t, out.Threads, "threads is a list, never null: %s", r.Body)
	return out
}

func (e *env) deleteThread(t *testing.T, id, key string) *response {
	t.Helper()
	req, err := http.NewRequestWithContext(bridgetest.Context(t), http.MethodDelete, e.URL+"/agents/demo/threads/"+id, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	return do(t, req)
}

// GET /agents/:name/threads lists the caller's threads, newest activity
// first, paged by an opaque cursor; DELETE forgets one and its AAP
// session.
func TestThreadListing(t *testing.T) {
	e := newEnv(t, func(cfg *agui2aap.Config) { cfg.APIKeys = []string{"key-a", "key-b"} })
	auth := func(c *conv, key string) *conv { c.Headers = []string{"Authorization", "Bearer " + key}; return c }
	first := auth(e.conv("first"), "key-a")
	first.say("hello there")
	first.run(t)
	long := auth(e.conv("long"), "key-a")
	long.say(strings.Repeat("a very long opening message ", 10))
	long.run(t)
	perm := auth(e.conv("perm"), "key-a")
	perm.say("search cats")
	require.Len(t, perm.run(t).interrupts(), 1)
	other := auth(e.conv("theirs"), "key-b")
	other.say("hello from b")
	other.run(t)
	// Activity on first moves it to the front.
	first.say("and again")
	first.run(t)

	page := e.listThreads(t, "?limit=2", "key-a")
	require.Len(t, page.Threads, 2)
	assert.Equal(t, "first", page.Threads[0].ThreadID)
	assert.Equal(t, "perm", page.Threads[1].ThreadID)
	require.NotEmpty(t, page.NextCursor)
	rest := e.listThreads(t, "?limit=2&cursor="+page.NextCursor, "key-a")
	require.Len(t, rest.Threads, 1)
	assert.Equal(t, "long", rest.Threads[0].ThreadID)
	assert.Empty(t, rest.NextCursor, "the last page")

	all := e.listThreads(t, "", "key-a")
	require.Len(t, all.Threads, 3)
	f, p, l := all.Threads[0], all.Threads[1], all.Threads[2]
	assert.Equal(t, "hello there", f.Title, "the first user message")
	assert.Equal(t, 4, f.Messages, "two user messages, two answers")
	assert.False(t, f.InterruptsOpen)
	assert.True(t, p.InterruptsOpen, "an approval is pending")
	assert.Equal(t, "search cats", p.Title)
	assert.LessOrEqual(t, len([]rune(l.Title)), 80)
	assert.True(t, strings.HasPrefix(l.Title, "a very long opening message a very"), l.Title)
	assert.True(t, strings.HasSuffix(l.Title, "…"), l.Title)
	assert.True(t, f.LastActiveAt.After(f.CreatedAt), "created %v, active %v", f.CreatedAt, f.LastActiveAt)

	// Getting a thread back is no activity: the list keeps its order and
	// its times.
	for _, id := range []string{"long", "perm"} {
		msgs, _ := auth(e.conv(id), "key-a").hydrate(t, "Authorization", "Bearer key-a")
		require.NotEmpty(t, msgs, id)
	}
	again := e.listThreads(t, "", "key-a")
	assert.Equal(t, all.Threads, again.Threads, "hydrations moved nothing")

	b := e.listThreads(t, "", "key-b")
	require.Len(t, b.Threads, 1, "threads are per key")
	assert.Equal(t, "theirs", b.Threads[0].ThreadID)

	badCursors := []string{"?cursor=%25%25", "?cursor=bm9wZQ"}
	for _, c := range []string{"0:\x00", "0:\xff", "-9223372036854775808:t", "9223372036854775807:t", "-1:t", "0:"} {
		badCursors = append(badCursors, "?cursor="+base64.RawURLEncoding.EncodeToString([]byte(c)))
	}
	for _, q := range append([]string{"?limit=0", "?limit=101", "?limit=x"}, badCursors...) {
		r := e.get(t, "/agents/demo/threads"+q, "Authorization", "Bearer key-a")
		assert.Equal(t, http.StatusBadRequest, r.Status, q)
		assert.Equal(t, "invalid_request", r.errorCode(), q)
	}

	t.Run("delete", func(t *testing.T) {
		before := len(e.sessions(t))
		r := e.deleteThread(t, "first", "key-b")
		assert.Equal(t, http.StatusNotFound, r.Status, "another key's thread")
		assert.Equal(t, "thread_not_found", r.errorCode())

		r = e.deleteThread(t, "first", "key-a")
		require.Equal(t, http.StatusNoContent, r.Status, r.Body)
		assert.Len(t, e.sessions(t), before-1, "the AAP session is deleted upstream")
		for _, s := range e.sessions(t) {
			assert.NotContains(t, userTexts(e.history(t, s.SessionID)), "hello there", "the deleted thread's session")
		}
		assert.Len(t, e.listThreads(t, "", "key-a").Threads, 2)
		msgs, _ := auth(e.conv("first"), "key-a").hydrate(t, "Authorization", "Bearer key-a")
		assert.Empty(t, msgs, "the thread is forgotten")
		r = e.deleteThread(t, "first", "key-a")
		assert.Equal(t, http.StatusNotFound, r.Status)

		// Ids no run could have made name the problem, as a run's would.
		for _, id := range []string{"%00", "%FF", "a%01b"} {
			r := e.deleteThread(t, id, "key-a")
			assert.Equal(t, http.StatusBadRequest, r.Status, id)
			assert.Equal(t, "invalid_request", r.errorCode(), id)
			assert.Contains(t, r.errorMessage(), "threadId", id)
		}
	})
}
