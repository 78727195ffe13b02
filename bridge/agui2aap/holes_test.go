package agui2aap_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/bridge/agui2aap"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/demo"
)

// Any thread id a run accepts is addressed escaped by every route: "a/b"
// is DELETE …/threads/a%2Fb. The ids no URL path can carry ("." and "..",
// which clients remove as dot segments) are refused by the run, with the
// rule named.
func TestThreadIDsAddressedEscaped(t *testing.T) {
	e := newEnv(t, func(cfg *agui2aap.Config) { cfg.APIKeys = []string{"key-a"} })
	ids := []string{"a/b", "a+b c", "50%", "x/../y", "?q=1#f", "é/ü", "...", "a%2Fb"}
	for _, id := range ids {
		c := e.conv(id)
		c.Headers = []string{"Authorization", "Bearer key-a"}
		c.say("hello")
		c.run(t)
	}
	listed := map[string]bool{}
	for _, th := range e.listThreads(t, "?limit=100", "key-a").Threads {
		listed[th.ThreadID] = true
	}
	require.Len(t, listed, len(ids))
	sessions := len(e.sessions(t))
	for _, id := range ids {
		require.True(t, listed[id], id)
		r := e.deleteThread(t, url.PathEscape(id), "key-a")
		require.Equal(t, http.StatusNoContent, r.Status, "DELETE %s: %s", url.PathEscape(id), r.Body)
		sessions--
		assert.Len(t, e.sessions(t), sessions, "the AAP session of %q is deleted", id)
	}
	assert.Empty(t, e.listThreads(t, "", "key-a").Threads)

	for _, id := range []string{".", ".."} {
		c := e.conv(id)
		c.say("hello")
		r := e.post(t, "/agents/demo", c.input("", nil), "Authorization", "Bearer key-a")
		assert.Equal(t, http.StatusBadRequest, r.Status, "%q: %s", id, r.Body)
		assert.Equal(t, "invalid_input", r.errorCode())
		assert.Contains(t, r.errorMessage(), "cannot be addressed in a URL path")
	}
	assert.Empty(t, e.listThreads(t, "", "key-a").Threads, "nothing stored")
	assert.Len(t, e.sessions(t), 0, "no AAP session for a refused id")
}

// With --forward-auth every route but the health checks needs a bearer
// key: a caller presenting none gets 401 with a JSON body naming the
// problem, never the metrics, the agents or the anonymous caller's
// threads.
func TestForwardAuthNeedsAKey(t *testing.T) {
	up := httptestServer(t, demo.NewAAPAgent(demo.AAPAgentOptions{APIKeys: []string{"k1"}}))
	e := newBridge(t, up, func(c *agui2aap.Config) { c.ForwardAuth = true })
	c := e.conv("t1")
	c.Headers = []string{"Authorization", "Bearer k1"}
	c.say("hello")
	c.run(t)

	routes := []struct{ method, path string }{
		{http.MethodGet, "/metrics"},
		{http.MethodGet, "/agents"},
		{http.MethodGet, "/agents/demo/threads"},
		{http.MethodDelete, "/agents/demo/threads/t1"},
		{http.MethodPost, "/agents/demo"},
	}
	for _, auth := range []string{"", "Basic azE6", "Bearer ", "Bearer"} {
		for _, rt := range routes {
			req, err := http.NewRequestWithContext(bridgetest.Context(t), rt.method, e.URL+rt.path, nil)
			require.NoError(t, err)
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			r := do(t, req)
			assert.Equal(t, http.StatusUnauthorized, r.Status, "%s %s with %q: %s", rt.method, rt.path, auth, r.Body)
			assert.Equal(t, "application/json", r.Header.Get("Content-Type"), rt.path)
			assert.Equal(t, "unauthorized", r.errorCode(), rt.path)
			assert.Contains(t, r.errorMessage(), "Authorization: Bearer", rt.path)
			assert.Contains(t, r.Header.Get("WWW-Authenticate"), "Bearer", rt.path)
		}
	}
	assert.Equal(t, http.StatusOK, e.get(t, "/healthz").Status, "health needs no key")
	assert.NotEqual(t, http.StatusUnauthorized, e.get(t, "/readyz").Status, "readiness needs no key")
	assert.Equal(t, http.StatusOK, e.get(t, "/metrics", "Authorization", "Bearer k1").Status)
	assert.Equal(t, http.StatusOK, e.get(t, "/agents", "Authorization", "Bearer k1").Status)
	assert.Len(t, e.listThreads(t, "", "k1").Threads, 1, "the thread is still there")
}
