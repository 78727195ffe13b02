package edge

import (
	"strconv"

	"github.com/aapagui/aapagui/bridge/internal/fault"
	"github.com/aapagui/aapagui/internal/jsonenc"
)

// MaxDepth is how deep the objects and arrays of a request body may nest:
// what encoding/json reads, past which it refuses a body as not JSON at
// all. ReadBody refuses a deeper body naming the limit, before any work.
const MaxDepth = 10000

// checkDepth refuses body when its objects and arrays nest deeper than
// MaxDepth (strings skipped whole; the body's syntax is left to its
// decoder).
func checkDepth(body []byte) error {
	depth := 0
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '"':
			if i = jsonenc.SkipString(body, i+1); i < 0 {
				return nil // not JSON: the decoder says so
			}
		case '{', '[':
			if depth++; depth > MaxDepth {
				return fault.Fail(fault.KindInvalid, "invalid_body",
					"the request body nests objects and arrays deeper than "+strconv.Itoa(MaxDepth)+" levels, the limit")
			}
		case '}', ']':
			depth--
		}
	}
	return nil
}
