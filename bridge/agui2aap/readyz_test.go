package agui2aap_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/agui2aap"
	"github.com/aapagui/aapagui/demo"
)

// keyedAAP is the AAP demo agent behind a check of one bearer key, as an
// AAP server with keys answers: 401 with a JSON error to any other, on
// every route (GET /meta included). It records the Authorization of each
// GET /meta.
type keyedAAP struct {
	URL string
	mu  sync.Mutex
	got []string
}

func newKeyedAAP(t *testing.T, key string) *keyedAAP {
	k := &keyedAAP{}
	agent := demo.NewAAPAgent(demo.AAPAgentOptions{})
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/meta" {
			k.mu.Lock()
			k.got = append(k.got, r.Header.Get("Authorization"))
			k.mu.Unlock()
		}
		if r.Header.Get("Authorization") != "Bearer "+key {
			writeJSON(w, http.StatusUnauthorized, aap.ErrorResponse{Error: aap.ErrorBody{Code: "unauthorized", Message: "a valid API key is required"}})
			return
		}
		agent.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	k.URL = s.URL
	return k
}

func (k *keyedAAP) metaAuth() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.got...)
}

// GET /readyz asks the AAP server with the bridge's own key or none, never
// with the caller's: under --forward-auth nobody can try AAP keys through
// it, and a 401 from the AAP server is an answer (it is up).
func TestReadyzUsesNoCallerCredential(t *testing.T) {
	t.Run("forwarded keys", func(t *testing.T) {
		up := newKeyedAAP(t, "the-real-key")
		e := newBridge(t, up.URL, func(c *agui2aap.Config) { c.ForwardAuth = true })
		for _, auth := range []string{"", "Bearer guess-1", "Bearer the-real-key"} {
			r := e.get(t, "/readyz", "Authorization", auth)
			require.Equal(t, http.StatusOK, r.Status, r.Body)
			assert.JSONEq(t, `{"status":"ok"}`, r.Body, "a forwarded key is not checked here: ready or not only")
		}
		assert.Equal(t, []string{""}, up.metaAuth(), "one GET /meta, without a key")
	})
	t.Run("the bridge's key", func(t *testing.T) {
		up := newKeyedAAP(t, "upstream-key")
		e := newBridge(t, up.URL, func(c *agui2aap.Config) { c.UpstreamAPIKey = "upstream-key" })
		r := e.get(t, "/readyz", "Authorization", "Bearer guess-1")
		require.Equal(t, http.StatusOK, r.Status, r.Body)
		assert.Equal(t, []string{"Bearer upstream-key"}, up.metaAuth())
	})
}

// GET /readyz tells a caller without an API key only whether the bridge is
// ready; a key holder learns what is not.
func TestReadyzTellsOnlyKeyHolders(t *testing.T) {
	keyed := func(c *agui2aap.Config) { c.APIKeys = []string{"k1"} }
	up := newBridge(t, demoAAPServer(t), keyed)
	for _, auth := range []string{"", "Bearer wrong"} {
		r := up.get(t, "/readyz", "Authorization", auth)
		require.Equal(t, http.StatusOK, r.Status, r.Body)
		assert.JSONEq(t, `{"status":"ok"}`, r.Body)
	}
	r := up.get(t, "/readyz", "Authorization", "Bearer k1")
	assert.JSONEq(t, `{"status":"ok","store":"ok","upstream":"ok"}`, r.Body)

	down := newBridge(t, deadUpstream(t), keyed)
	for _, auth := range []string{"", "Bearer wrong"} {
		r := down.get(t, "/readyz", "Authorization", auth)
		require.Equal(t, http.StatusServiceUnavailable, r.Status, r.Body)
		assert.Equal(t, "not_ready", r.errorCode())
		assert.Equal(t, "the server is not ready", r.errorMessage())
	}
	r = down.get(t, "/readyz", "Authorization", "Bearer k1")
	require.Equal(t, http.StatusServiceUnavailable, r.Status, r.Body)
	assert.Equal(t, "the AAP server is not ready: the AAP server could not be reached", r.errorMessage())
}

// However many callers probe, the AAP server is asked once per
// web.ReadyTTL.
func TestReadyzAsksOncePerTTL(t *testing.T) {
	up := newKeyedAAP(t, "upstream-key")
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	e := newBridge(t, up.URL, func(c *agui2aap.Config) {
		c.UpstreamAPIKey = "upstream-key"
		c.Clock = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	})
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() { assert.Equal(t, http.StatusOK, e.get(t, "/readyz").Status) })
	}
	wg.Wait()
	assert.Equal(t, 1, len(up.metaAuth()), "one GET /meta for 20 callers")
	mu.Lock()
	now = now.Add(3 * time.Second)
	mu.Unlock()
	assert.Equal(t, http.StatusOK, e.get(t, "/readyz").Status)
	assert.Equal(t, 2, len(up.metaAuth()), "a stale result is checked again")
}
