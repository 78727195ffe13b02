package aap2agui_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/internal/testkit/streamtest"
	"github.com/aapagui/aapagui/store"
)

const (
	limitKeyA = "key-a-limits"
	limitKeyB = "key-b-limits"
)

// requireTooMany checks a 429: the usual JSON error with its code, and a
// Retry-After of whole seconds, at least 1.
func requireTooMany(t *testing.T, r rawResponse, code string) {
	t.Helper()
	requireJSONError(t, r, http.StatusTooManyRequests, code)
	secs, err := strconv.Atoi(r.Header.Get("Retry-After"))
	require.NoError(t, err, "429 without a Retry-After of whole seconds: %q", r.Header.Get("Retry-After"))
	assert.Positive(t, secs)
}

func sessionsOf(t *testing.T, e *env, key string) int {
	t.Helper()
	r := doRaw(t, http.MethodGet, e.URL+"/sessions", key, "")
	require.Equal(t, http.StatusOK, r.Status, r.Body)
	var page aap.GetSessionsResponse
	require.NoError(t, json.Unmarshal([]byte(r.Body), &page))
	return len(page.Sessions)
}

// Limits.SessionsPerKey: a key holding its limit of sessions gets 429
// too_many_sessions for another, and nothing is stored; other keys are
// not counted against it, and deleting a session frees its place.
func TestSessionsPerKey(t *testing.T) {
	e := newEnv(t, demoAgent(t), func(c *aap2agui.Config) {
		c.APIKeys = []string{limitKeyA, limitKeyB}
		c.Limits.SessionsPerKey = 2
	})
	create := `{"agent":{"name":"agent"},"messages":[{"role":"user","content":"seed"}]}`
	var ids []string
	for range 2 {
		r := doRaw(t, http.MethodPost, e.URL+"/sessions", limitKeyA, create)
		require.Equal(t, http.StatusCreated, r.Status, r.Body)
		var created aap.PostSessionsResponse
		require.NoError(t, json.Unmarshal([]byte(r.Body), &created))
		ids = append(ids, created.SessionID)
	}
	r := doRaw(t, http.MethodPost, e.URL+"/sessions", limitKeyA, create)
	requireTooMany(t, r, "too_many_sessions")
	assert.Contains(t, r.Body, "2 sessions")
	assert.Equal(t, 2, sessionsOf(t, e, limitKeyA), "the refused session is not stored")

	r = doRaw(t, http.MethodPost, e.URL+"/sessions", limitKeyB, create)
	assert.Equal(t, http.StatusCreated, r.Status, "another key has places of its own: %s", r.Body)

	r = doRaw(t, http.MethodDelete, e.URL+"/sessions/"+ids[0], limitKeyA, "")
	require.Equal(t, http.StatusNoContent, r.Status, r.Body)
	r = doRaw(t, http.MethodPost, e.URL+"/sessions", limitKeyA, create)
	assert.Equal(t, http.StatusCreated, r.Status, "a deleted session frees its place: %s", r.Body)
}

// Limits.TurnsPerKey: while a key runs its limit of turns, another turn of
// that key gets 429 too_many_turns (and leaves its session as it was);
// another key's turn runs; once a turn ends the key may start one again.
func TestTurnsPerKey(t *testing.T) {
	started, release := make(chan struct{}, 4), make(chan struct{})
	up := lateUpstream(t, func(r *http.Request) bool {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		if strings.Contains(string(body), "hold") {
			started <- struct{}{}
			<-release
		}
		return true
	})
	e := newEnv(t, up, func(c *aap2agui.Config) {
		c.APIKeys = []string{limitKeyA, limitKeyB}
		c.Limits.TurnsPerKey = 1
	})
	newSession := func(key string) string {
		r := doRaw(t, http.MethodPost, e.URL+"/sessions", key, `{"agent":{"name":"agent"}}`)
		require.Equal(t, http.StatusCreated, r.Status, r.Body)
		var created aap.PostSessionsResponse
		require.NoError(t, json.Unmarshal([]byte(r.Body), &created))
		return created.SessionID
	}
	s1, s2, sb := newSession(limitKeyA), newSession(limitKeyA), newSession(limitKeyB)

	held := make(chan rawResponse, 1)
	go func() {
		held <- doRaw(t, http.MethodPost, e.URL+"/sessions/"+s1+"/turns", limitKeyA, `{"messages":[{"role":"user","content":"hold"}]}`)
	}()
	<-started

	r := doRaw(t, http.MethodPost, e.URL+"/sessions/"+s2+"/turns", limitKeyA, `{"messages":[{"role":"user","content":"hello"}]}`)
	requireTooMany(t, r, "too_many_turns")
	assert.Empty(t, e.history(t, s2, aap.HistoryFull), "the refused turn stored nothing")

	r = doRaw(t, http.MethodPost, e.URL+"/sessions/"+sb+"/turns", limitKeyB, `{"messages":[{"role":"user","content":"hello"}]}`)
	assert.Equal(t, http.StatusOK, r.Status, "another key's turn runs: %s", r.Body)

	close(release)
	require.Equal(t, http.StatusOK, (<-held).Status)
	r = doRaw(t, http.MethodPost, e.URL+"/sessions/"+s2+"/turns", limitKeyA, `{"messages":[{"role":"user","content":"hello"}]}`)
	assert.Equal(t, http.StatusOK, r.Status, "the turn's place is free again: %s", r.Body)
}

