package agui2aap_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/aapagui/aapagui/bridge/agui2aap"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/demo"
)

// TestTracing runs with the client's own trace context: the bridge's
// server span continues that trace, each call to the AAP server (/meta,
// the new session, the turn) is a client span under it whose traceparent
// the server receives, and the run's store operations are spans under it.
func TestTracing(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	// The traceparents the AAP server received, by "METHOD path".
	up := bridgetest.TraceUpstream(t, demo.NewAAPAgent(demo.AAPAgentOptions{}), func(r *http.Request) string {
		path := r.URL.Path
		if strings.HasPrefix(path, "/sessions/") {
			path = "/sessions/:id" + path[strings.LastIndex(path, "/"):]
		}
		return r.Method + " " + path
	})
	e := newBridge(t, up.URL, func(c *agui2aap.Config) { c.TracerProvider = tp })

	const clientTrace, clientSpan = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	c := e.conv("traced")
	c.Headers = []string{"traceparent", "00-" + clientTrace + "-" + clientSpan + "-01"}
	c.say("hello")
	c.run(t)

	server, spans := bridgetest.ServerSpan(t, exp, "POST /agents/:name", clientTrace, clientSpan)

	var calls []tracetest.SpanStub
	for _, s := range spans {
		if strings.HasPrefix(s.Name, "upstream ") {
			calls = append(calls, s)
		}
	}
	require.Len(t, calls, 3, "GET /meta, POST /sessions, POST /sessions/:id/turns")
	var sent []string
	for _, s := range calls {
		assert.Equal(t, trace.SpanKindClient, s.SpanKind)
		assert.Equal(t, server.SpanContext.SpanID(), s.Parent.SpanID(), "each call is a child of the request")
		sent = append(sent, "00-"+clientTrace+"-"+s.SpanContext.SpanID().String()+"-01")
	}
	got := []string{up.Traceparent("GET /meta"), up.Traceparent("POST /sessions"), up.Traceparent("POST /sessions/:id/turns")}
	assert.ElementsMatch(t, sent, got, "the AAP server received each call's own traceparent")

	for _, op := range []string{"store.LockThread", "store.GetThread", "store.SaveThreadUnlock"} {
		s, ok := bridgetest.SpanNamed(spans, op)
		if assert.True(t, ok, op) {
			assert.Equal(t, server.SpanContext.SpanID(), s.Parent.SpanID(), op)
		}
	}
}
