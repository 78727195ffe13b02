package bridgetest

import (
	"context"
	"testing"
	"time"
)

// Timeout bounds each wait of the shared tests, so that a hang shows as a
// failure rather than a stuck test run.
const Timeout = 20 * time.Second

// Context is a context for one test's calls, ended after Timeout or when
// the test ends.
func Context(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	t.Cleanup(cancel)
	return ctx
}
