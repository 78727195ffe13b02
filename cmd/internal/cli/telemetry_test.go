package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTracesEnabled(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want bool
	}{
		{nil, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, true},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true},
		{map[string]string{"OTEL_TRACES_EXPORTER": "console"}, true},
		{map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, false},
		{map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}, false},
		{map[string]string{"OTEL_SDK_DISABLED": "false", "OTEL_TRACES_EXPORTER": "otlp"}, true},
	} {
		assert.Equal(t, tc.want, tracesEnabled(func(k string) string { return tc.env[k] }), "%v", tc.env)
	}
}

func TestTracerFromEnv(t *testing.T) {
	t.Setenv("OTEL_TRACES_EXPORTER", "")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	tp, shutdown, err := tracerFromEnv(context.Background(), "svc")
	require.NoError(t, err)
	assert.Nil(t, tp, "off unless configured")
	assert.NoError(t, shutdown(context.Background()))

	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	_, _, err = tracerFromEnv(context.Background(), "svc")
	assert.ErrorContains(t, err, `OTLP protocol "grpc" is not supported`)

	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	t.Setenv("OTEL_TRACES_EXPORTER", "zipkin")
	_, _, err = tracerFromEnv(context.Background(), "svc")
	assert.ErrorContains(t, err, `OTEL_TRACES_EXPORTER="zipkin" is not supported`)

	t.Setenv("OTEL_TRACES_EXPORTER", "otlp")
	tp, shutdown, err = tracerFromEnv(context.Background(), "svc")
	require.NoError(t, err)
	assert.NotNil(t, tp)
	assert.NoError(t, shutdown(context.Background()))
}

// TestServeMetricsOffLoopback: a metrics listener on an address other
// than loopback is warned of, in a line with its address; one on
// loopback is not.
func TestServeMetricsOffLoopback(t *testing.T) {
	for addr, warns := range map[string]bool{"0.0.0.0:0": true, ":0": true, "127.0.0.1:0": false, "localhost:0": false} {
		var buf bytes.Buffer
		stop, err := ServeMetrics(zerolog.New(&buf), addr, http.NotFoundHandler())
		require.NoError(t, err, addr)
		stop()
		var warning struct {
			Level, Message string
			Listen         string `json:"metrics_listen"`
		}
		for _, line := range strings.Split(buf.String(), "\n") {
			if strings.Contains(line, `"level":"warn"`) {
				require.NoError(t, json.Unmarshal([]byte(line), &warning))
			}
		}
		if !warns {
			assert.Empty(t, warning.Level, "%s: no warning", addr)
			continue
		}
		assert.Equal(t, "warn", warning.Level, addr)
		assert.Contains(t, warning.Message, "served without a key to everyone who can reach it", addr)
		assert.NotEmpty(t, warning.Listen, addr)
	}
}
