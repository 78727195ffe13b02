package metrics_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/bridge/internal/metrics"
	"github.com/aapagui/aapagui/internal/testkit/metricstest"
)

// TestMiddleware: requests are counted by route template (never the path),
// methods outside the standard ones by OTHER, 409s as conflicts, and only
// event-stream bytes as SSE bytes.
func TestMiddleware(t *testing.T) {
	m := metrics.New(metrics.Options{Namespace: "test", Unit: "turn"})
	gin.SetMode(gin.ReleaseMode)
	e := gin.New()
	e.Use(m.Middleware())
	e.GET("/items/:id", func(c *gin.Context) { c.String(http.StatusOK, "plain body") })
	e.POST("/items/:id/stream", func(c *gin.Context) {
		c.Header("Content-Type", "text/event-stream")
		c.Status(http.StatusOK)
		_, _ = c.Writer.Write([]byte("data: 1\n\n"))
		_, _ = c.Writer.WriteString("data: 22\n\n")
	})
	e.POST("/items/:id/busy", func(c *gin.Context) { c.Status(http.StatusConflict) })
	e.NoRoute(func(c *gin.Context) { c.Status(http.StatusNotFound) })
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	mh := httptest.NewServer(m.Handler())
	t.Cleanup(mh.Close)

	send := func(method, path string) {
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(""))
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	send(http.MethodGet, "/items/secret-id-1")
	send(http.MethodGet, "/items/secret-id-2")
	send(http.MethodPost, "/items/secret-id-1/stream")
	send(http.MethodPost, "/items/secret-id-1/busy")
	send("FROB", "/secret-id-3")

	s := metricstest.Scrape(t, mh.URL, "")
	assert.Equal(t, 2.0, s.Value("test_http_requests_total", "route", "/items/:id", "method", "GET", "status", "200"))
	assert.Equal(t, 1.0, s.Value("test_http_requests_total", "route", "/items/:id/stream", "status", "200"))
	assert.Equal(t, 1.0, s.Value("test_http_requests_total", "route", "unmatched", "method", "OTHER", "status", "404"))
	assert.Equal(t, 1.0, s.Value("test_turn_conflicts_total"))
	assert.Equal(t, float64(len("data: 1\n\n")+len("data: 22\n\n")), s.Value("test_sse_bytes_written_total"), "the plain body is not counted")
	for _, v := range s.LabelValues("test_http_requests_total", "route") {
		assert.NotContains(t, v, "secret-id")
	}
}

// TestUpstreamAndTurn: results map to outcome and code; a turn counts its
// events, its first event once, and ends once.
func TestUpstreamAndTurn(t *testing.T) {
	m := metrics.New(metrics.Options{Namespace: "test", Unit: "run"})
	mh := httptest.NewServer(m.Handler())
	t.Cleanup(mh.Close)
	m.Upstream("turn", "demo", metrics.OutcomeOK)
	m.Upstream("turn", "other", metrics.OutcomeCancelled)
	m.Upstream("meta", "", "upstream_timeout")
	tr := m.StartTurn(time.Now(), "demo", "delta")
	for _, typ := range []string{"a", "b", "b", "a"} {
		tr.In(typ)
	}
	tr.Out("x")
	mid := metricstest.Scrape(t, mh.URL, "")
	assert.Equal(t, 1.0, mid.Value("test_runs_in_flight"))
	tr.End()
	tr.End()
	in, out := tr.Events()
	assert.Equal(t, 4, in)
	assert.Equal(t, 1, out)

	s := metricstest.Scrape(t, mh.URL, "")
	assert.Equal(t, 1.0, s.Value("test_upstream_requests_total", "call", "turn", "agent", "demo", "outcome", "ok", "code", "none"))
	assert.Equal(t, 1.0, s.Value("test_upstream_requests_total", "call", "turn", "agent", "other", "outcome", "cancelled", "code", "none"))
	assert.Equal(t, 0.0, s.Value("test_upstream_requests_total", "call", "turn", "agent", "other", "outcome", "ok"), "each agent its own series")
	assert.Equal(t, 1.0, s.Value("test_upstream_requests_total", "call", "meta", "outcome", "error", "code", "upstream_timeout"))
	assert.Equal(t, 2.0, s.Value("test_events_total", "direction", "in", "type", "a"))
	assert.Equal(t, 2.0, s.Value("test_events_total", "direction", "in", "type", "b"))
	assert.Equal(t, 1.0, s.Value("test_events_total", "direction", "out", "type", "x"))
	assert.Equal(t, 1.0, s.Value("test_run_first_event_seconds", "mode", "delta"))
	assert.Equal(t, 1.0, s.Value("test_run_duration_seconds", "agent", "demo", "mode", "delta"), "ended once")
	assert.Equal(t, 0.0, s.Value("test_runs_in_flight"))
}
