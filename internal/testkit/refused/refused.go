// Package refused gives tests the URL of a port where connections are
// refused, and stay refused for the whole test.
//
// Closing a listener frees its port at once, and another test running in
// parallel may listen there next: a "dead" upstream then answers. Here the
// port stays bound, with nothing listening on it, until the test ends.
package refused

import "testing"

// URL returns "http://127.0.0.1:<port>" for a port no one can listen on
// while t runs; connecting to it is refused.
func URL(t testing.TB) string {
	t.Helper()
	addr, release, err := reserve()
	if err != nil {
		t.Fatalf("refused: %v", err)
	}
	t.Cleanup(release)
	return "http://" + addr
}
