package agui

import (
	"bytes"
	"encoding/json"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/aapagui/aapagui/internal/jsonenc"
)

// A long conversation's RunAgentInput is mostly its messages' contents:
// long strings that encoding/json validates a byte at a time. This path
// finds them with the event scanner, validates each with scanString (as
// strictly as encoding/json, and eight plain bytes at a time), and hands
// encoding/json the body without them: the rest of the body is checked
// there as before, and each content is the body's own bytes.

// contentSpan is the content string of the messages[msg] of a body: the
// bytes from its opening quote to just past its closing one.
type contentSpan struct {
	msg        int
	start, end int
}

// decodeSkippingContents is decodeWire, reading each message's string
// content with scanString rather than encoding/json. ok is false when the
// body is not one it reads so (malformed, a name it cannot tell apart,
// a contents-free body): decodeWire then decides.
func decodeSkippingContents(data []byte) (*types.RunAgentInput, bool) {
	spans, n, ok := contentSpans(data)
	if !ok || len(spans) == 0 {
		return nil, false
	}
	size := len(data)
	for _, s := range spans {
		size -= s.end - s.start - len(`""`)
	}
	rest := make([]byte, 0, size)
	prev := 0
	for _, s := range spans {
		rest = append(append(rest, data[prev:s.start]...), `""`...)
		prev = s.end
	}
	rest = append(rest, data[prev:]...)
	in, err := decodeWire(rest)
	if err != nil || len(in.Messages) != n {
		return nil, false
	}
	for _, s := range spans {
		in.Messages[s.msg].Content = json.RawMessage(data[s.start:s.end:s.end])
	}
	return in, true
}

// contentSpans walks the top level of a RunAgentInput body and its
// messages array, and returns the span of each message's string content
// and how many messages there are. Values it does not read are skipped,
// not validated (encoding/json checks them). ok is false for a body it
// does not walk to its end, a content string that is not valid, or a name
// encoding/json could read differently: "messages" or "content" given
// twice, or spelled in another case (encoding/json matches names whatever
// their case), or any name written with escapes.
func contentSpans(d []byte) (spans []contentSpan, n int, ok bool) {
	seen := false
	_, ok = walkObject(d, jsonenc.SkipSpace(d, 0), func(key []byte, keyFlags uint8, i int) (int, bool) {
		if keyFlags != 0 {
			return 0, false // a name written with escapes
		}
		if !bytes.EqualFold(key, []byte("messages")) {
			return jsonenc.SkipValue(d, i)
		}
		if seen || string(key) != "messages" || d[i] != '[' {
			return 0, false
		}
		seen = true
		var end int
		end, spans, n, ok = messageSpans(d, i)
		return end, ok
	})
	return spans, n, ok
}

// messageSpans walks the messages array that starts at d[i] (each element
// an object) and returns the index past it with the messages' content
// spans and their number.
func messageSpans(d []byte, i int) (end int, spans []contentSpan, n int, ok bool) {
	i = jsonenc.SkipSpace(d, i+1)
	if i < len(d) && d[i] == ']' {
		return i + 1, nil, 0, true
	}
	for {
		if i >= len(d) || d[i] != '{' {
			return 0, nil, 0, false
		}
		found := false
		i, ok = walkObject(d, i, func(key []byte, keyFlags uint8, j int) (int, bool) {
			if keyFlags != 0 {
				return 0, false
			}
			if !bytes.EqualFold(key, []byte("content")) {
				return jsonenc.SkipValue(d, j)
			}
			if found || string(key) != "content" {
				return 0, false
			}
			found = true
			if d[j] != '"' {
				return jsonenc.SkipValue(d, j)
			}
			close, _, ok := scanString(d, j+1)
			if ok {
				spans = append(spans, contentSpan{msg: n, start: j, end: close + 1})
			}
			return close + 1, ok
		})
		if !ok {
			return 0, nil, 0, false
		}
		n++
		i = jsonenc.SkipSpace(d, i)
		if i >= len(d) {
			return 0, nil, 0, false
		}
		switch d[i] {
		case ']':
			return i + 1, spans, n, true
		case ',':
			i = jsonenc.SkipSpace(d, i+1)
		default:
			return 0, nil, 0, false
		}
	}
}
