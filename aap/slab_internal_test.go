package aap

import "testing"

// ReadEvents' first slab of deltas is small, later ones full size.
func TestSlabsStartSmall(t *testing.T) {
	var slab []TextDelta
	for i := range firstSlabSize + 1 {
		e := slabEvent(&slab, TextDelta{Delta: "x"})
		if e.Delta != "x" {
			t.Fatalf("event %d holds %q", i, e.Delta)
		}
		want := firstSlabSize - 1 - i
		if i == firstSlabSize {
			want = slabSize - 1
		}
		if len(slab) != want {
			t.Fatalf("after %d events the slab has %d left, want %d", i+1, len(slab), want)
		}
	}
}
