package ident_test

import (
	"strings"
	"testing"

	"github.com/aapagui/aapagui/internal/ident"
)

func TestRandom(t *testing.T) {
	a, b := ident.Random("msg-"), ident.Random("msg-")
	if !strings.HasPrefix(a, "msg-") || len(a) != len("msg-")+32 || a == b {
		t.Fatalf("Random: %q, %q", a, b)
	}
}

func TestInterruptRoundTrip(t *testing.T) {
	id := ident.Interrupt("call_1")
	if got, ok := ident.ToolCallFromInterrupt(id); !ok || got != "call_1" {
		t.Fatalf("ToolCallFromInterrupt(%q) = %q, %v", id, got, ok)
	}
	for _, foreign := range []string{"", "call_1", ident.Interrupt("")} {
		if _, ok := ident.ToolCallFromInterrupt(foreign); ok {
			t.Errorf("%q is not an id Interrupt made", foreign)
		}
	}
}

func TestToolResultMessage(t *testing.T) {
	if got := ident.ToolResultMessage("call_1"); got != "result-call_1" {
		t.Fatalf("ToolResultMessage = %q", got)
	}
}
