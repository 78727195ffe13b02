package jsonenc

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"unicode/utf8"
	"unsafe"
)

const hex = "0123456789abcdef"

// safe[b] reports whether the ASCII byte b can be copied into a JSON string
// unchanged (HTML escaping off).
var safe = func() (t [utf8.RuneSelf]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\'
	}
	return t
}()

// AppendString appends s as a quoted JSON string, escaped exactly as
// encoding/json (Go 1.27) does with SetEscapeHTML(false): each byte of
// invalid UTF-8 becomes U+FFFD, written as is (Go 1.26 wrote the escape
// \ufffd: the same JSON string), and U+2028 and U+2029 are escaped.
func AppendString(dst []byte, s string) []byte {
	if len(s) >= plainMin && PlainString(s) {
		dst = append(dst, '"')
		dst = append(dst, s...)
		return append(dst, '"')
	}
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if safe[b] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\uFFFD"...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// plainMin is the length from which AppendString first checks, with
// vectorised searches, whether a string needs no escape at all: a long
// message's text is copied whole, while a short delta is cheaper to walk.
const plainMin = 64

// Plain reports whether b can be written inside a JSON string as it is:
// valid UTF-8 holding no '"', no '\\', no control character and neither
// U+2028 nor U+2029 (which AppendString escapes).
func Plain(b []byte) bool {
	return bytes.IndexByte(b, '"') < 0 && bytes.IndexByte(b, '\\') < 0 && !hasControl(b) && utf8.Valid(b) &&
		!bytes.Contains(b, []byte("\u2028")) && !bytes.Contains(b, []byte("\u2029"))
}

// PlainString is Plain of s's bytes, without copying them.
func PlainString(s string) bool { return Plain(unsafe.Slice(unsafe.StringData(s), len(s))) }

// CutPlain reads the rest of a JSON string whose opening quote is read:
// its text, and what follows its closing quote. ok is false for a string
// that is not Plain (an escape, a control character, invalid UTF-8), which
// a decoder then reads in full: the text of a plain string is its bytes.
func CutPlain(b []byte) (s string, rest []byte, ok bool) {
	end := bytes.IndexByte(b, '"')
	if end < 0 || !Plain(b[:end]) {
		return "", nil, false
	}
	return string(b[:end]), b[end+1:], true
}

// hasControl reports whether b holds a byte below 0x20, eight bytes at a
// time.
func hasControl(b []byte) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for len(b) >= 8 {
		// A byte below 0x20 borrows into its high bit in x - 0x20 per
		// byte; ^x rules out the bytes whose high bit was set already.
		if x := binary.LittleEndian.Uint64(b); (x-0x20*ones)&^x&highs != 0 {
			return true
		}
		b = b[8:]
	}
	for _, c := range b {
		if c < 0x20 {
			return true
		}
	}
	return false
}

// UnescapeReplacement rewrites the escapes \ufffd of encoded JSON b as the
// character U+FFFD, leaving every other escape alone: what Go 1.26's
// encoding/json wrote for invalid UTF-8 as Go 1.27's writes it. Tests hold
// the encoders to encoding/json through it, whichever toolchain runs them.
func UnescapeReplacement(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' || i+1 == len(b) {
			out = append(out, b[i])
			continue
		}
		if b[i+1] == 'u' && i+6 <= len(b) && string(b[i+2:i+6]) == "fffd" {
			out = append(out, "\uFFFD"...)
			i += 5
			continue
		}
		out = append(out, b[i], b[i+1]) // another escape, kept whole
		i++
	}
	return out
}

// Marshal is json.Marshal without HTML escaping, which would rewrite "<",
// ">" and "&" in strings and the bytes of raw JSON kept inside (tool
// input, schemas).
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	if err := Encode(&b, v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// Encode writes v to w as json.Encoder does (a newline after it), without
// HTML escaping.
func Encode(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
