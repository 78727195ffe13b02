package tracing

import (
	"context"
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/contrib/instrumentation/github.com/gin-gonic/gin/otelgin"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/aapagui/aapagui/store"
)

// Propagator reads and writes W3C trace context (traceparent, tracestate)
// and baggage: what a request brings is continued, and what the upstream
// gets joins the bridge's trace.
var Propagator propagation.TextMapPropagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// noMeter keeps the instrumentations from recording metrics of their own:
// the bridges' metrics are Prometheus'.
var noMeter = metricnoop.NewMeterProvider()

// Middleware starts a server span per request, named by method and route
// template ("POST /sessions/:id/turns"), continuing the trace the request's
// traceparent names.
func Middleware(service string, tp trace.TracerProvider) gin.HandlerFunc {
	return otelgin.Middleware(service, otelgin.WithTracerProvider(tp), otelgin.WithPropagators(Propagator),
		otelgin.WithMeterProvider(noMeter))
}

// Client returns a copy of c whose requests are client spans, children of
// the span in their context, and carry its traceparent. The span of a
// streamed response lasts until its body is closed.
func Client(c *http.Client, tp trace.TracerProvider) *http.Client {
	out := *c
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	out.Transport = otelhttp.NewTransport(base, otelhttp.WithTracerProvider(tp), otelhttp.WithPropagators(Propagator),
		otelhttp.WithMeterProvider(noMeter),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return "upstream " + r.Method }))
	return &out
}

// StoreObserver returns a store.Observer making a span of each store
// operation run within a traced request ("store.GetSession"); operations
// outside one (lease heartbeats) make none.
func StoreObserver(tp trace.TracerProvider) store.Observer {
	tracer := tp.Tracer("github.com/aapagui/aapagui/store")
	return func(ctx context.Context, op string) (context.Context, func(error)) {
		if !trace.SpanContextFromContext(ctx).IsValid() {
			return ctx, noEnd
		}
		ctx, span := tracer.Start(ctx, "store."+op, trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(attribute.String("db.operation.name", op)))
		return ctx, func(err error) {
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				span.RecordError(err)
				span.SetStatus(codes.Error, err.Error())
			}
			span.End()
		}
	}
}

func noEnd(error) {}

// AgentKey is the span attribute naming the agent a request is for.
const AgentKey = attribute.Key("aap.agent.name")

// Agent names the agent of the request whose span is in ctx (none: no
// span, nothing done).
func Agent(ctx context.Context, name string) {
	trace.SpanFromContext(ctx).SetAttributes(AgentKey.String(name))
}
