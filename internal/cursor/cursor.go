package cursor

import (
	"encoding/base64"
	"strconv"
	"strings"
)

// Encode encodes a listing position (the creation number of the last item
// of a page) as the opaque `next` value of GET /sessions.
func Encode(seq int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte("after:" + strconv.FormatInt(seq, 10)))
}

// Parse reads an Encode back; false for anything this server did not
// issue.
func Parse(s string) (int64, bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return 0, false
	}
	n, ok := strings.CutPrefix(string(b), "after:")
	if !ok {
		return 0, false
	}
	seq, err := strconv.ParseInt(n, 10, 64)
	return seq, err == nil && seq >= 0
}
