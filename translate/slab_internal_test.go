package translate

import (
	"testing"

	"github.com/aapagui/aapagui/internal/slab"
)

// A stream's first slab is small, later ones full size: an open stream
// that went idle after its first event holds slab.FirstSize events, not
// slab.Size.
func TestSlabsStartSmall(t *testing.T) {
	var d Decoder
	ev := []byte(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"hi"}`)
	for i := range slab.FirstSize + 1 {
		if _, err := d.Decode(ev); err != nil {
			t.Fatal(err)
		}
		want := slab.FirstSize - 1 - i
		if i == slab.FirstSize {
			want = slab.Size - 1
		}
		if len(d.text) != want {
			t.Fatalf("after %d events the slab has %d left, want %d", i+1, len(d.text), want)
		}
	}
}
