package agui

import (
	"strconv"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"

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

// A long stream of deltas costs a fraction of an allocation per delta (the
// events' slabs and the texts' chunks), and no later delta changes an
// earlier one's text.
func TestDecoderDeltasShareChunks(t *testing.T) {
	const n = 1000
	frames := make([][]byte, n)
	for i := range frames {
		frames[i] = []byte(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":" token` + strconv.Itoa(i) + `"}`)
	}
	var kept []string
	allocs := testing.AllocsPerRun(5, func() {
		var d Decoder
		kept = kept[:0]
		for _, f := range frames {
			ev, err := d.Decode(f)
			if err != nil {
				t.Fatal(err)
			}
			kept = append(kept, ev.(*events.TextMessageContentEvent).Delta)
		}
	})
	if per := allocs / n; per > 0.1 {
		t.Fatalf("%.3f allocations per delta, want at most 0.1", per)
	}
	for i, s := range kept {
		if want := " token" + strconv.Itoa(i); s != want {
			t.Fatalf("delta %d reads %q, want %q", i, s, want)
		}
	}
}
