package otlptest

import (
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Span is one span received.
type Span struct {
	Service      string // the resource's service.name
	Name         string
	TraceID      string // hex
	SpanID       string // hex
	ParentSpanID string // hex, "" for a root span
}

// Collector receives OTLP/HTTP exports (protobuf) on POST /v1/traces.
type Collector struct {
	URL string // the base URL: OTEL_EXPORTER_OTLP_ENDPOINT
	mu  sync.Mutex
	got []Span
}

// New starts a collector that stops with the test.
func New(t testing.TB) *Collector {
	c := &Collector{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if r.URL.Path != "/v1/traces" || err != nil {
			http.Error(w, "no", http.StatusNotFound)
			return
		}
		// An ExportTraceServiceRequest has TracesData's wire format.
		var data tracepb.TracesData
		if err := proto.Unmarshal(body, &data); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		c.mu.Lock()
		for _, rs := range data.GetResourceSpans() {
			service := ""
			for _, a := range rs.GetResource().GetAttributes() {
				if a.GetKey() == "service.name" {
					service = a.GetValue().GetStringValue()
				}
			}
			for _, ss := range rs.GetScopeSpans() {
				for _, s := range ss.GetSpans() {
					c.got = append(c.got, Span{Service: service, Name: s.GetName(), TraceID: hex.EncodeToString(s.GetTraceId()),
						SpanID: hex.EncodeToString(s.GetSpanId()), ParentSpanID: hex.EncodeToString(s.GetParentSpanId())})
				}
			}
		}
		c.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	t.Cleanup(srv.Close)
	c.URL = srv.URL
	return c
}

// Spans are the spans received so far.
func (c *Collector) Spans() []Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Span(nil), c.got...)
}

// Named returns the first span received with this name.
func (c *Collector) Named(name string) (Span, bool) {
	for _, s := range c.Spans() {
		if s.Name == name {
			return s, true
		}
	}
	return Span{}, false
}
