// Package tracing is the bridges' OpenTelemetry tracing: a server span
// per request (otelgin), a client span per upstream call that carries the
// W3C traceparent to the upstream (otelhttp), and a span per store
// operation made within a request. It is off unless the standard OTEL_*
// environment variables configure an exporter (FromEnv).
package tracing

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/contrib/instrumentation/github.com/gin-gonic/gin/otelgin"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/aapagui/aapagui/internal/buildinfo"
	"github.com/aapagui/aapagui/store"
)

// Propagator reads and writes W3C trace context (traceparent, tracestate)
// and baggage: what a request brings is continued, and what the upstream
// gets joins the bridge's trace.
var Propagator propagation.TextMapPropagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// Enabled reports whether the environment asks for traces: OTEL_TRACES_EXPORTER
// names an exporter other than "none", or (it being unset) an OTLP
// endpoint is set; never when OTEL_SDK_DISABLED is true.
func Enabled(getenv func(string) string) bool {
	if b, _ := strconv.ParseBool(getenv("OTEL_SDK_DISABLED")); b {
		return false
	}
	switch exp := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")); exp {
	case "":
		return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
	default:
		return exp != "none"
	}
}

// FromEnv returns a TracerProvider configured by the standard OTEL_*
// environment variables, or nil when they ask for no traces (see Enabled).
// The exporter is OTLP over HTTP (OTEL_EXPORTER_OTLP_ENDPOINT, _HEADERS,
// _TIMEOUT, … and their _TRACES_ forms) or, with
// OTEL_TRACES_EXPORTER=console, JSON lines on standard error; the sampler
// (OTEL_TRACES_SAMPLER), batching (OTEL_BSP_*) and resource
// (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES) follow the environment too.
// service names the program when OTEL_SERVICE_NAME does not. Call the
// returned function at exit to send what is still buffered.
func FromEnv(ctx context.Context, service string) (trace.TracerProvider, func(context.Context) error, error) {
	if !Enabled(os.Getenv) {
		return nil, func(context.Context) error { return nil }, nil
	}
	var exp sdktrace.SpanExporter
	var err error
	switch name := strings.TrimSpace(os.Getenv("OTEL_TRACES_EXPORTER")); name {
	case "", "otlp":
		proto := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
		if proto == "" {
			proto = os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
		}
		if proto != "" && proto != "http/protobuf" {
			return nil, nil, fmt.Errorf("OTLP protocol %q is not supported: use http/protobuf (the OTLP HTTP port, 4318)", proto)
		}
		exp, err = otlptracehttp.New(ctx)
	case "console":
		exp, err = stdouttrace.New(stdouttrace.WithWriter(os.Stderr))
	default:
		return nil, nil, fmt.Errorf("OTEL_TRACES_EXPORTER=%q is not supported (want otlp, console or none)", name)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("trace exporter: %w", err)
	}
	res, err := resource.New(ctx,
		resource.WithTelemetrySDK(),
		resource.WithAttributes(semconv.ServiceName(service), semconv.ServiceVersion(buildinfo.Read().Version)),
		resource.WithFromEnv(), // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win
	)
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, nil, fmt.Errorf("trace resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return tp, tp.Shutdown, nil
}

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
