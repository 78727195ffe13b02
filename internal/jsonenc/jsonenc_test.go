package jsonenc_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/internal/jsonenc"
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
	long := strings.Repeat("lorem ipsum dolor sit amet, ", 4)
	for name, s := range cases {
		cases["long, "+name] = long + s + long
	}
	for name, s := range cases {
		t.Run(name, func(t *testing.T) {
			require.Equal(t, string(stdlib(t, s)), string(jsonenc.AppendString(nil, s)))
		})
	}
}

// TestPlain: a control character, a quote, a backslash, U+2028, U+2029 or
// invalid UTF-8 anywhere in a string (either side of each 8-byte word)
// makes it not plain; any other byte leaves it plain.
func TestPlain(t *testing.T) {
	base := "abcdefghijklmnopqrstuvwx"
	for c := range 0x80 {
		for _, at := range []int{0, 3, 7, 8, 15, 16, 23} {
			b := []byte(base)
			b[at] = byte(c)
			want := c >= 0x20 && c != '"' && c != '\\'
			require.Equal(t, want, jsonenc.Plain(b), "byte %#x at %d", c, at)
		}
	}
	for _, s := range []string{"é 世界 🎉 °C", "\u00a0"} {
		require.True(t, jsonenc.Plain([]byte(base+s+base)), s)
	}
	for _, s := range []string{"\u2028", "\u2029", "\xff", "\xc3", "\xe2\x80"} {
		require.False(t, jsonenc.Plain([]byte(base+s+base)), "%q", s)
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "x", "\"\\", "\u2028", "\xff", "é\n\t<>&"} {
		f.Add(s)
		f.Add(strings.Repeat("plain text of a long message ", 3) + s)
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

func BenchmarkAppendString2KB(b *testing.B) {
	buf := make([]byte, 0, 4096)
	s := strings.Repeat("lorem ipsum dolor sit amet, ", 73)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		buf = jsonenc.AppendString(buf[:0], s)
	}
}

// SplitArray finds the elements encoding/json finds in every array it
// reads, and an array it splits whose elements are each valid JSON is one
// encoding/json reads the same.
func FuzzSplitArray(f *testing.F) {
	for _, s := range []string{`[]`, ` [ 1 , "a\"]" , {"b":[2,{}]} , null ] `, `[1,]`, `[{]`, `[1 2]`, `["\\"]`, `[{"a":"\\\""}]`, `[]x`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var want []json.RawMessage
		wantErr := json.Unmarshal(data, &want)
		got, ok := jsonenc.SplitArray(data)
		if wantErr == nil && want != nil {
			if !ok || !reflect.DeepEqual(got, want) {
				t.Fatalf("%q: split %q (%v), encoding/json %q", data, got, ok, want)
			}
			return
		}
		if !ok {
			return
		}
		for _, e := range got {
			if !json.Valid(e) {
				return // the caller's decoder refuses it
			}
		}
		t.Fatalf("%q: split into valid elements %q, but encoding/json: %v", data, got, wantErr)
	})
}
