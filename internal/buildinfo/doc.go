// Package buildinfo reads what the Go toolchain recorded about the running
// binary: the version --version prints and the metrics and traces carry.
package buildinfo
