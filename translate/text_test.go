package translate

import (
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

// A streamed text reads what its deltas say, however long they are and
// whenever it is read: chunks filled, sealed by a long delta and
// continued, joined and added to again.
func TestStreamedText(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for run := range 50 {
		var st streamedText
		var want strings.Builder
		for i := range 400 {
			var n int
			switch rng.IntN(10) {
			case 0:
				n = textAlone + rng.IntN(3*textAlone)
			case 1:
				n = textAlone - 1
			case 2:
				n = 0
			default:
				n = 1 + rng.IntN(40)
			}
			delta := strings.Repeat(string(rune('a'+(run+i)%26)), n)
			st.Add(delta)
			want.WriteString(delta)
			if st.Len() != want.Len() {
				t.Fatalf("run %d, delta %d: Len %d, want %d", run, i, st.Len(), want.Len())
			}
			if rng.IntN(50) == 0 || i == 399 {
				if got := st.String(); got != want.String() {
					t.Fatalf("run %d, delta %d: the text reads %d bytes that differ from the %d said", run, i, len(got), want.Len())
				}
			}
		}
	}
}

// A text is joined once: String again, with nothing added, is the same
// string, made without allocating; a text of one long delta is that
// delta.
func TestStreamedTextJoinsOnce(t *testing.T) {
	var st streamedText
	for range 100 {
		st.Add("a few words ")
	}
	first := st.String()
	if allocs := testing.AllocsPerRun(10, func() {
		if st.String() != first {
			t.Fatal("the text changed")
		}
	}); allocs != 0 {
		t.Errorf("String again allocated %v times", allocs)
	}
	long := strings.Repeat("x", 2*textAlone)
	var one streamedText
	one.Add(long)
	if allocs := testing.AllocsPerRun(10, func() { _ = one.String() }); allocs != 0 {
		t.Errorf("a text of one long delta allocated %v times", allocs)
	}
	if one.String() != long {
		t.Error("a text of one long delta reads otherwise")
	}
}

// What a long text of short deltas allocates is about its size (its
// chunks) plus its string, not the few times its size that a growing
// buffer copies.
func TestStreamedTextAllocatesItsSize(t *testing.T) {
	const size = 8 << 20
	delta := strings.Repeat("w", 7)
	bytes := allocatedBytes(func() {
		var st streamedText
		for st.Len() < size {
			st.Add(delta)
		}
		_ = st.String()
	})
	if bytes > 2*size+size/4 {
		t.Errorf("a text of %d bytes allocated %d", size, bytes)
	}
}

// allocatedBytes is what f allocates (the process's, while it runs).
func allocatedBytes(f func()) uint64 {
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	f()
	runtime.ReadMemStats(&m1)
	return m1.TotalAlloc - m0.TotalAlloc
}

// A text read in the middle of its stream (a checkpoint's draft) is then
// held as the one string String joined, with nothing of the chunks it
// came in: a stream that waits after it holds its text once, not its text
// and the last chunk that text was copied from (up to 64 KiB more).
func TestStreamedTextLetsItsChunksGo(t *testing.T) {
	var st streamedText
	delta := strings.Repeat("w", 19)
	for st.Len() < 40<<10 {
		st.Add(delta)
	}
	s := st.String()
	if cap(st.chunk) != 0 {
		t.Fatalf("after String, the text keeps a chunk of %d bytes", cap(st.chunk))
	}
	st.Add(delta)
	if cap(st.chunk) > textChunkFirst {
		t.Fatalf("the next delta went into a chunk of %d bytes, want %d", cap(st.chunk), textChunkFirst)
	}
	if got := st.String(); got != s+delta {
		t.Fatalf("the text reads %d bytes, want %d", len(got), len(s)+len(delta))
	}
}
