// Package ssestream is the SSE response writer of a turn's client: it
// coalesces frames and flushes when the upstream has nothing more
// buffered (FlushBeforeRead), sends keep-alive comments while the
// upstream is quiet, and bounds each write by a stall timeout, telling
// the turn of a client that stopped reading or left.
package ssestream
