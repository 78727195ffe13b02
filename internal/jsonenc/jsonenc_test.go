package jsonenc_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/aapagui/aapagui/internal/jsonenc"
	"github.com/stretchr/testify/require"
)

// stdlib is encoding/json's encoding of s, its \ufffd escapes (Go 1.26's
// for invalid UTF-8) written as the character (Go 1.27's).
func stdlib(t testing.TB, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(s))
	return jsonenc.UnescapeReplacement(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	cases := map[string]string{
		"empty":          "",
		"plain":          "hello there",
		"quotes":         `say "hi" \ bye`,
		"controls":       "a\x00b\x01c\x1f\b\f\n\r\t",
		"html":           "<a href='x'>&</a>",
		"unicode":        "héllo 世界 🎉",
		"line separator": "a\u2028b\u2029c",
		"invalid utf8":   "a\xffb\xc3",
		"del":            "\x7f",
	}
	for name, s := range cases {
		t.Run(name, func(t *testing.T) {
			require.Equal(t, string(stdlib(t, s)), string(jsonenc.AppendString(nil, s)))
		})
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "x", "\"\\", "\u2028", "\xff", "é\n\t<>&"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := jsonenc.AppendString([]byte("prefix"), s)
		require.Equal(t, "prefix"+string(stdlib(t, s)), string(got))
	})
}

func BenchmarkAppendString(b *testing.B) {
	buf := make([]byte, 0, 256)
	s := "The weather in Tokyo is 18°C, partly cloudy."
	b.ReportAllocs()
	for b.Loop() {
		buf = jsonenc.AppendString(buf[:0], s)
	}
}
