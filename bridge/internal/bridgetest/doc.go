// Package bridgetest holds what both bridges' tests share: the stores a
// test runs on and stores that fail on purpose, the checks of a refused
// turn's lease, of a client that leaves and of the log and metrics that
// must not carry an id or a key, span lookups, a log destination, and
// the measures of the start benchmarks. Each bridge's test supplies what
// differs (its server, its routes, its requests); only tests import this
// package.
package bridgetest
