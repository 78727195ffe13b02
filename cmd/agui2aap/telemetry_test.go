package main

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/cmd/internal/clitest"
)

// TestMetricsListen: --metrics-listen serves /metrics on a port of its own
// without the API key, and the AG-UI port no longer serves it.
func TestMetricsListen(t *testing.T) {
	t.Parallel()
	clitest.MetricsListen(t, "agui2aap")
}

// TestTracesOverOTLP: with OTEL_TRACES_EXPORTER=otlp and an endpoint, a
// run's spans reach an OTLP/HTTP collector: the request's server span, the
// calls to the AAP server and the store operations as its children.
// OTEL_SERVICE_NAME names the service.
func TestTracesOverOTLP(t *testing.T) {
	t.Parallel()
	clitest.TracesOverOTLP(t, clitest.Traces{
		Env: func(collector string) []string {
			return []string{"OTEL_TRACES_EXPORTER=otlp", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=" + collector + "/v1/traces",
				"OTEL_BSP_SCHEDULE_DELAY=20", "OTEL_SERVICE_NAME=agui2aap-test"}
		},
		Turn: func(t *testing.T, ctx context.Context, url string) {
			resp := post(t, ctx, url+"/agents/demo", runBody("r1", `{"id":"u1","role":"user","content":"hello"}`))
			require.Equal(t, http.StatusOK, resp.StatusCode)
			_, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
		},
		Server:  "POST /agents/:name",
		Save:    "store.SaveThreadUnlock",
		Service: "agui2aap-test",
	})
}

// TestMetricsListenOffLoopback: --metrics-listen on every interface starts
// with a warning that /metrics is served without a key to anyone who can
// reach it.
func TestMetricsListenOffLoopback(t *testing.T) {
	t.Parallel()
	clitest.MetricsListenOffLoopback(t)
}

// TestCORSWildcard: a --cors-origin with a wildcard stops the start,
// naming why.
func TestCORSWildcard(t *testing.T) {
	clitest.CORSWildcard(t, run)
}
