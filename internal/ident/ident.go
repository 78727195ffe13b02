package ident

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
)

// Random returns a new random identifier (128 bits, hex) with the given
// prefix. It is the default id generator.
func Random(prefix string) string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return prefix + hex.EncodeToString(b[:])
}

// ToolResultMessage is the AG-UI message id given to the result of a tool
// call, derived from its toolCallId so that every replica and every replay
// agrees on it.
func ToolResultMessage(toolCallID string) string { return "result-" + toolCallID }

const interruptPrefix = "perm-"

// Interrupt is the id of the interrupt that asks permission for a tool
// call. It is derived from the toolCallId, so a resume can be matched to its
// call without any stored state.
func Interrupt(toolCallID string) string { return interruptPrefix + toolCallID }

// ToolCallFromInterrupt reverses Interrupt: it reports the toolCallId an
// interrupt id was made from, and false for an id Interrupt did not make.
func ToolCallFromInterrupt(interruptID string) (string, bool) {
	id, ok := strings.CutPrefix(interruptID, interruptPrefix)
	return id, ok && id != ""
}
