package agui

import (
	"encoding/binary"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"

	"github.com/aapagui/aapagui/internal/jsonenc"
)

// Bits for the top-level keys the scanner knows.
const (
	keyType uint8 = 1 << iota
	keyTimestamp
	keyMessageID
	keyToolCallID
	keyDelta
	keyOther
)

// Indexes of the string fields the fast path decodes.
const (
	slotMessageID = iota
	slotToolCallID
	slotDelta
	numSlots
)

// Flags returned by scanString.
const (
	strEscaped     uint8 = 1 << iota // contains backslash escapes
	strInvalidUTF8                   // contains bytes that are not UTF-8
)

// strSpan locates a JSON string's content (without quotes) in the input.
type strSpan struct {
	start, end int
	flags      uint8 // strEscaped, strInvalidUTF8
	set        bool
}

// eventScan reads the top level of an event object in one pass. It finds the
// "type" exactly as encoding/json would assign it to BaseEvent.EventType and,
// along the way, collects what the fast path needs. Values it does not
// decode are skipped without being validated: any input that is not decoded
// by the fast path is afterwards checked by encoding/json.
type eventScan struct {
	data []byte
	dec  *Decoder // nil: allocate each event alone

	typ      strSpan // the last string value of a "type" key
	typeNull bool    // a "type" key with a null value was seen
	typeBad  string  // JSON kind of a non-string, non-null "type" value

	keys  uint8 // key* bits of the keys seen
	fast  bool  // every key and value so far fits the fast path
	str   [numSlots]strSpan
	ts    int64
	tsSet bool
}

// scan walks the top-level object. It returns false when data is not a JSON
// object or is malformed at the top level.
func (s *eventScan) scan() bool {
	s.fast = true
	end, ok := walkObject(s.data, jsonenc.SkipSpace(s.data, 0), s.member)
	return ok && jsonenc.SkipSpace(s.data, end) == len(s.data)
}

// walkObject walks the object that starts at d[i], calling member for each
// member with its name (the raw bytes between the quotes, validated, with
// scanString's flags) and the index of its value; member returns the index
// just past the value. walkObject returns the index just past the object.
func walkObject(d []byte, i int, member func(key []byte, keyFlags uint8, valueAt int) (int, bool)) (int, bool) {
	if i >= len(d) || d[i] != '{' {
		return 0, false
	}
	i = jsonenc.SkipSpace(d, i+1)
	if i < len(d) && d[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(d) || d[i] != '"' {
			return 0, false
		}
		close, flags, ok := scanString(d, i+1)
		if !ok {
			return 0, false
		}
		key := d[i+1 : close]
		i = jsonenc.SkipSpace(d, close+1)
		if i >= len(d) || d[i] != ':' {
			return 0, false
		}
		i = jsonenc.SkipSpace(d, i+1)
		if i >= len(d) {
			return 0, false
		}
		if i, ok = member(key, flags, i); !ok {
			return 0, false
		}
		i = jsonenc.SkipSpace(d, i)
		if i >= len(d) {
			return 0, false
		}
		switch d[i] {
		case '}':
			return i + 1, true
		case ',':
			i = jsonenc.SkipSpace(d, i+1)
		default:
			return 0, false
		}
	}
}

// member records one top-level member whose value starts at d[i] and
// returns the index just past the value.
func (s *eventScan) member(key []byte, keyFlags uint8, i int) (int, bool) {
	d := s.data
	k, exact := classifyKey(key, keyFlags)
	s.keys |= k
	if !exact {
		s.fast = false
	}
	switch k {
	case keyType:
		switch d[i] {
		case '"':
			end, flags, ok := scanString(d, i+1)
			if !ok {
				return 0, false
			}
			s.typ = strSpan{start: i + 1, end: end, flags: flags, set: true}
			return end + 1, true
		case 'n':
			// null leaves a string field unchanged in encoding/json.
			s.typeNull = true
			return literal(d, i, "null")
		}
		s.typeBad = jsonKindAt(d[i])
	case keyTimestamp:
		if d[i] == 'n' {
			// null resets a pointer field in encoding/json.
			s.tsSet = false
			return literal(d, i, "null")
		}
		if v, end, ok := parseInt64(d, i); ok {
			s.ts, s.tsSet = v, true
			return end, true
		}
	case keyMessageID, keyToolCallID, keyDelta:
		slot := slotMessageID
		switch k {
		case keyToolCallID:
			slot = slotToolCallID
		case keyDelta:
			slot = slotDelta
		}
		switch d[i] {
		case '"':
			end, flags, ok := scanString(d, i+1)
			if !ok {
				return 0, false
			}
			s.str[slot] = strSpan{start: i + 1, end: end, flags: flags, set: true}
			return end + 1, true
		case 'n':
			return literal(d, i, "null")
		}
	}
	s.fast = false
	return jsonenc.SkipValue(d, i)
}

