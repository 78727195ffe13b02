// Package otlptest is an OTLP/HTTP trace collector for tests: it records
// the spans a program exports to it.
package otlptest
