// Package metrics holds the Prometheus collectors both bridges export on
// GET /metrics. Each Server has a registry of its own (never the global
// default), so that several servers in one process (tests, an embedding
// program) do not collide. Label values are bounded: route templates
// (/sessions/:id), methods, statuses, stream modes, event types, stable
// error codes and store operation names, never ids, keys or content.
package metrics
