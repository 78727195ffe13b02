// Package metricstest reads a server's /metrics in tests: it scrapes it
// over HTTP, parses the Prometheus text format with the official parser,
// and looks values up by name and labels.
package metricstest
