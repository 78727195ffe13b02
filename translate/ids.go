package translate

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"sync/atomic"
)

// RandomID returns a new random identifier (128 bits, hex) with the given
// prefix. It is the default id generator.
func RandomID(prefix string) string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return prefix + hex.EncodeToString(b[:])
}

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
	return func() string { return RandomID(prefix) }
}

// ToolResultMessageID is the AG-UI message id given to the result of a tool
// call, derived from its toolCallId so that every replica and every replay
// agrees on it.
func ToolResultMessageID(toolCallID string) string { return "result-" + toolCallID }

// ReasoningMessageID is the AG-UI id of the n-th (from 0) reasoning message
// placed before the assistant message with the given id.
func ReasoningMessageID(assistantID string, n int) string {
	if n == 0 {
		return assistantID + "-reasoning"
	}
	return assistantID + "-reasoning-" + strconv.Itoa(n+1)
}