// Limits.RequestsPerSecond: past its burst a key gets 429
// too_many_requests with Retry-After; another key is not slowed.
func TestRequestsPerKey(t *testing.T) {
	e := newEnv(t, demoAgent(t), func(c *aap2agui.Config) {
		c.APIKeys = []string{limitKeyA, limitKeyB}
		c.Limits.RequestsPerSecond, c.Limits.Burst = 0.5, 3
	})
	for range 3 {
		r := doRaw(t, http.MethodGet, e.URL+"/sessions", limitKeyA, "")
		require.Equal(t, http.StatusOK, r.Status, r.Body)
	}
	r := doRaw(t, http.MethodGet, e.URL+"/sessions", limitKeyA, "")
	requireTooMany(t, r, "too_many_requests")
	assert.Equal(t, "2", r.Header.Get("Retry-After"), "a request every 2 s")
	r = doRaw(t, http.MethodPost, e.URL+"/sessions", limitKeyA, `{"agent":{"name":"agent"}}`)
	requireTooMany(t, r, "too_many_requests")
	assert.Zero(t, sessionsOf(t, e, limitKeyB), "nothing stored, and the other key is served")
	r = doRaw(t, http.MethodGet, e.URL+"/sessions", "", "")
	requireJSONError(t, r, http.StatusUnauthorized, "unauthorized")
}

// Limits that make no sense stop New.
func TestLimitsValidation(t *testing.T) {
	for _, l := range []aap2agui.Limits{{SessionsPerKey: -1}, {TurnsPerKey: -1}, {RequestsPerSecond: -1}, {Burst: -1}} {
		_, err := aap2agui.New(aap2agui.Config{Upstream: "http://127.0.0.1:1", Store: store.NewMemory(), Limits: l})
		require.Error(t, err, "%+v", l)
		assert.Contains(t, err.Error(), "Limits")
	}
	_, err := aap2agui.New(aap2agui.Config{Upstream: "http://127.0.0.1:1", Store: store.NewMemory(), UpstreamHeader: http.Header{"X-Token": {"s3cret\r\nX-Evil: 1"}}})
	require.Error(t, err, "a header value with CR LF")
	assert.NotContains(t, err.Error(), "s3cret")
}

// readCounter counts the store's reads of a session and of a run log, the
// first reads of a rejoin.
type readCounter struct {
	store.Store
	reads atomic.Int64
}

func (s *readCounter) GetSession(ctx context.Context, owner, id string) (*store.Session, error) {
	s.reads.Add(1)
	return s.Store.GetSession(ctx, owner, id)
}

func (s *readCounter) LatestRunLog(ctx context.Context, owner, key string) (*store.RunLog, error) {
	s.reads.Add(1)
	return s.Store.LatestRunLog(ctx, owner, key)
}

// Limits.TurnsPerKey bounds the rejoins a key holds open too: 4 for each
// turn it may run (a bound of their own, so that a key running its one
// turn still rejoins it). Past it GET /sessions/:id/turn gets 429
// too_many_streams naming the bound, before the store is read; a rejoin
// that ended gives its place back.
func TestRejoinsPerKey(t *testing.T) {
	release := make(chan struct{})
	st := &readCounter{Store: store.NewMemory()}
	e := newEnv(t, pausingRun(t, 60, 50, release), func(c *aap2agui.Config) {
		c.Store = st
		c.Limits.TurnsPerKey = 1
	})
	let := sync.OnceFunc(func() { close(release) })
	t.Cleanup(let)
	id := e.createSession(t, aap.PostSessionsRequest{})
	turn := e.URL + "/sessions/" + id + "/turn"

	first := streamtest.Open(t, bridgetest.Context(t), http.MethodPost, e.URL+"/sessions/"+id+"/turns", `{"stream":"delta","messages":[{"role":"user","content":"a long story"}]}`, nil)
	require.Equal(t, http.StatusOK, first.Status, first.Body)
	had := first.Until(t, "w49 ", 1)

	var joins []*streamtest.Stream
	for range 4 {
		j := streamtest.Open(t, bridgetest.Context(t), http.MethodGet, turn, "", nil)
		require.Equal(t, http.StatusOK, j.Status, "the key runs its one turn and still rejoins it: %s", j.Body)
		j.Until(t, "w49 ", 1)
		joins = append(joins, j)
	}
	reads := st.reads.Load()
	past := streamtest.Open(t, bridgetest.Context(t), http.MethodGet, turn, "", nil)
	require.Equal(t, http.StatusTooManyRequests, past.Status, past.Body)
	var er aap.ErrorResponse
	require.NoError(t, json.Unmarshal([]byte(past.Body), &er), past.Body)
	assert.Equal(t, "too_many_streams", er.Error.Code)
	assert.Contains(t, er.Error.Message, "4 streams", "the bound is named")
	assert.Equal(t, reads, st.reads.Load(), "refused before the store is read")

	let()
	first.Rest()
	for _, j := range joins {
		j.Rest()
	}
	again := streamtest.Open(t, bridgetest.Context(t), http.MethodGet, turn, "", http.Header{"Last-Event-ID": {had[len(had)-1].ID}})
	assert.Equal(t, http.StatusOK, again.Status, "the rejoins that ended gave their places back: %s", again.Body)
	again.Rest()
}
