package cli

import (
	"context"
	"testing"

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
