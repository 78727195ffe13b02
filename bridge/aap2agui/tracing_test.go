package aap2agui_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/demo"
)

// TestTracing sends a turn that carries the client's own trace context:
// the bridge's server span continues that trace, the upstream call is a
// client span under it whose traceparent the agent receives, and the store
// operations of the turn are spans under it too.
func TestTracing(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	up := bridgetest.TraceUpstream(t, demo.AGUIAgent{}, nil)
	e := newEnv(t, up.URL, func(c *aap2agui.Config) { c.TracerProvider = tp })
	id := e.createSession(t, aap.PostSessionsRequest{})

	const clientTrace, clientSpan = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	req, err := http.NewRequestWithContext(bridgetest.Context(t), http.MethodPost, e.URL+"/sessions/"+id+"/turns",
		strings.NewReader(`{"stream":"delta","messages":[{"role":"user","content":"hello"}]}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("traceparent", "00-"+clientTrace+"-"+clientSpan+"-01")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	_, err = io.ReadAll(resp.Body)
	require.NoError(t, err)
	resp.Body.Close()

	server, spans := bridgetest.ServerSpan(t, exp, "POST /sessions/:id/turns", clientTrace, clientSpan)
	assert.True(t, server.Parent.IsRemote())

	upstream, ok := bridgetest.SpanNamed(spans, "upstream POST")
	require.True(t, ok, "a span for the upstream call")
	assert.Equal(t, trace.SpanKindClient, upstream.SpanKind)
	assert.Equal(t, server.SpanContext.SpanID(), upstream.Parent.SpanID(), "the upstream call is a child of the request")
	assert.Equal(t, clientTrace, upstream.SpanContext.TraceID().String())
	assert.Equal(t, []string{"00-" + clientTrace + "-" + upstream.SpanContext.SpanID().String() + "-01"}, up.Traceparents(),
		"the agent received the upstream span's traceparent")

	for _, op := range []string{"store.LockLoadSession", "store.SaveSession"} {
		s, ok := bridgetest.SpanNamed(spansOf(spans, server.SpanContext.TraceID()), op)
		if assert.True(t, ok, op) {
			assert.Equal(t, server.SpanContext.SpanID(), s.Parent.SpanID(), op)
			assert.Equal(t, trace.SpanKindClient, s.SpanKind, op)
		}
	}

	// The request that created the session started a trace of its own.
	create, ok := bridgetest.SpanNamed(spans, "POST /sessions")
	require.True(t, ok)
	assert.False(t, create.Parent.IsValid())
	s, ok := bridgetest.SpanNamed(spansOf(spans, create.SpanContext.TraceID()), "store.CreateSession")
	require.True(t, ok)
	assert.Equal(t, create.SpanContext.SpanID(), s.Parent.SpanID())
}

// TestNoTracing: without a TracerProvider the upstream gets no
// traceparent, even from a client that sends one.
func TestNoTracing(t *testing.T) {
	up := bridgetest.TraceUpstream(t, demo.AGUIAgent{}, nil)
	e := newEnv(t, up.URL)
	id := e.createSession(t, aap.PostSessionsRequest{})
	req, err := http.NewRequestWithContext(bridgetest.Context(t), http.MethodPost, e.URL+"/sessions/"+id+"/turns",
		strings.NewReader(`{"messages":[{"role":"user","content":"hello"}]}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, []string{""}, up.Traceparents())
}

// spansOf returns the spans of one trace.
func spansOf(spans tracetest.SpanStubs, id trace.TraceID) tracetest.SpanStubs {
	var out tracetest.SpanStubs
	for _, s := range spans {
		if s.SpanContext.TraceID() == id {
			out = append(out, s)
		}
	}
	return out
}
