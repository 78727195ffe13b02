package agui

import (
	"encoding/binary"
	"reflect"
	"strings"
	"testing"
)

// plainWord says of eight bytes what strPlain says of each: every byte
// value, at every place of the word, among plain ASCII.
func TestPlainWord(t *testing.T) {
	for pos := range 8 {
		for c := range 256 {
			var b [8]byte
			for k := range b {
				b[k] = 'a'
			}
			b[pos] = byte(c)
			if got, want := plainWord(binary.LittleEndian.Uint64(b[:])), strPlain[c]; got != want {
				t.Fatalf("byte %#x at %d: plainWord %v, strPlain %v", c, pos, got, want)
			}
		}
	}
}

// FuzzDecodeSkippingContents checks the path that reads contents with the
// scanner against decodeWire, which reads the whole body with
// encoding/json: wherever it takes a body, decodeWire takes it too and
// reads the same.
func FuzzDecodeSkippingContents(f *testing.F) {
	for _, s := range []string{
		`{"threadId":"t","runId":"r","messages":[{"id":"u1","role":"user","content":"hi"}]}`,
		`{"messages":[{"id":"a","content":"x\"y\\u00e9\n"},{"id":"b","content":null},{"id":"c"},{"id":"d","content":[{"type":"text","text":"t"}]}]}`,
		`{"messages":[{"id":"a","content":"x","Content":"y"}]}`,
		`{"messages":[{"id":"a","content":"x"}],"Messages":[]}`,
		`{"messages":[{"id":"a","content":"x","content":"y"}]}`,
		`{"messages":[{"id":"a","content":"` + strings.Repeat("lorem ipsum ", 40) + `"}] , "state" : {"a":[1,"]"]}}`,
		"{\"messages\":[{\"id\":\"a\",\"content\":\"\xff\xfe bad utf-8\"}]}",
		"{\"messages\":[{\"id\":\"a\",\"content\":\"a\x01b\"}]}",
		`{"messages":[{"id":"a","content":"x"}]} trailing`,
		`{"messages":[{"id":"a","content":"x"},]}`,
		`{"messages":[{"id":"a","cont\u0065nt":"x"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, ok := decodeSkippingContents(data)
		if !ok {
			return
		}
		want, err := decodeWire(data)
		if err != nil {
			t.Fatalf("%q: read, but encoding/json refuses it: %v", data, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\n got %#v\nwant %#v", data, got, want)
		}
	})
}
