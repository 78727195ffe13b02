package ident_test

import (
	"strings"
	"testing"

	"github.com/aapagui/aapagui/internal/ident"
)

// TestCheck: ids of letters in any script, digits, punctuation, emoji
// and spaces pass; one holding a character that shows as nothing or
// reorders the text (zero-width, bidi, soft hyphen, a Hangul filler), a
// control character, a separator, U+FFFD or bytes that are not UTF-8 is
// refused, the error naming the code point and never the id.
func TestCheck(t *testing.T) {
	for _, ok := range []string{"t1", "thread/a b", "3f1c6a0e-6b5e-4b6f-9a55-0a8f3c1e2d4b", "café", "日本語", "مرحبا", "user@example.com", "❤️"} {
		if err := ident.Check(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for id, want := range map[string]string{
		"al\u200bice":       "U+200B", // zero width space
		"al\u200cice":       "U+200C", // zero width non-joiner
		"al\u200dice":       "U+200D", // zero width joiner
		"al\u2060ice":       "U+2060", // word joiner
		"\ufeffalice":       "U+FEFF", // zero width no-break space (BOM)
		"al\u00adice":       "U+00AD", // soft hyphen
		"user\u202egnp.exe": "U+202E", // right-to-left override
		"a\u202ab":          "U+202A", // left-to-right embedding
		"a\u2066b\u2069":    "U+2066", // left-to-right isolate
		"a\u200fb":          "U+200F", // right-to-left mark
		"a\u061cb":          "U+061C", // Arabic letter mark
		"a\u3164b":          "U+3164", // Hangul filler
		"a\u034fb":          "U+034F", // combining grapheme joiner
		"a\u2028b":          "U+2028", // line separator
		"a\x01b":            "U+0001",
		"a\u0085b":          "U+0085", // next line, a C1 control
		"a\ufffdb":          "U+FFFD",
		"a\xffb":            "not UTF-8",
		"a\xed\xa0\x80b":    "not UTF-8", // a surrogate encoded in UTF-8
	} {
		err := ident.Check(id)
		if err == nil {
			t.Errorf("%q passes", id)
			continue
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %s", id, err, want)
		}
		if strings.Contains(err.Error(), "alice") || strings.Contains(err.Error(), "gnp") {
			t.Errorf("%q: the error shows the id: %v", id, err)
		}
	}
}
