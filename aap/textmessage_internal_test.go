package aap

import (
	"reflect"
	"testing"
)

func TestDecodeTextMessage(t *testing.T) {
	for _, s := range []string{
		`{"role":"user","content":"hello there"}`,
		`{"role":"assistant","content":"Hi! ünïcödé 日本語"}`,
	} {
		got, ok := decodeTextMessage([]byte(s))
		want, err := decodeMessage([]byte(s))
		if !ok || err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: fast %#v (%v), general %#v (%v)", s, got, ok, want, err)
		}
	}
	for _, s := range []string{
		`{"role":"user","content":"an \"escape\""}`,
		`{"role":"tool","content":"x","toolCallId":"c"}`,
		`{"role":"system","content":"x"}`,
		`{"role":"user","content":[{"type":"text","text":"x"}]}`,
		`{"content":"x","role":"user"}`,
		`{"role":"user","content":"x"} `,
		`{"role":"user","content":"x","extra":1}`,
	} {
		if _, ok := decodeTextMessage([]byte(s)); ok {
			t.Errorf("%s: the fast path took it", s)
		}
	}
}

// FuzzDecodeTextMessage holds DecodeMessage's fast path to its general
// decoder: whatever message it takes, the general decoder reads the same.
func FuzzDecodeTextMessage(f *testing.F) {
	f.Add([]byte(`{"role":"user","content":"hello there"}`))
	f.Add([]byte(`{"role":"assistant","content":"x\u2028"}`))
	f.Add([]byte(`{"role":"assistant","content":"tab	inside, and a long enough text to matter"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, ok := decodeTextMessage(data)
		if !ok {
			return
		}
		want, err := decodeMessage(data)
		if err != nil {
			t.Fatalf("%q: the fast path took a message the general decoder refuses: %v", data, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: fast %#v, general %#v", data, got, want)
		}
	})
}
