package main

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/internal/testkit/metricstest"
	"github.com/aapagui/aapagui/internal/testkit/otlptest"
	"github.com/aapagui/aapagui/internal/testkit/proctest"
)

// TestMetricsListen: --metrics-listen serves /metrics on a port of its own
// without the API key, and the API port no longer serves it.
func TestMetricsListen(t *testing.T) {
	t.Parallel()
	p := proctest.Start(t, nil, "--listen", "127.0.0.1:0", "--store", "memory:", "--api-key", "k", "--metrics-listen", "127.0.0.1:0")
	addr := p.LogField("metrics_listen")
	require.NotEmpty(t, addr, "the metrics address is logged")
	m := metricstest.Scrape(t, "http://"+addr+"/metrics", "")
	assert.Equal(t, 1.0, m.Value("aap2agui_build_info"))

	req, err := http.NewRequest(http.MethodGet, p.URL()+"/metrics", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer k")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
}

// TestTracesOverOTLP: with OTEL_EXPORTER_OTLP_ENDPOINT set, a turn's spans
// reach an OTLP/HTTP collector: the request's server span, the upstream
// call and the store operations as its children, under the service name.
func TestTracesOverOTLP(t *testing.T) {
	t.Parallel()
	col := otlptest.New(t)
	p := proctest.Start(t, []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + col.URL, "OTEL_BSP_SCHEDULE_DELAY=20"},
		"--listen", "127.0.0.1:0", "--store", "memory:")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := aap.NewClient(p.URL(), aap.ClientOptions{})
	created, err := c.CreateSession(ctx, &aap.PostSessionsRequest{Agent: aap.AgentConfig{Name: "demo"}})
	require.NoError(t, err)
	_, err = c.Turn(ctx, created.SessionID, &aap.PostSessionTurnRequest{Messages: []aap.Message{aap.UserText("hello")}})
	require.NoError(t, err)

	var server, upstream, save otlptest.Span
	if !assert.Eventually(t, func() bool {
		var ok1, ok2, ok3 bool
		server, ok1 = col.Named("POST /sessions/:id/turns")
		upstream, ok2 = col.Named("upstream POST")
		save, ok3 = col.Named("store.SaveSession")
		return ok1 && ok2 && ok3
	}, 30*time.Second, 20*time.Millisecond) {
		t.Fatalf("spans received: %+v", col.Spans())
	}
	assert.Equal(t, "aap2agui", server.Service)
	assert.Equal(t, server.SpanID, upstream.ParentSpanID)
	assert.Equal(t, server.TraceID, upstream.TraceID)
	assert.Equal(t, server.SpanID, save.ParentSpanID)
}
