// Package clitest holds the tests that both bridges' programs share: what
// a user of either program sees of the flags and signals handled by the
// skeleton they share (cmd/internal/cli), run against the real program
// with proctest. Each program's test names what differs (its routes, its
// run function, its metric prefix) and calls the shared body; only tests
// import this package.
package clitest
