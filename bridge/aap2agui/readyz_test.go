package aap2agui_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/store"
)

// readyAgents are two agents, one of whose upstreams refuses connections,
// named as an operator would rather keep to themselves.
func readyAgents(t *testing.T, probes *atomic.Int64) []aap2agui.AgentConfig {
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	up := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			probes.Add(1)
		}
		demo.AGUIAgent{}.ServeHTTP(w, r)
	}))
	return []aap2agui.AgentConfig{
		{Agent: aap.AgentInfo{Name: "internal-billing-agent"}, Upstream: down.URL + "/agent"},
		{Agent: aap.AgentInfo{Name: "demo"}, Upstream: up},
	}
}

// GET /readyz tells a caller without the API key only whether the server
// is ready: not which agents it serves, nor why one of them does not
// answer. A key holder gets both.
func TestReadyzTellsOnlyKeyHolders(t *testing.T) {
	var probes atomic.Int64
	agents := readyAgents(t, &probes)
	for _, st := range []store.Store{store.NewMemory(), bridgetest.DownStore{Store: store.NewMemory()}} {
		e := newEnv(t, "", func(c *aap2agui.Config) {
			c.Upstream, c.Agent, c.Store, c.Agents, c.APIKeys = "", aap.AgentInfo{}, st, agents, []string{"k1"}
		})
		_, down := st.(bridgetest.DownStore)
		for _, key := range []string{"", "wrong"} {
			r := doRaw(t, http.MethodGet, e.Root+"/readyz", key, "")
			if down {
				requireJSONError(t, r, http.StatusServiceUnavailable, "not_ready")
				assert.NotContains(t, r.Body, "store", "key %q", key)
				continue
			}
			require.Equal(t, http.StatusOK, r.Status, r.Body)
			assert.JSONEq(t, `{"status":"ok"}`, r.Body, "key %q", key)
		}
		r := doRaw(t, http.MethodGet, e.Root+"/readyz", "k1", "")
		if down {
			requireJSONError(t, r, http.StatusServiceUnavailable, "not_ready")
			assert.Contains(t, r.Body, "the store is not reachable")
			continue
		}
		require.Equal(t, http.StatusOK, r.Status, r.Body)
		assert.Contains(t, r.Body, `"agent":"internal-billing-agent","status":"unreachable"`)
		assert.Contains(t, r.Body, "connection refused")
		assert.Contains(t, r.Body, `"agent":"demo","status":"ok"`)
	}
}

// However many callers probe at once or one after the other, the agents'
// upstreams are probed once per web.ReadyTTL.
func TestReadyzProbesOncePerTTL(t *testing.T) {
	var probes atomic.Int64
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	e := newEnv(t, "", func(c *aap2agui.Config) {
		c.Upstream, c.Agent, c.Agents = "", aap.AgentInfo{}, readyAgents(t, &probes)
		c.Clock = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	})
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			assert.Equal(t, http.StatusOK, doRaw(t, http.MethodGet, e.Root+"/readyz", "", "").Status)
		})
	}
	wg.Wait()
	for range 5 {
		assert.Equal(t, http.StatusOK, doRaw(t, http.MethodGet, e.Root+"/readyz", "", "").Status)
	}
	assert.EqualValues(t, 1, probes.Load(), "one probe for 25 callers")

	mu.Lock()
	now = now.Add(3 * time.Second)
	mu.Unlock()
	assert.Equal(t, http.StatusOK, doRaw(t, http.MethodGet, e.Root+"/readyz", "", "").Status)
	assert.EqualValues(t, 2, probes.Load(), "a stale result is checked again")
}
