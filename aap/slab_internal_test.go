package aap

import (
	"bytes"
	"io"
	"strconv"
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

// A long stream of deltas read with ReadEvents costs a fraction of an
// allocation per delta: the events' slabs and the texts' chunks.
func TestReadEventsDeltaAllocations(t *testing.T) {
	const n = 1000
	var stream []byte
	for i := range n {
		stream = append(stream, "event: text_delta\ndata: {\"delta\":\" token"+strconv.Itoa(i)+"\"}\n\n"...)
	}
	var last string
	allocs := testing.AllocsPerRun(5, func() {
		for ev, err := range ReadEvents(bytes.NewReader(stream), 0) {
			if err != nil {
				t.Fatal(err)
			}
			last = ev.(*TextDelta).Delta
		}
	})
	if per := allocs / n; per > 0.1 {
		t.Fatalf("%.3f allocations per delta, want at most 0.1", per)
	}
	if want := " token" + strconv.Itoa(n-1); last != want {
		t.Fatalf("last delta %q, want %q", last, want)
	}
	// So does an EventReader's NextRaw, which leaves other events to its
	// caller: a delta comes decoded.
	allocs = testing.AllocsPerRun(5, func() {
		er := NewEventReader(bytes.NewReader(stream), 0)
		for {
			ev, _, _, err := er.NextRaw()
			if err == io.EOF {
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			last = ev.(*TextDelta).Delta
		}
	})
	if per := allocs / n; per > 0.1 {
		t.Fatalf("EventReader.NextRaw: %.3f allocations per delta, want at most 0.1", per)
	}
}
