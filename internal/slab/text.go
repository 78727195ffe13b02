package slab

import "unsafe"

const (
	// TextFirst is the size in bytes of a stream's first text chunk: a
	// stream that stays idle after its first few deltas holds a few bytes
	// of text, not TextMax.
	TextFirst = 64
	// TextMax is the size a stream's text chunks double to.
	TextMax = 4 << 10
	// TextAlone is the longest string copied into a chunk; a longer one is
	// allocated alone, so that a large delta neither wastes the rest of a
	// chunk nor keeps one alive.
	TextAlone = 512
)

// Text makes the short strings of one stream (the texts of its deltas) a
// chunk of bytes at a time: a long stream then costs one allocation per
// chunk instead of one per delta. Each string is copied into the free end
// of the current chunk, which is never written again where a string lies,
// so every string stays immutable; a kept string keeps its chunk (at most
// TextMax bytes) alive. Chunks start at TextFirst bytes and double up to
// TextMax. The zero value is ready to use; a Text is not safe for
// concurrent use.
type Text struct {
	buf []byte // the current chunk: its length is what strings hold
}

// String returns a string holding a copy of b.
func (t *Text) String(b []byte) string {
	n := len(b)
	switch {
	case n == 0:
		return ""
	case n > TextAlone:
		return string(b)
	case cap(t.buf)-len(t.buf) < n:
		size := TextFirst
		if t.buf != nil {
			size = min(2*cap(t.buf), TextMax)
		}
		t.buf = make([]byte, 0, max(size, n))
	}
	start := len(t.buf)
	t.buf = append(t.buf, b...)
	return unsafe.String(&t.buf[start], n)
}
