package header_test

import (
	"net/http"
	"testing"

	"github.com/aapagui/aapagui/internal/header"
)

// A header a request can carry passes; a bad name or a value with a line
// break is refused, the value never shown.
func TestCheck(t *testing.T) {
	if err := header.Check(http.Header{"X-Key": {"secret-1"}}); err != nil {
		t.Fatalf("a good header refused: %v", err)
	}
	if err := header.Check(http.Header{"Bad Name": {"v"}}); err == nil {
		t.Fatal("a name with a space passed")
	}
	err := header.Check(http.Header{"X-Key": {"secret-2\r\nX-Evil: 1"}})
	if err == nil {
		t.Fatal("a value with CR LF passed")
	}
	if got := err.Error(); got != "the value of X-Key holds a control character (the value is not shown)" {
		t.Fatalf("error %q", got)
	}
}
