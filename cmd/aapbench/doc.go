// Command aapbench measures the bridges against direct reads, on loopback
// in one process, and prints a table of ratios. See its internal/bench.
package main
