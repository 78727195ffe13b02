// Package bridgetest holds what both bridges' tests share: the stores a
// test runs on, stores that fail on purpose and one that counts what it
// allocates (AllocStore), the check of a refused turn's lease, a client
// that leaves and what it is counted as, a turn held open and the metrics
// once it has ended, metric labels and logs free of ids, keys and users,
// a log buffer and its lines, user tokens, span lookups, an upstream that
// keeps the traceparents it gets and an AG-UI agent that keeps the inputs
// it is sent (Recorder), the bound on each wait (Timeout), and the
// measures of the start benchmarks. Each bridge's test supplies what
// differs (its server, its routes, its requests); only tests import this
// package.
package bridgetest
