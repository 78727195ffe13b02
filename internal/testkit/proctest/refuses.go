package proctest

import (
	"testing"
	"time"
)

// Refuses calls run (a program's run function, in the test's own process)
// with args after a loopback listen address, a memory store and an error
// log level, and returns its error: the program must stop at start-up
// rather than serve.
func Refuses(t testing.TB, run func(args []string) error, args ...string) string {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		done <- run(append([]string{"--listen", "127.0.0.1:0", "--store", "memory:", "--log-level", "error"}, args...))
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("the program must refuse to start")
		}
		return err.Error()
	case <-time.After(5 * time.Second):
		t.Fatalf("the program started serving with %q instead of refusing", args)
		return ""
	}
}
