package ident

import (
	"errors"
	"fmt"
	"unicode"
	"unicode/utf8"
)

// Check refuses an id a client gives (a user, a thread) whose text is not
// what it shows, so that two ids that read alike never name two things
// and one id never names what another does: one that is not UTF-8, or that
// holds a control character, a format character (Unicode's Cf: the
// zero-width characters, the bidi controls that reorder what follows, a
// soft hyphen), another character that renders as nothing (the Hangul
// fillers, the combining grapheme joiner), a line or paragraph separator,
// or U+FFFD. U+FFFD is what a JSON decoder makes of a lone surrogate
// escape (\ud800, \udfff) and of a byte that is not UTF-8, so that ids
// that differ in the body would be one id once decoded. The error names
// the character by its code point, never the id.
func Check(id string) error {
	if !utf8.ValidString(id) {
		return errors.New("is not UTF-8")
	}
	for _, r := range id {
		switch {
		case unicode.IsControl(r):
			return fmt.Errorf("holds a control character (%U)", r)
		case r == utf8.RuneError:
			return fmt.Errorf("holds %U, the replacement character, which a lone surrogate escape (\\ud800) or a byte that is not UTF-8 decodes to", r)
		case unicode.Is(unicode.Cf, r), unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r):
			return fmt.Errorf("holds an invisible or bidi format character (%U)", r)
		case unicode.In(r, unicode.Zl, unicode.Zp):
			return fmt.Errorf("holds a line or paragraph separator (%U)", r)
		}
	}
	return nil
}
