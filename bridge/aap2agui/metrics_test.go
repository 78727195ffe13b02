package aap2agui_test

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/internal/testkit/metricstest"
	"github.com/aapagui/aapagui/internal/testkit/refused"
	"github.com/aapagui/aapagui/store"
)

// TestMetrics holds a conversation with the demo agent over real HTTP and
// reads GET /metrics back with the Prometheus text parser: requests by
// route template and status, turns in flight back to 0, durations and time
// to first event by stream mode, events by type and direction, upstream
// calls by outcome and code, the 409, store latencies, the bytes of every
// event stream, and the open interrupt.
func TestMetrics(t *testing.T) {
	const key = "metrics-key"
	e := newEnv(t, demoAgent(t), func(c *aap2agui.Config) { c.APIKeys = []string{key} })
	metricsURL := e.Root + "/metrics"
	turnsURL := func(id string) string { return e.URL + "/sessions/" + id + "/turns" }

	// On the main listener /metrics is behind the API key.
	requireJSONError(t, doRaw(t, http.MethodGet, metricsURL, "", ""), http.StatusUnauthorized, "unauthorized")
	before := metricstest.Scrape(t, metricsURL, key)
	assert.Equal(t, 0.0, before.Value("aap2agui_turns_in_flight"))
	assert.Equal(t, 1.0, before.Value("aap2agui_build_info"))
	assert.NotEmpty(t, before.LabelValues("aap2agui_build_info", "goversion"))
	assert.True(t, before.Has("go_goroutines"), "the Go runtime collector is registered")

	id := e.createSession(t, aap.PostSessionsRequest{
		Agent: aap.AgentConfig{Tools: []aap.ServerToolRef{{Name: demo.SearchTool}}},
		Tools: []aap.ToolSpec{weatherSpec},
	})
	sseBytes := 0
	turn := func(body string) rawResponse {
		t.Helper()
		r := doRaw(t, http.MethodPost, turnsURL(id), key, body)
		require.Equal(t, http.StatusOK, r.Status, r.Body)
		if strings.HasPrefix(r.Header.Get("Content-Type"), "text/event-stream") {
			sseBytes += len(r.Body)
		}
		return r
	}
	turn(`{"stream":"delta","messages":[{"role":"user","content":"hello there"}]}`)
	turn(`{"stream":"none","messages":[{"role":"user","content":"hello"}]}`)
	r := turn(`{"stream":"delta","messages":[{"role":"user","content":"search cats"}]}`)
	require.Contains(t, r.Body, `"stopReason":"tool_use"`)
	callID := regexpFind(t, `"toolCallId":"(call_[0-9a-f]+)"`, r.Body)

	mid := metricstest.Scrape(t, metricsURL, key)
	assert.Equal(t, 1.0, mid.Value("aap2agui_interrupts_open"), "the search waits for permission")

	turn(`{"stream":"delta","messages":[{"role":"tool_permission","toolCallId":"` + callID + `","granted":true}]}`)
	turn(`{"stream":"delta","messages":[{"role":"user","content":"fail"}]}`)

	after := metricstest.Scrape(t, metricsURL, key)
	assert.Equal(t, 0.0, after.Value("aap2agui_interrupts_open"), "the permission was answered")
	assert.Equal(t, float64(sseBytes), after.Value("aap2agui_sse_bytes_written_total"),
		"every byte of the four event streams, and none of the JSON answers")

	// A long turn, a second turn that gets 409 while it runs, and the
	// client leaving the long one.
	leave := bridgetest.Streaming(t, turnsURL(id), key, `{"stream":"delta","messages":[{"role":"user","content":"long 1000000"}]}`, "event: text_delta", 3)
	held := doRaw(t, http.MethodPost, turnsURL(id), key, `{"messages":[{"role":"user","content":"me too"}]}`)
	requireJSONError(t, held, http.StatusConflict, "turn_in_progress")
	leave()
	doRaw(t, http.MethodGet, e.Root+"/no/such/path", key, "")

	m := bridgetest.Settled(t, metricsURL, key, "aap2agui_turns_in_flight", "aap2agui_turn_duration_seconds", 6)

	const turns = "/sessions/:id/turns"
	assert.Equal(t, 1.0, m.Value("aap2agui_http_requests_total", "route", "/sessions", "method", "POST", "status", "201"))
	assert.Equal(t, 6.0, m.Value("aap2agui_http_requests_total", "route", turns, "method", "POST", "status", "200"))
	assert.Equal(t, 1.0, m.Value("aap2agui_http_requests_total", "route", turns, "method", "POST", "status", "409"))
	assert.Equal(t, 1.0, m.Value("aap2agui_http_requests_total", "route", "/metrics", "status", "401"))
	assert.Equal(t, 1.0, m.Value("aap2agui_http_requests_total", "route", "unmatched", "status", "404"))
	assert.Equal(t, 7.0, m.Value("aap2agui_http_request_duration_seconds", "route", turns, "method", "POST"))
	assert.Equal(t, 1.0, m.Value("aap2agui_turn_conflicts_total"))

	assert.Equal(t, 5.0, m.Value("aap2agui_turn_duration_seconds", "mode", "delta"))
	assert.Equal(t, 1.0, m.Value("aap2agui_turn_duration_seconds", "mode", "none"))
	assert.Equal(t, 5.0, m.Value("aap2agui_turn_first_event_seconds", "mode", "delta"))
	assert.Equal(t, 1.0, m.Value("aap2agui_turn_first_event_seconds", "mode", "none"))

	assert.Equal(t, 6.0, m.Value("aap2agui_events_total", "direction", "in", "type", "RUN_STARTED"))
	assert.Equal(t, 5.0, m.Value("aap2agui_events_total", "direction", "out", "type", "turn_start"), "stream none answers with JSON, not events")
	assert.Equal(t, 1.0, m.Value("aap2agui_events_total", "direction", "in", "type", "RUN_ERROR"))
	assert.GreaterOrEqual(t, m.Value("aap2agui_events_total", "direction", "in", "type", "TEXT_MESSAGE_CONTENT"), 3.0)
	assert.GreaterOrEqual(t, m.Value("aap2agui_events_total", "direction", "out", "type", "text_delta"), 3.0)
	assert.Equal(t, 1.0, m.Value("aap2agui_events_total", "direction", "out", "type", "tool_call"))
	assert.Equal(t, 1.0, m.Value("aap2agui_events_total", "direction", "out", "type", "tool_result"))

	assert.Equal(t, 4.0, m.Value("aap2agui_upstream_requests_total", "call", "turn", "outcome", "ok", "code", "none"))
	assert.Equal(t, 1.0, m.Value("aap2agui_upstream_requests_total", "call", "turn", "outcome", "error", "code", "agent_error"))
	assert.Equal(t, 1.0, m.Value("aap2agui_upstream_requests_total", "call", "turn", "outcome", "cancelled"))

	assert.Equal(t, 1.0, m.Value("aap2agui_store_operation_duration_seconds", "op", "CreateSession"))
	// Each turn's start; each turn's end saves and frees the lock in one
	// write (the one that answered a permission writes the history whole
	// first, the answer's result placed after its call).
	assert.Equal(t, 6.0, m.Value("aap2agui_store_operation_duration_seconds", "op", "SaveSession"))
	assert.Equal(t, 6.0, m.Value("aap2agui_store_operation_duration_seconds", "op", "SaveSessionUnlock"))
	assert.Equal(t, 1.0, m.Value("aap2agui_store_operation_duration_seconds", "op", "ReplaceHistory")+m.Value("aap2agui_store_operation_duration_seconds", "op", "ReplaceTail"))
	assert.GreaterOrEqual(t, m.Value("aap2agui_store_operation_duration_seconds", "op", "LockLoadSession"), 7.0, "each turn's start")
	assert.GreaterOrEqual(t, m.Value("aap2agui_store_operation_duration_seconds", "op", "AppendHistory"), 1.0)
	assert.Equal(t, 0.0, m.Value("aap2agui_store_errors_total"))
	assert.Greater(t, m.Value("aap2agui_sse_bytes_written_total"), float64(sseBytes), "the long turn's bytes")

	// No label anywhere carries an id or a key.
	bridgetest.NoLabelHolds(t, m, id, callID, key)
}

