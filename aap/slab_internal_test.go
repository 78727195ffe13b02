package aap

import (
	"testing"

	"github.com/aapagui/aapagui/internal/slab"
)

// ReadEvents' first slab of deltas is small, later ones full size.
func TestSlabsStartSmall(t *testing.T) {
	var texts []TextDelta
	for i := range slab.FirstSize + 1 {
		e := slabEvent(&texts, TextDelta{Delta: "x"})
		if e.Delta != "x" {
			t.Fatalf("event %d holds %q", i, e.Delta)
		}
		want := slab.FirstSize - 1 - i
		if i == slab.FirstSize {
			want = slab.Size - 1
		}
		if len(texts) != want {
			t.Fatalf("after %d events the slab has %d left, want %d", i+1, len(texts), want)
		}
	}
}
