package agui2aap_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/bridge/agui2aap"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/internal/testkit/metricstest"
	"github.com/aapagui/aapagui/internal/testkit/refused"
	"github.com/aapagui/aapagui/store"
)

// TestMetrics holds a conversation with the AAP demo agent through
// agui2aap over real HTTP and reads GET /metrics back with the Prometheus
// text parser: requests by route template and status, runs in flight back
// to 0, durations and time to first event, events by type and direction,
// upstream calls by call, outcome and code, the 409, store latencies, the
// bytes of every event stream, and the open interrupt.
func TestMetrics(t *testing.T) {
	const key = "metrics-key"
	e := newEnv(t, func(c *agui2aap.Config) { c.APIKeys = []string{key} })
	metricsURL := e.URL + "/metrics"
	auth := []string{"Authorization", "Bearer " + key}

	r := e.get(t, "/metrics")
	require.Equal(t, http.StatusUnauthorized, r.Status, "on the main listener /metrics is behind the API key")
	before := metricstest.Scrape(t, metricsURL, key)
	assert.Equal(t, 0.0, before.Value("agui2aap_runs_in_flight"))
	assert.Equal(t, 1.0, before.Value("agui2aap_build_info"))

	c := e.conv("metrics-thread")
	c.Headers = auth
	c.Tools = append(c.Tools, weatherTool)
	sseBytes := 0
	run := func(res *result) *result {
		sseBytes += len(res.Body)
		return res
	}
	c.say("hello there")
	run(c.run(t))
	c.say("search cats")
	res := run(c.run(t))
	require.Len(t, res.interrupts(), 1)
	mid := metricstest.Scrape(t, metricsURL, key)
	assert.Equal(t, 1.0, mid.Value("agui2aap_interrupts_open"), "the search waits for permission")
	run(c.run(t, approve(res.interrupts()[0].ID)))
	c.say("fail")
	res = run(c.run(t))
	require.NotNil(t, res.Error)

	after := metricstest.Scrape(t, metricsURL, key)
	assert.Equal(t, 0.0, after.Value("agui2aap_interrupts_open"), "the permission was answered")
	assert.Equal(t, float64(sseBytes), after.Value("agui2aap_sse_bytes_written_total"), "every byte of the four event streams")

	// A long run, a second run on the thread that gets 409 while it runs,
	// and the client leaving the long one.
	c.say("long 1000000")
	body, err := json.Marshal(c.input("", nil))
	require.NoError(t, err)
	leave := bridgetest.Streaming(t, e.URL+"/agents/demo", key, string(body), `"TEXT_MESSAGE_CONTENT"`, 3)
	held := e.post(t, "/agents/demo", c.input("", nil), auth...)
	require.Equal(t, http.StatusConflict, held.Status, held.Body)
	leave()

	m := bridgetest.Settled(t, metricsURL, key, "agui2aap_runs_in_flight", "agui2aap_run_duration_seconds", 5)

	const agents = "/agents/:name"
	// A request is counted once its handler has returned, which for the run
	// the client left comes after the run's own end is counted.
	require.Eventually(t, func() bool {
		m = metricstest.Scrape(t, metricsURL, key)
		return m.Value("agui2aap_http_requests_total", "route", agents, "method", "POST", "status", "200") == 5
	}, bridgetest.Timeout, 10*time.Millisecond, "the left run's request is counted")
	assert.Equal(t, 5.0, m.Value("agui2aap_http_requests_total", "route", agents, "method", "POST", "status", "200"))
	assert.Equal(t, 1.0, m.Value("agui2aap_http_requests_total", "route", agents, "method", "POST", "status", "409"))
	assert.Equal(t, 1.0, m.Value("agui2aap_http_requests_total", "route", "/metrics", "method", "GET", "status", "401"))
	assert.Equal(t, 6.0, m.Value("agui2aap_http_request_duration_seconds", "route", agents, "method", "POST"))
	assert.Equal(t, 1.0, m.Value("agui2aap_run_conflicts_total"))

	assert.Equal(t, 5.0, m.Value("agui2aap_run_duration_seconds", "mode", "delta"))
	assert.Equal(t, 5.0, m.Value("agui2aap_run_first_event_seconds", "mode", "delta"))
	assert.Equal(t, 5.0, m.Value("agui2aap_events_total", "direction", "in", "type", "turn_start"))
	assert.Equal(t, 5.0, m.Value("agui2aap_events_total", "direction", "out", "type", "RUN_STARTED"))
	assert.Equal(t, 2.0, m.Value("agui2aap_events_total", "direction", "out", "type", "RUN_ERROR"), "the failed run, and the end of the run whose client left")
	assert.Equal(t, 1.0, m.Value("agui2aap_events_total", "direction", "in", "type", "tool_result"))
	assert.GreaterOrEqual(t, m.Value("agui2aap_events_total", "direction", "in", "type", "text_delta"), 3.0)
	assert.GreaterOrEqual(t, m.Value("agui2aap_events_total", "direction", "out", "type", "TEXT_MESSAGE_CONTENT"), 3.0)

	assert.Equal(t, 1.0, m.Value("agui2aap_upstream_requests_total", "call", "meta", "outcome", "ok"), "/meta is cached")
	assert.Equal(t, 1.0, m.Value("agui2aap_upstream_requests_total", "call", "create_session", "outcome", "ok"))
	assert.Equal(t, 3.0, m.Value("agui2aap_upstream_requests_total", "call", "turn", "outcome", "ok", "code", "none"))
	assert.Equal(t, 1.0, m.Value("agui2aap_upstream_requests_total", "call", "turn", "outcome", "error", "code", "agent_error"))
	if !assert.Equal(t, 1.0, m.Value("agui2aap_upstream_requests_total", "call", "turn", "outcome", "cancelled")) {
		for _, f := range m["agui2aap_upstream_requests_total"].GetMetric() {
			t.Log(f.String())
		}
	}

	assert.Equal(t, 6.0, m.Value("agui2aap_store_operation_duration_seconds", "op", "LockThread"))
	assert.Equal(t, 5.0, m.Value("agui2aap_store_operation_duration_seconds", "op", "GetThread"))
	assert.Equal(t, 5.0, m.Value("agui2aap_store_operation_duration_seconds", "op", "SaveThreadUnlock"), "each run's end saves the thread and frees it in one write")
	assert.Equal(t, 0.0, m.Value("agui2aap_store_errors_total"))
	assert.Greater(t, m.Value("agui2aap_sse_bytes_written_total"), float64(sseBytes), "the long run's bytes")

	bridgetest.NoLabelHolds(t, m, c.ThreadID, key)
}

