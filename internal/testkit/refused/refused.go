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
