package translate

import (
	"strconv"
	"sync/atomic"

	"github.com/aapagui/aapagui/internal/ident"
)

// SequentialIDs returns a generator of prefix1, prefix2, … for tests and
// golden files. It is safe for concurrent use.
func SequentialIDs(prefix string) func() string {
	var n atomic.Int64
	return func() string { return prefix + strconv.FormatInt(n.Add(1), 10) }
}

func orRandom(f func() string, prefix string) func() string {
	if f != nil {
		return f
	}
	return func() string { return ident.Random(prefix) }
}

// reasoningMessageID is the AG-UI id of the n-th (from 0) reasoning message
// placed before the assistant message with the given id.
func reasoningMessageID(assistantID string, n int) string {
	if n == 0 {
		return assistantID + "-reasoning"
	}
	return assistantID + "-reasoning-" + strconv.Itoa(n+1)
}
