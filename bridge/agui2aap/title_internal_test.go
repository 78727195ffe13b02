package agui2aap

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/stretchr/testify/assert"
)

// wholeTitle is the title's rule read plainly: every text part joined by
// a space, the words of it one space apart, cut to titleRunes-1 runes and
// an ellipsis when longer than titleRunes. threadTitle must say the same
// while reading no more than the title takes.
func wholeTitle(parts []string) string {
	text := strings.Join(strings.Fields(strings.Join(parts, " ")), " ")
	if utf8.RuneCountInString(text) > titleRunes {
		r := []rune(text)
		text = strings.TrimSpace(string(r[:titleRunes-1])) + "…"
	}
	return text
}

func partsMessage(parts []string) types.Message {
	list := make([]any, 0, len(parts)+1)
	list = append(list, map[string]any{"type": "binary", "mimeType": "image/png", "data": "AA=="})
	for _, p := range parts {
		list = append(list, map[string]any{"type": "text", "text": p})
	}
	raw, _ := json.Marshal(list)
	return types.Message{ID: "u1", Role: types.RoleUser, Content: json.RawMessage(raw)}
}

func TestThreadTitleOfTextParts(t *testing.T) {
	tests := map[string][]string{
		"one word":                     {"hello"},
		"parts joined by a space":      {"hello", "there"},
		"spaces inside parts collapse": {"  hello \n\t", "\u00a0 there  "},
		"exactly the limit":            {strings.Repeat("x", titleRunes)},
		"one past the limit":           {strings.Repeat("x", titleRunes+1)},
		"the cut falls on a space":     {strings.Repeat("x", titleRunes-2), "y z"},
		"multibyte runes":              {strings.Repeat("é", 50), strings.Repeat("日本", 30)},
		"only spaces":                  {" ", "\n"},
		"many short parts":             strings.Split(strings.Repeat("sixteen chars ok ", 500), " "),
	}
	for name, parts := range tests {
		t.Run(name, func(t *testing.T) {
			got := threadTitle([]types.Message{{Role: types.RoleAssistant, Content: "not this"}, partsMessage(parts)})
			assert.Equal(t, wholeTitle(parts), got)
			assert.LessOrEqual(t, utf8.RuneCountInString(got), titleRunes)
		})
	}
	assert.Equal(t, "a plain string", threadTitle([]types.Message{{Role: types.RoleUser, Content: " a  plain\nstring "}}))
}

func FuzzThreadTitle(f *testing.F) {
	f.Add("hello there", " friend", 3)
	f.Add(strings.Repeat("ab ", 40), "é\u2003x", 2)
	f.Add("", "\n", 0)
	f.Fuzz(func(t *testing.T, a, b string, n int) {
		if !utf8.ValidString(a) || !utf8.ValidString(b) {
			return // the JSON of a request decodes to valid UTF-8
		}
		parts := []string{a}
		for range n % 50 {
			parts = append(parts, b)
		}
		assert.Equal(t, wholeTitle(parts), threadTitle([]types.Message{partsMessage(parts)}))
	})
}

// BenchmarkThreadTitle titles a thread whose first user message is
// parts text parts of 16 characters: ns/part falls as parts grow ×10 (the
// title reads its first runes; the JSON is decoded once), where it grew
// with the parts while the title was built by concatenation.
func BenchmarkThreadTitle(b *testing.B) {
	for _, n := range []int{2000, 20000} {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = fmt.Sprintf("part %010d ", i)
		}
		msgs := []types.Message{partsMessage(parts)}
		b.Run(fmt.Sprintf("parts=%d", n), func(b *testing.B) {
			for b.Loop() {
				threadTitle(msgs)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/part")
		})
	}
}
