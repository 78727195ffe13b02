package translate

import (
	"strings"

	"github.com/aapagui/aapagui/internal/ident"
	"github.com/aapagui/aapagui/internal/textparts"
)

// A TextSpill holds the start of a long text apart as it streams: part i
// of the text named ref (internal/textparts), written before the call
// returns. The bridges give their store's (HistoryStore.AddHistoryPart,
// ThreadStore.AddRecordPart), for the session or the thread the message
// will be stored in, so that a message never costs more memory than a
// part or two, however long it grows. A text whose parts are held apart
// gives, in the messages the translator returns, the marker of its parts
// and the rest, which the store gives back whole on reading; an error
// leaves the rest of the text in memory. A caller that needs the text
// itself (a mode that sends messages whole, a snapshot of the
// conversation) gives none.
type TextSpill func(ref string, i int, part []byte) error

// Bounds of a streamedText's chunks.
const (
	// textChunkFirst is the size of a message's first chunk: most
	// messages are short, and an open stream that waits for its next
	// token holds its message's chunk (a long one doubles its way up in
	// a few steps).
	textChunkFirst = 64
	// textChunkMax is the size the chunks double to.
	textChunkMax = 64 << 10
	// textAlone is the length from which a delta is kept as the string
	// it came in, not copied into a chunk (a decoder allocates a long
	// delta alone: internal/slab).
	textAlone = 1 << 10
)

// streamedText is the text of a message the stream is still building,
// delta after delta. What it holds is never copied as it grows: short
// deltas are copied once, into chunks that double up to textChunkMax (a
// growing buffer would copy the whole text again at each growth, a few
// times its size in all), and long ones are kept as they came. String
// joins them into one string, once: the text is then that string, which
// a later String returns as it is while nothing was added. The zero
// value is an empty text.
type streamedText struct {
	parts []textPart // what came before the chunk being filled
	chunk []byte     // the chunk being filled; its spare room takes the next short delta
	size  int        // the size of the last chunk made
	n     int        // the text's length
	// What is held apart (TextSpill): held is the length of what parts
	// and chunk hold, the rest (n-held) the first spilled parts of ref.
	spill   TextSpill
	ref     string
	spilled int
	held    int
}

// textPart is a string (a long delta, or the text as String joined it)
// or a filled chunk of short deltas.
type textPart struct {
	s string
	b []byte
}

// Len is the text's length in bytes.
func (t *streamedText) Len() int { return t.n }

// Add appends a delta.
func (t *streamedText) Add(delta string) {
	n := len(delta)
	switch {
	case n == 0:
		return
	case n >= textAlone:
		t.seal()
		t.parts = append(t.parts, textPart{s: delta})
	default:
		t.chunk = append(t.room(n), delta...)
	}
	t.grew(n)
}

// grew counts n bytes added to the text, and holds what it holds apart
// once that is a part.
func (t *streamedText) grew(n int) {
	t.n += n
	t.held += n
	if t.spill != nil && t.held >= textparts.PartSize {
		t.spillParts()
	}
}

// spillParts writes what the text holds as parts (TextSpill), but for a
// rest shorter than a part, which it goes on holding.
func (t *streamedText) spillParts() {
	b := t.joined()
	for len(b) >= textparts.PartSize {
		k := textparts.Cut(b, textparts.PartSize)
		if t.ref == "" {
			t.ref = ident.Random("text-")
		}
		if t.spill(t.ref, t.spilled, b[:k]) != nil {
			t.spill = nil // the store failed: the rest is held
			break
		}
		t.spilled++
		t.held -= k
		b = b[k:]
	}
	clear(t.parts)
	t.parts, t.chunk, t.size = t.parts[:0], nil, 0
	if len(b) > 0 {
		t.parts = append(t.parts, textPart{b: append([]byte(nil), b...)})
	}
}

// joined is what the text holds, in one buffer.
func (t *streamedText) joined() []byte {
	t.seal()
	b := make([]byte, 0, t.held)
	for _, p := range t.parts {
		if p.b != nil {
			b = append(b, p.b...)
		} else {
			b = append(b, p.s...)
		}
	}
	return b
}

// AddBytes appends a delta given as bytes, which it copies.
func (t *streamedText) AddBytes(delta []byte) {
	if n := len(delta); n >= textAlone {
		t.Add(string(delta))
	} else if n > 0 {
		t.chunk = append(t.room(n), delta...)
		t.grew(n)
	}
}

// room is the chunk being filled, with room for n more bytes: a new one
// when it had not (twice the last one's size, within bounds).
func (t *streamedText) room(n int) []byte {
	if cap(t.chunk)-len(t.chunk) < n {
		t.seal()
		t.size = min(max(2*t.size, textChunkFirst), textChunkMax)
		t.chunk = make([]byte, 0, max(t.size, n))
	}
	return t.chunk
}

// seal ends the chunk being filled where it is: what it holds becomes a
// part, its spare room the next chunk (the part's capacity is clipped, so
// that nothing is written over it).
func (t *streamedText) seal() {
	if len(t.chunk) == 0 {
		return
	}
	k := len(t.chunk)
	t.parts = append(t.parts, textPart{b: t.chunk[:k:k]})
	t.chunk = t.chunk[k:]
}

// String returns the text. The first call after an Add joins what came
// into one string, which the text then holds instead of its parts; a
// text that is one long delta is that delta. A text held apart in parts
// is their marker and what the text holds.
func (t *streamedText) String() string {
	if t.spilled > 0 {
		return textparts.Marker(t.ref, t.spilled) + t.heldString()
	}
	return t.heldString()
}

// heldString is what the text holds, as String gives it.
func (t *streamedText) heldString() string {
	if t.held == 0 {
		return ""
	}
	t.seal()
	if len(t.parts) == 1 && t.parts[0].b == nil {
		return t.parts[0].s
	}
	var b strings.Builder
	b.Grow(t.held)
	for _, p := range t.parts {
		if p.b != nil {
			b.Write(p.b)
		} else {
			b.WriteString(p.s)
		}
	}
	s := b.String()
	clear(t.parts)
	t.parts = append(t.parts[:0], textPart{s: s})
	// The last chunk's spare room goes too: it would keep the whole
	// chunk, whose bytes s now holds, alive (up to textChunkMax more for
	// a message a checkpoint read). The next delta starts a small one.
	t.chunk, t.size = nil, 0
	return s
}
