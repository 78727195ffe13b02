package agui2aap_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/aapagui/aapagui/bridge/agui2aap"
	"github.com/aapagui/aapagui/demo"
)

// TestTracing runs with the client's own trace context: the bridge's
// server span continues that trace, each call to the AAP server (/meta,
// the new session, the turn) is a client span under it whose traceparent
// the server receives, and the run's store operations are spans under it.
func TestTracing(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	var mu sync.Mutex
	received := map[string]string{} // "METHOD path" → traceparent
	agent := demo.NewAAPAgent(demo.AAPAgentOptions{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := r.URL.Path
		if strings.HasPrefix(path, "/sessions/") {
			path = "/sessions/:id" + path[strings.LastIndex(path, "/"):]
		}
		mu.Lock()
		received[r.Method+" "+path] = r.Header.Get("traceparent")
		mu.Unlock()
		agent.ServeHTTP(w, r)
	}))
	t.Cleanup(up.Close)
	e := newBridge(t, up.URL, func(c *agui2aap.Config) { c.TracerProvider = tp })

	const clientTrace, clientSpan = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	c := e.conv("traced")
	c.Headers = []string{"traceparent", "00-" + clientTrace + "-" + clientSpan + "-01"}
	c.say("hello")
	c.run(t)

	var server tracetest.SpanStub
	require.Eventually(t, func() bool {
		var ok bool
		server, ok = spanNamed(exp.GetSpans(), "POST /agents/:name")
		return ok
	}, testTimeout, 5*time.Millisecond, "the server span ends")
	spans := exp.GetSpans()
	assert.Equal(t, trace.SpanKindServer, server.SpanKind)
	assert.Equal(t, clientTrace, server.SpanContext.TraceID().String(), "the client's trace goes on")
	assert.Equal(t, clientSpan, server.Parent.SpanID().String())

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
	mu.Lock()
	got := []string{received["GET /meta"], received["POST /sessions"], received["POST /sessions/:id/turns"]}
	mu.Unlock()
	assert.ElementsMatch(t, sent, got, "the AAP server received each call's own traceparent")

	for _, op := range []string{"store.LockThread", "store.GetThread", "store.SaveThreadUnlock"} {
		s, ok := spanNamed(spans, op)
		if assert.True(t, ok, op) {
			assert.Equal(t, server.SpanContext.SpanID(), s.Parent.SpanID(), op)
		}
	}
}

// spanNamed returns the first span with this name.
func spanNamed(spans tracetest.SpanStubs, name string) (tracetest.SpanStub, bool) {
	for _, s := range spans {
		if s.Name == name {
			return s, true
		}
	}
	return tracetest.SpanStub{}, false
}
