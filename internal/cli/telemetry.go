package cli

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/trace"

	"github.com/aapagui/aapagui/internal/tracing"
)

// Tracing sets up OpenTelemetry tracing as the standard OTEL_* environment
// variables say (tracing.FromEnv). It returns nil when they ask for none,
// and a function to call at exit that sends the spans still buffered.
func Tracing(log zerolog.Logger, service string) (trace.TracerProvider, func(), error) {
	tp, shutdown, err := tracing.FromEnv(context.Background(), service)
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
// scraper reaches. It returns a function that stops it.
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
	return func() { _ = srv.Close() }, nil
}
