package bridgetest

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// SpanNamed returns the first span with this name.
func SpanNamed(spans tracetest.SpanStubs, name string) (tracetest.SpanStub, bool) {
	for _, s := range spans {
		if s.Name == name {
			return s, true
		}
	}
	return tracetest.SpanStub{}, false
}

// ServerSpan waits for the server span named name and checks that it is
// one and continues the client's trace (traceID) under the client's span
// (spanID); it returns that span and the spans ended by then.
func ServerSpan(t *testing.T, exp *tracetest.InMemoryExporter, name, traceID, spanID string) (tracetest.SpanStub, tracetest.SpanStubs) {
	t.Helper()
	var server tracetest.SpanStub
	require.Eventually(t, func() bool {
		var ok bool
		server, ok = SpanNamed(exp.GetSpans(), name)
		return ok
	}, Timeout, 5*time.Millisecond, "the server span ends")
	spans := exp.GetSpans()
	assert.Equal(t, trace.SpanKindServer, server.SpanKind)
	assert.Equal(t, traceID, server.SpanContext.TraceID().String(), "the client's trace goes on")
	assert.Equal(t, spanID, server.Parent.SpanID().String())
	return server, spans
}

// Upstream is an upstream server that keeps the traceparent header of
// each request it gets.
type Upstream struct {
	// URL is where it serves.
	URL   string
	mu    sync.Mutex
	got   []string
	route map[string]string
}

// TraceUpstream serves h at a URL of its own for the test, keeping each
// request's traceparent, in order and by route(r) (if route is not nil).
func TraceUpstream(t *testing.T, h http.Handler, route func(*http.Request) string) *Upstream {
	u := &Upstream{route: map[string]string{}}
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.got = append(u.got, r.Header.Get("traceparent"))
		if route != nil {
			u.route[route(r)] = r.Header.Get("traceparent")
		}
		u.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	u.URL = s.URL
	return u
}

// Traceparent is the traceparent of the last request on route.
func (u *Upstream) Traceparent(route string) string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.route[route]
}

// Traceparents are the traceparents of the requests so far, in order.
func (u *Upstream) Traceparents() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.got)
}
