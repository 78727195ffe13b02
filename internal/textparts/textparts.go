// Package textparts is the form of a long text that a stream holds apart
// as it comes, in parts in the store, so that the text never has to be
// held whole to be stored: the message keeps a marker in the text's
// place, which the store replaces with the parts when the message is
// read.
//
// The marker names the parts (a random reference, never shown to a
// client: the store gives the text back in its place) and how many of
// them the text begins with; what follows the marker in the text is the
// rest. A marker is looked for only in a store's rows, as a JSON encoder
// writes it (its NUL bytes escaped), and replaced only by parts of the
// same session or thread: a text that merely looks like one, whose parts
// are not there, is left as it is.
package textparts

import (
	"bytes"
	"strconv"
	"unicode/utf8"

	"github.com/aapagui/aapagui/internal/jsonenc"
)

// PartSize is the size of a part: what a stream holds of a long text
// before it writes it out.
const PartSize = 1 << 20

// Marker is what a text holds in place of its first n parts, named ref.
func Marker(ref string, n int) string {
	return "\x00parts " + ref + " " + strconv.Itoa(n) + "\x00"
}

// escapedStart and escapedEnd are how a JSON encoder writes the marker's
// NUL bytes, around its words.
const (
	escapedStart = `\u0000parts `
	escapedEnd   = `\u0000`
)

// Cut is where a part of about max bytes of text ends: at the last rune
// that starts within max, or, when none does, at the first after it
// (max+4 at most), so that a part is never cut inside a rune (a part
// escaped on its own writes the same JSON as its text escaped whole).
// Bytes that are not UTF-8 are cut where they stand.
func Cut(text []byte, max int) int {
	if len(text) <= max {
		return len(text)
	}
	for i := max; i > max-utf8.UTFMax && i > 0; i-- {
		if utf8.RuneStart(text[i]) {
			return i
		}
	}
	for i := max + 1; i < len(text) && i <= max+utf8.UTFMax; i++ {
		if utf8.RuneStart(text[i]) {
			return i
		}
	}
	return min(max+utf8.UTFMax, len(text))
}

// Has reports whether row may hold a marker.
func Has(row []byte) bool { return bytes.Contains(row, []byte(escapedStart)) }

// Reader reads the first n parts of the text named ref, in order; fewer
// when the store has fewer.
type Reader func(ref string, n int) ([][]byte, error)

// Expand returns row (a message's JSON, as a store holds it) with each
// marker whose parts read gives replaced by those parts, written as the
// JSON string they are in; a marker with fewer parts than it names is
// left as it is. A row without a marker is returned as it is.
func Expand(row []byte, read Reader) ([]byte, error) {
	var out []byte
	rest := row
	for {
		i := bytes.Index(rest, []byte(escapedStart))
		if i < 0 {
			break
		}
		ref, n, size, ok := parse(rest[i+len(escapedStart):])
		end := i + len(escapedStart) + size
		if !ok {
			out = append(out, rest[:end]...)
			rest = rest[end:]
			continue
		}
		parts, err := read(ref, n)
		if err != nil {
			return nil, err
		}
		out = append(out, rest[:i]...)
		if len(parts) < n {
			out = append(out, rest[i:end]...)
		} else {
			for _, p := range parts {
				out = appendEscaped(out, p)
			}
		}
		rest = rest[end:]
	}
	if out == nil {
		return row, nil
	}
	return append(out, rest...), nil
}

// parse reads a marker's words after its start: "ref n" and the escaped
// NUL that ends it; size is how many bytes they took (what to skip when
// they are not a marker's).
func parse(b []byte) (ref string, n, size int, ok bool) {
	sp := bytes.IndexByte(b, ' ')
	if sp <= 0 || sp > 64 {
		return "", 0, 0, false
	}
	for _, c := range b[:sp] {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return "", 0, 0, false
		}
	}
	j := sp + 1
	for j < len(b) && j-sp <= 10 && b[j] >= '0' && b[j] <= '9' {
		j++
	}
	if j == sp+1 || !bytes.HasPrefix(b[j:], []byte(escapedEnd)) {
		return "", 0, 0, false
	}
	n, err := strconv.Atoi(string(b[sp+1 : j]))
	if err != nil || n <= 0 {
		return "", 0, 0, false
	}
	return string(b[:sp]), n, j + len(escapedEnd), true
}

// appendEscaped appends text as the inside of a JSON string.
func appendEscaped(dst, text []byte) []byte {
	at := len(dst)
	dst = jsonenc.AppendString(dst, string(text))
	// Drop the quotes AppendString put around it.
	copy(dst[at:], dst[at+1:len(dst)-1])
	return dst[:len(dst)-2]
}