// TestMetricsSeparateListener: with SeparateMetrics the API handler has no
// /metrics and MetricsHandler serves it without a key; an unreachable
// upstream is counted with its code; two servers in one process keep
// their own counts.
func TestMetricsSeparateListener(t *testing.T) {
	deadURL := refused.URL(t)
	srv, err := aap2agui.New(aap2agui.Config{Upstream: deadURL, Store: store.NewMemory(), Serving: aap2agui.Serving{APIKeys: []string{"k"}, SeparateMetrics: true}})
	require.NoError(t, err)
	api := httptest.NewServer(srv)
	t.Cleanup(api.Close)
	mh := httptest.NewServer(srv.MetricsHandler())
	t.Cleanup(mh.Close)
	other := newEnv(t, demoAgent(t))

	requireJSONError(t, doRaw(t, http.MethodGet, api.URL+"/metrics", "k", ""), http.StatusNotFound, "not_found")
	created := doRaw(t, http.MethodPost, api.URL+"/sessions", "k", `{"agent":{"name":"agent"}}`)
	require.Equal(t, http.StatusCreated, created.Status)
	id := regexpFind(t, `"sessionId":"([^"]+)"`, created.Body)
	requireJSONError(t, doRaw(t, http.MethodPost, api.URL+"/sessions/"+id+"/turns", "k", `{"messages":[{"role":"user","content":"hi"}]}`),
		http.StatusBadGateway, "upstream_unreachable")

	m := metricstest.Scrape(t, mh.URL, "")
	assert.Equal(t, 1.0, m.Value("aap2agui_upstream_requests_total", "call", "turn", "outcome", "error", "code", "upstream_unreachable"))
	assert.Equal(t, 1.0, m.Value("aap2agui_http_requests_total", "route", "/sessions/:id/turns", "status", "502"))
	assert.Equal(t, 1.0, m.Value("aap2agui_turn_duration_seconds"))
	assert.Equal(t, 0.0, m.Value("aap2agui_turn_first_event_seconds"), "no event ever came")
	assert.Equal(t, 0.0, m.Value("aap2agui_turns_in_flight"))

	o := metricstest.Scrape(t, other.Root+"/metrics", "")
	assert.Equal(t, 0.0, o.Value("aap2agui_upstream_requests_total"), "the other server's registry is its own")
}

// regexpFind returns the first group of pattern's first match in s.
func regexpFind(t *testing.T, pattern, s string) string {
	t.Helper()
	m := regexp.MustCompile(pattern).FindStringSubmatch(s)
	require.NotNil(t, m, "no %s in %s", pattern, s)
	return m[1]
}
