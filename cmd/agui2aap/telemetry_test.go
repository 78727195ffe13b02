package main

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/internal/testkit/metricstest"
	"github.com/aapagui/aapagui/internal/testkit/otlptest"
	"github.com/aapagui/aapagui/internal/testkit/proctest"
)

// TestMetricsListen: --metrics-listen serves /metrics on a port of its own
// without the API key, and the AG-UI port no longer serves it.
func TestMetricsListen(t *testing.T) {
	t.Parallel()
	p := proctest.Start(t, nil, "--listen", "127.0.0.1:0", "--store", "memory:", "--api-key", "k", "--metrics-listen", "127.0.0.1:0")
	addr := p.LogField("metrics_listen")
	require.NotEmpty(t, addr, "the metrics address is logged")
	m := metricstest.Scrape(t, "http://"+addr+"/metrics", "")
	assert.Equal(t, 1.0, m.Value("agui2aap_build_info"))

	req, err := http.NewRequest(http.MethodGet, p.URL()+"/metrics", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer k")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
}

// TestTracesOverOTLP: with OTEL_TRACES_EXPORTER=otlp and an endpoint, a
// run's spans reach an OTLP/HTTP collector: the request's server span, the
// calls to the AAP server and the store operations as its children.
func TestTracesOverOTLP(t *testing.T) {
	t.Parallel()
	col := otlptest.New(t)
	p := proctest.Start(t, []string{"OTEL_TRACES_EXPORTER=otlp", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=" + col.URL + "/v1/traces",
		"OTEL_BSP_SCHEDULE_DELAY=20", "OTEL_SERVICE_NAME=agui2aap-test"},
		"--listen", "127.0.0.1:0", "--store", "memory:")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp := post(t, ctx, p.URL()+"/agents/demo", runBody("r1", `{"id":"u1","role":"user","content":"hello"}`))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	_, err := io.ReadAll(resp.Body)
	require.NoError(t, err)

	var server, upstream, save otlptest.Span
	if !assert.Eventually(t, func() bool {
		var ok1, ok2, ok3 bool
		server, ok1 = col.Named("POST /agents/:name")
		upstream, ok2 = col.Named("upstream POST")
		save, ok3 = col.Named("store.SaveThreadUnlock")
		return ok1 && ok2 && ok3
	}, 30*time.Second, 20*time.Millisecond) {
		t.Fatalf("spans received: %+v", col.Spans())
	}
	assert.Equal(t, "agui2aap-test", server.Service, "OTEL_SERVICE_NAME names the service")
	assert.Equal(t, server.SpanID, upstream.ParentSpanID)
	assert.Equal(t, server.TraceID, upstream.TraceID)
	assert.Equal(t, server.SpanID, save.ParentSpanID)
}