// TestMetricsSeparateListener: with SeparateMetrics the AG-UI handler has
// no /metrics and MetricsHandler serves it without a key; an unreachable
// AAP server is counted with its code.
func TestMetricsSeparateListener(t *testing.T) {
	deadURL := refused.URL(t)
	srv, err := agui2aap.New(agui2aap.Config{Upstream: deadURL, Store: store.NewMemory(), Serving: agui2aap.Serving{APIKeys: []string{"k"}, SeparateMetrics: true}})
	require.NoError(t, err)
	api := httptest.NewServer(srv)
	t.Cleanup(api.Close)
	mh := httptest.NewServer(srv.MetricsHandler())
	t.Cleanup(mh.Close)
	e := &env{URL: api.URL}

	r := e.get(t, "/metrics", "Authorization", "Bearer k")
	assert.Equal(t, http.StatusNotFound, r.Status)
	c := e.conv("t")
	c.Headers = []string{"Authorization", "Bearer k"}
	c.say("hi")
	r = e.post(t, "/agents/demo", c.input("", nil), c.Headers...)
	require.Equal(t, http.StatusBadGateway, r.Status, r.Body)
	assert.Equal(t, "upstream_unreachable", r.errorCode())

	m := metricstest.Scrape(t, mh.URL, "")
	assert.Equal(t, 1.0, m.Value("agui2aap_upstream_requests_total", "call", "meta", "outcome", "error", "code", "upstream_unreachable"))
	assert.Equal(t, 1.0, m.Value("agui2aap_http_requests_total", "route", "/agents/:name", "status", "502"))
	assert.Equal(t, 0.0, m.Value("agui2aap_runs_in_flight"))
}
