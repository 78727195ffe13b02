// Package tracing is the bridges' OpenTelemetry tracing: a server span
// per request (otelgin), a client span per upstream call that carries the
// W3C traceparent to the upstream (otelhttp), and a span per store
// operation made within a request. The program sets up the provider (its
// exporter); with none, there are no spans.
package tracing