// classifyKey maps a raw key (the bytes between the quotes) to its key* bit.
// exact reports a byte-for-byte match with the field name; encoding/json
// also accepts case-insensitive matches and escaped spellings, which the
// fast path leaves to encoding/json.
func classifyKey(raw []byte, flags uint8) (k uint8, exact bool) {
	key := raw
	if flags != 0 {
		key = []byte(unquote(raw, flags))
	}
	switch string(key) {
	case "type":
		return keyType, flags == 0
	case "timestamp":
		return keyTimestamp, flags == 0
	case "messageId":
		return keyMessageID, flags == 0
	case "toolCallId":
		return keyToolCallID, flags == 0
	case "delta":
		return keyDelta, flags == 0
	}
	// encoding/json folds keys with bytes.EqualFold semantics; no
	// non-ASCII rune folds to a letter of "type", so ASCII folding is exact
	// here. (Other keys only matter to the slow path.)
	if len(key) == 4 && asciiEqualFold(key, "type") {
		return keyType, false
	}
	return keyOther, false
}

func asciiEqualFold(b []byte, s string) bool {
	for i := range len(b) {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// typeSoFar returns the "type" read so far, if it is a string, for error
// messages about malformed input.
func (s *eventScan) typeSoFar() events.EventType {
	if !s.typ.set || s.typeBad != "" {
		return ""
	}
	return events.EventType(s.stringAt(s.typ))
}

// eventType returns the decoded "type" or the error that explains why there
// is none. Errors about "type" are only given for valid JSON.
func (s *eventScan) eventType() (events.EventType, error) {
	var typ events.EventType
	if s.typ.set {
		typ = events.EventType(s.stringAt(s.typ))
	}
	var reason string
	switch {
	case s.typeBad != "":
		reason = "expected a string, got " + s.typeBad
	case s.typ.set && typ == "":
		reason = "must not be empty"
	case s.typ.set:
		return typ, nil
	case s.typeNull:
		reason = "expected a string, got null"
	default:
		reason = "missing"
	}
	if err := syntaxError(typ, s.data); err != nil {
		return "", err
	}
	if s.typeBad != "" {
		typ = "" // a later "type" would not make the event decodable
	}
	return "", &EventDecodeError{Type: typ, Field: "type", Reason: reason}
}

// unquote decodes the content of a valid JSON string that has the given
// scanString flags.
func unquote(raw []byte, flags uint8) string {
	var sb strings.Builder
	sb.Grow(strSpan{start: 0, end: len(raw), flags: flags, set: true}.maxLen())
	unquoteTo(&sb, raw)
	return sb.String()
}

// unquoteTo writes the decoded content of a JSON string (without its quotes)
// that scanString accepted. It mirrors encoding/json's unquoteBytes: invalid
// UTF-8 bytes and unpaired surrogate escapes become U+FFFD.
func unquoteTo(sb *strings.Builder, s []byte) {
	for i := 0; i < len(s); {
		if s[i] == '\\' {
			c := s[i+1]
			i += 2
			switch c {
			case 'b':
				sb.WriteByte('\b')
			case 'f':
				sb.WriteByte('\f')
			case 'n':
				sb.WriteByte('\n')
			case 'r':
				sb.WriteByte('\r')
			case 't':
				sb.WriteByte('\t')
			case 'u':
				r := getu4(s[i-2:])
				i += 4
				if utf16.IsSurrogate(r) {
					if dec := utf16.DecodeRune(r, getu4(s[i:])); dec != unicode.ReplacementChar {
						i += 6
						sb.WriteRune(dec)
						continue
					}
					r = unicode.ReplacementChar
				}
				sb.WriteRune(r)
			default: // '"', '\\', '/'
				sb.WriteByte(c)
			}
			continue
		}
		j := i
		for j < len(s) {
			c := s[j]
			if c == '\\' {
				break
			}
			if c < utf8.RuneSelf {
				j++
				continue
			}
			r, size := utf8.DecodeRune(s[j:])
			if r == utf8.RuneError && size == 1 {
				break
			}
			j += size
		}
		sb.Write(s[i:j])
		i = j
		if i < len(s) && s[i] != '\\' {
			sb.WriteRune(utf8.RuneError) // an invalid UTF-8 byte
			i++
		}
	}
}

// getu4 decodes \uXXXX from the beginning of s, returning the hex value,
// or -1 if s does not start with one.
func getu4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// strPlain marks the bytes that stand for themselves inside a JSON string.
var strPlain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// scanString validates the JSON string whose content starts at d[i] (just
// after the opening quote) as strictly as encoding/json does. It returns the
// index of the closing quote and whether the content has escapes or invalid
// UTF-8 (flags 0 means the bytes are the decoded value).
func scanString(d []byte, i int) (end int, flags uint8, ok bool) {
	for {
		for i+8 <= len(d) && plainWord(binary.LittleEndian.Uint64(d[i:])) {
			i += 8
		}
		for i < len(d) && strPlain[d[i]] {
			i++
		}
		if i == len(d) {
			return 0, 0, false
		}
		switch c := d[i]; {
		case c == '"':
			return i, flags, true
		case c == '\\':
			flags |= strEscaped
			if i+1 == len(d) {
				return 0, 0, false
			}
			switch d[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if getu4(d[i:]) < 0 {
					return 0, 0, false
				}
				i += 6
			default:
				return 0, 0, false
			}
		case c < 0x20:
			return 0, 0, false
		default:
			r, size := utf8.DecodeRune(d[i:])
			if r == utf8.RuneError && size == 1 {
				flags |= strInvalidUTF8
			}
			i += size
		}
	}
}

// plainWord reports whether the eight bytes of w all stand for themselves
// in a JSON string (strPlain): ASCII, none below 0x20, none a quote or a
// backslash. It tests them at once (the "has a zero byte" and "has a byte
// less than n" words of Hacker's Delight), which is what lets a long
// string be read several times faster than a byte at a time.
func plainWord(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	hasZero := func(x uint64) bool { return (x-ones)&^x&highs != 0 }
	return w&highs == 0 && // all ASCII
		(w-0x20*ones)&^w&highs == 0 && // none below 0x20
		!hasZero(w^('"'*ones)) && !hasZero(w^('\\'*ones))
}

// literal checks that d[i:] starts with lit and returns the index after it.
func literal(d []byte, i int, lit string) (int, bool) {
	if len(d)-i < len(lit) || string(d[i:i+len(lit)]) != lit {
		return 0, false
	}
	return i + len(lit), true
}

// parseInt64 parses a JSON number at d[i] that encoding/json would store in
// an int64: an integer (no fraction or exponent) within range. ok is false
// for anything else, which the caller leaves to encoding/json.
func parseInt64(d []byte, i int) (v int64, end int, ok bool) {
	neg := false
	if d[i] == '-' {
		neg = true
		i++
	}
	start := i
	var u uint64
	for i < len(d) && '0' <= d[i] && d[i] <= '9' {
		if u > (1<<63)/10 {
			return 0, 0, false
		}
		u = u*10 + uint64(d[i]-'0')
		i++
	}
	switch {
	case i == start, i-start > 1 && d[start] == '0':
		return 0, 0, false // not a JSON number
	case i < len(d) && (d[i] == '.' || d[i] == 'e' || d[i] == 'E'):
		return 0, 0, false // not an integer
	case neg && u > 1<<63, !neg && u > 1<<63-1:
		return 0, 0, false // out of range
	}
	if neg {
		return -int64(u), i, true
	}
	return int64(u), i, true
}
