package refused

import (
	"errors"
	"net"
	"strings"
	"syscall"
	"testing"
)

// Connections are refused, and the port cannot be listened on while the
// test runs.
func TestURL(t *testing.T) {
	u := URL(t)
	addr := strings.TrimPrefix(u, "http://")
	_, err := net.Dial("tcp", addr)
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial %s: %v, want connection refused", addr, err)
	}
	if l, err := net.Listen("tcp", addr); err == nil {
		l.Close()
		t.Fatalf("listened on %s, which should stay taken", addr)
	}
}
