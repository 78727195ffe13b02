package txtartest_test

import (
	"testing"

	"github.com/aapagui/aapagui/internal/testkit/txtartest"
)

// Generated values get the same name wherever they appear again, numbered
// by first appearance, each kind on its own.
func TestNames(t *testing.T) {
	var n txtartest.Names
	got := n.Text(`{"id":"msg-0123456789abcdef0123456789abcdef","thread":"0f8fad5b-d9cb-469f-a165-70867728950e","timestamp":1795740957087}`) +
		n.Text(` again msg-0123456789abcdef0123456789abcdef, new ffffffffffffffffffffffffffffffff`)
	want := `{"id":"msg-<id-1>","thread":"<uuid-1>","timestamp":0} again msg-<id-1>, new <id-2>`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}
