package aap_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"unicode/utf8"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/internal/jsonenc"
)

// FuzzDecodeDeltaFast holds the decoding of text_delta and thinking_delta,
// which takes a hand-written path for the usual {"delta":"…"}, to
// encoding/json: for any data, DecodeEvent succeeds exactly when
// encoding/json decodes a JSON object with a string "delta", and yields
// the same string; so does ReadEvents for the frame in a stream.
func FuzzDecodeDeltaFast(f *testing.F) {
	for _, s := range []string{
		`{"delta":"Hello"}`, `{"delta":""}`, `{"delta":"h\u00e9llo"}`, `{"delta":"a\"b"}`,
		`{"delta":"é😀"}`, "{\"delta\":\"\xff\"}", "{\"delta\":\"a\tb\"}", `{"delta":"x","delta":"y"}`,
		`{"Delta":"x"}`, `{ "delta" : "x" }`, `{"delta":"x"} `, `{"delta":null}`, `{"delta":1}`,
		`{"delta":"x","extra":1}`, `{"delta":"x"`, `null`, `{"delta":"\u2028"}`, "{\"delta\":\"\u2028\"}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		var ref struct {
			Delta *string `json:"delta"`
		}
		refOK := bytes.HasPrefix(bytes.TrimLeft([]byte(data), " \t\r\n"), []byte("{")) &&
			json.Unmarshal([]byte(data), &ref) == nil && ref.Delta != nil
		for _, name := range []string{"text_delta", "thinking_delta"} {
			ev, err := aap.DecodeEvent(name, []byte(data))
			if (err == nil) != refOK {
				t.Fatalf("%s %q: DecodeEvent error %v, encoding/json decodes: %v", name, data, err, refOK)
			}
			if err != nil {
				continue
			}
			var got string
			switch e := ev.(type) {
			case *aap.TextDelta:
				got = e.Delta
			case *aap.ThinkingDelta:
				got = e.Delta
			default:
				t.Fatalf("%s decoded as %T", name, ev)
			}
			if got != *ref.Delta {
				t.Fatalf("%s %q: delta %q, encoding/json %q", name, data, got, *ref.Delta)
			}
		}
		if !refOK || bytes.ContainsAny([]byte(data), "\r\n") {
			return
		}
		// The same frame many times in one stream, between others: ReadEvents
		// (whose deltas share chunks of bytes) yields encoding/json's delta
		// every time, and no later delta changes an earlier one.
		var stream bytes.Buffer
		const frames = 200
		for i := range frames {
			name := "text_delta"
			if i%3 == 1 {
				name = "thinking_delta"
			}
			fmt.Fprintf(&stream, "event: %s\ndata: %s\n\nevent: text_delta\ndata: {\"delta\":\"#%d\"}\n\n", name, data, i)
		}
		var got []string
		for ev, err := range aap.ReadEvents(&stream, 0) {
			if err != nil {
				t.Fatalf("ReadEvents: %v", err)
			}
			switch e := ev.(type) {
			case *aap.TextDelta:
				got = append(got, e.Delta)
			case *aap.ThinkingDelta:
				got = append(got, e.Delta)
			}
		}
		if len(got) != 2*frames {
			t.Fatalf("ReadEvents yielded %d deltas, want %d", len(got), 2*frames)
		}
		for i := range frames {
			if got[2*i] != *ref.Delta || got[2*i+1] != fmt.Sprintf("#%d", i) {
				t.Fatalf("frame %d: deltas %q and %q, want %q and %q", i, got[2*i], got[2*i+1], *ref.Delta, fmt.Sprintf("#%d", i))
			}
		}
	})
}

// FuzzAppendDelta holds the encoding of text_delta and thinking_delta to
// encoding/json (HTML escaping off, as the AAP reference server writes).
func FuzzAppendDelta(f *testing.F) {
	for _, s := range []string{"Hello", "", "a\"b\\c", "\x00\x1f\t\n", "é😀", "\xff\xfe", "\u2028\u2029", "<&>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, delta string) {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(struct {
			Delta string `json:"delta"`
		}{delta}); err != nil {
			t.Fatal(err)
		}
		for _, ev := range []aap.Event{&aap.TextDelta{Delta: delta}, &aap.ThinkingDelta{Delta: delta}} {
			got, err := ev.AppendData(nil)
			same := err == nil && string(got) == string(bytes.TrimSuffix(want.Bytes(), []byte("\n")))
			if !same && err == nil && !utf8.ValidString(delta) {
				// Invalid UTF-8 becomes U+FFFD, which encoding/json writes
				// escaped (Go 1.26) or as is (1.27): the same JSON string.
				var a, b struct{ Delta string }
				same = json.Unmarshal(got, &a) == nil && json.Unmarshal(want.Bytes(), &b) == nil && a == b
			}
			if !same {
				t.Fatalf("%T %q: %s (%v), encoding/json %s", ev, delta, got, err, want.Bytes())
			}
			if _, err := aap.DecodeEvent(string(ev.EventName()), got); err != nil {
				t.Fatalf("%T %q: %s does not decode: %v", ev, delta, got, err)
			}
		}
	})
}

// FuzzAppendTextDeltaFrame holds the frame written from a plain delta's
// bytes, without an event, to AppendFrame's of its TextDelta.
func FuzzAppendTextDeltaFrame(f *testing.F) {
	for _, s := range []string{"Hello", "é😀 <&>", " ", "a\"b", "\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, delta string) {
		if !jsonenc.PlainString(delta) {
			return
		}
		want, err := aap.AppendFrame([]byte("id: x\n"), &aap.TextDelta{Delta: delta})
		if err != nil {
			t.Fatal(err)
		}
		if got := aap.AppendTextDeltaFrame([]byte("id: x\n"), []byte(delta)); string(got) != string(want) {
			t.Fatalf("%q: %q, AppendFrame %q", delta, got, want)
		}
	})
}
