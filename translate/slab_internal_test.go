package translate

import "testing"

// A stream's first slab is small, later ones full size: an open stream
// that went idle after its first event holds firstSlabSize events, not
// slabSize.
func TestSlabsStartSmall(t *testing.T) {
	var d Decoder
	ev := []byte(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"hi"}`)
	for i := range firstSlabSize + 1 {
		if _, err := d.Decode(ev); err != nil {
			t.Fatal(err)
		}
		want := firstSlabSize - 1 - i
		if i == firstSlabSize {
			want = slabSize - 1
		}
		if len(d.text) != want {
			t.Fatalf("after %d events the slab has %d left, want %d", i+1, len(d.text), want)
		}
	}

	var deltas []int
	for i := range firstSlabSize + slabSize + 1 {
		refill(&deltas)
		if i == 0 && len(deltas) != firstSlabSize || i == firstSlabSize && len(deltas) != slabSize || i == firstSlabSize+slabSize && len(deltas) != slabSize {
			t.Fatalf("refill %d: %d elements", i, len(deltas))
		}
		deltas = deltas[1:]
	}
}
