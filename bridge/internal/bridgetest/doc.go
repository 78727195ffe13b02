// Package bridgetest holds what both bridges' tests share: the stores a
// test runs on and stores that fail on purpose, the check of a refused
// turn's lease, a client that leaves and what it is counted as, a turn
// held open and the metrics once it has ended, metric labels and logs
// free of ids and keys, span lookups and an upstream that keeps the
// traceparents it gets, and the measures of the start benchmarks. Each
// bridge's test supplies what differs (its server, its routes, its
// requests); only tests import this package.
package bridgetest
