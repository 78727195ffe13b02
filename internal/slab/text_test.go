package slab

import (
	"bytes"
	"fmt"
	"testing"
)

// TestTextStrings: every string reads what it was made from, after its
// source is overwritten and after many more strings (chunks filled,
// doubled and replaced); sizes cross TextFirst and TextAlone.
func TestTextStrings(t *testing.T) {
	var txt Text
	var got, want []string
	src := make([]byte, 0, 2*TextAlone)
	for i := range 3000 {
		n := i % 40
		switch i % 500 {
		case 7:
			n = TextFirst + 1
		case 8:
			n = TextAlone
		case 9:
			n = TextAlone + 1
		}
		src = src[:0]
		for j := range n {
			src = append(src, byte('a'+(i+j)%26))
		}
		want = append(want, string(src))
		got = append(got, txt.String(src))
		for j := range src {
			src[j] = '!' // the string must not share the caller's bytes
		}
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("string %d reads %q, want %q", i, got[i], want[i])
		}
	}
}

// TestTextChunks: the first chunk is small, chunks double up to TextMax,
// and a long string is allocated alone, leaving the chunk as it was.
func TestTextChunks(t *testing.T) {
	var txt Text
	txt.String([]byte("0"))
	if c := cap(txt.buf); c != TextFirst {
		t.Fatalf("first chunk: %d bytes, want %d", c, TextFirst)
	}
	for range TextFirst {
		txt.String([]byte("x"))
	}
	if c := cap(txt.buf); c != 2*TextFirst {
		t.Fatalf("second chunk: %d bytes, want %d", c, 2*TextFirst)
	}
	for range 4 * TextMax {
		txt.String([]byte("y"))
	}
	if c := cap(txt.buf); c != TextMax {
		t.Fatalf("chunks grew to %d bytes, want %d", c, TextMax)
	}
	before := len(txt.buf)
	long := bytes.Repeat([]byte("z"), TextAlone+1)
	if s := txt.String(long); s != string(long) || len(txt.buf) != before {
		t.Fatalf("a %d-byte string went into the chunk (%d → %d bytes used)", len(long), before, len(txt.buf))
	}
}

// TestTextAllocations: short strings cost an allocation per chunk, not one
// each.
func TestTextAllocations(t *testing.T) {
	deltas := make([][]byte, 1000)
	for i := range deltas {
		deltas[i] = []byte(fmt.Sprintf(" token%03d", i))
	}
	allocs := testing.AllocsPerRun(10, func() {
		var txt Text
		for _, d := range deltas {
			txt.String(d)
		}
	})
	// 9,000 bytes: chunks of 64, 128, … 4096 bytes, then one more.
	if allocs > 8 {
		t.Fatalf("1,000 short strings took %.0f allocations, want at most 8", allocs)
	}
}
