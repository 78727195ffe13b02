package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/aapagui/aapagui/internal/buildinfo"
)

// Tracing sets up OpenTelemetry tracing as the standard OTEL_* environment
// variables say (tracerFromEnv). It returns nil when they ask for none,
// and a function to call at exit that sends the spans still buffered.
func Tracing(log zerolog.Logger, service string) (trace.TracerProvider, func(), error) {
	tp, shutdown, err := tracerFromEnv(context.Background(), service)
	if err != nil {
		return nil, nil, err
	}
	if tp == nil {
		return nil, func() {}, nil
	}
	log.Info().Msg("tracing on: spans exported as the OTEL_* environment variables say")
	return tp, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := shutdown(ctx); err != nil {
			log.Warn().Err(err).Msg("sending the last spans")
		}
	}, nil
}

// ServeMetrics serves h as GET /metrics on a listener of its own at addr
// (--metrics-listen), without any key: it is meant for a port only the
// scraper reaches, and a listener on another address than loopback is
// warned of at start. It returns a function that stops it.
func ServeMetrics(log zerolog.Logger, addr string, h http.Handler) (func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error().Err(err).Msg("metrics listener")
		}
	}()
	log.Info().Str("metrics_listen", ln.Addr().String()).Msg("serving GET /metrics")
	if tcp, ok := ln.Addr().(*net.TCPAddr); !ok || !tcp.IP.IsLoopback() {
		log.Warn().Str("metrics_listen", ln.Addr().String()).Bool("metrics_keyless", true).
			Msg("--metrics-listen is not a loopback address: GET /metrics is served without a key to everyone who can reach it; listen on 127.0.0.1 or keep the port to the scraper's network")
	}
	return func() { _ = srv.Close() }, nil
}

// tracesEnabled reports whether the environment asks for traces: OTEL_TRACES_EXPORTER
// names an exporter other than "none", or (it being unset) an OTLP
// endpoint is set; never when OTEL_SDK_DISABLED is true.
func tracesEnabled(getenv func(string) string) bool {
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

// tracerFromEnv returns a TracerProvider configured by the standard OTEL_*
// environment variables, or nil when they ask for no traces (see tracesEnabled).
// The exporter is OTLP over HTTP (OTEL_EXPORTER_OTLP_ENDPOINT, _HEADERS,
// _TIMEOUT, … and their _TRACES_ forms) or, with
// OTEL_TRACES_EXPORTER=console, JSON lines on standard error; the sampler
// (OTEL_TRACES_SAMPLER), batching (OTEL_BSP_*) and resource
// (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES) follow the environment too.
// service names the program when OTEL_SERVICE_NAME does not. Call the
// returned function at exit to send what is still buffered.
func tracerFromEnv(ctx context.Context, service string) (trace.TracerProvider, func(context.Context) error, error) {
	if !tracesEnabled(os.Getenv) {
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
