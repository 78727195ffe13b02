package slab

import "testing"

// The first slab is small, later ones full size.
func TestNext(t *testing.T) {
	var deltas []int
	for i := range FirstSize + Size + 1 {
		e := Next(&deltas)
		if *e != 0 {
			t.Fatalf("element %d is %d, not new", i, *e)
		}
		*e = i + 1
		want := FirstSize - 1 - i
		switch {
		case i >= FirstSize+Size:
			want = Size - 1
		case i >= FirstSize:
			want = FirstSize + Size - 1 - i
		}
		if len(deltas) != want {
			t.Fatalf("after %d elements the slab has %d left, want %d", i+1, len(deltas), want)
		}
	}
}
