package agui2aap_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/bridge/agui2aap"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/store"
)

// TestMetaFetchedOnceByConcurrentRuns: runs that find no cached /meta
// together (a cold start, an expired entry) share one GET /meta instead of
// each sending its own. Here the AAP server answers /meta only once every
// run has reached agui2aap, so each run that asked for itself would be
// counted.
func TestMetaFetchedOnceByConcurrentRuns(t *testing.T) {
	const runs = 20
	var arrived atomic.Int64
	allArrived := make(chan struct{})
	var metas atomic.Int64
	agent := demo.NewAAPAgent(demo.AAPAgentOptions{})
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/meta" {
			metas.Add(1)
			select {
			case <-allArrived:
			case <-time.After(bridgetest.Timeout / 2):
			}
		}
		agent.ServeHTTP(w, r)
	}))
	t.Cleanup(upstream.Close)

	srv, err := agui2aap.New(agui2aap.Config{Upstream: upstream.URL, Store: store.NewMemory()})
	require.NoError(t, err)
	bridge := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && arrived.Add(1) == runs {
			close(allArrived)
		}
		srv.ServeHTTP(w, r)
	}))
	t.Cleanup(bridge.Close)
	e := &env{URL: bridge.URL}

	var wg sync.WaitGroup
	for i := range runs {
		wg.Go(func() {
			c := e.conv(fmt.Sprint("thread-", i))
			c.say("hello")
			c.run(t)
		})
	}
	wg.Wait()
	assert.Equal(t, int64(1), metas.Load(), "GET /meta requests for %d runs that started together", runs)
}
