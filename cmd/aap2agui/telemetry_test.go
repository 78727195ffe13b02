package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/cmd/internal/clitest"
)

// TestMetricsListen: --metrics-listen serves /metrics on a port of its own
// without the API key, and the API port no longer serves it.
func TestMetricsListen(t *testing.T) {
	t.Parallel()
	clitest.MetricsListen(t, "aap2agui")
}

// TestTracesOverOTLP: with OTEL_EXPORTER_OTLP_ENDPOINT set, a turn's spans
// reach an OTLP/HTTP collector: the request's server span, the upstream
// call and the store operations as its children, under the service name.
func TestTracesOverOTLP(t *testing.T) {
	t.Parallel()
	clitest.TracesOverOTLP(t, clitest.Traces{
		Env: func(collector string) []string {
			return []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + collector, "OTEL_BSP_SCHEDULE_DELAY=20"}
		},
		Turn: func(t *testing.T, ctx context.Context, url string) {
			c := aap.NewClient(url, aap.ClientOptions{})
			created, err := c.CreateSession(ctx, &aap.PostSessionsRequest{Agent: aap.AgentConfig{Name: "demo"}})
			require.NoError(t, err)
			_, err = c.Turn(ctx, created.SessionID, &aap.PostSessionTurnRequest{Messages: []aap.Message{aap.UserText("hello")}})
			require.NoError(t, err)
		},
		Server:  "POST /sessions/:id/turns",
		Save:    "store.SaveSession",
		Service: "aap2agui",
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
