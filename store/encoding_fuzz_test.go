package store

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/internal/jsonenc"
)

// decodeEntryGeneral is DecodeEntries' general decoder of one row.
func decodeEntryGeneral(row []byte) (Entry, error) {
	var e entryJSON
	if err := json.Unmarshal(row, &e); err != nil {
		return Entry{}, err
	}
	m, err := decodeMessage(e.Message)
	if err != nil {
		return Entry{}, err
	}
	return Entry{Message: m, AGUIID: e.ID, AGUI: e.AGUI}, nil
}

func TestDecodeTextEntry(t *testing.T) {
	rows, err := EncodeEntries([]Entry{
		{Message: aap.UserText("hello there"), AGUIID: "m1"},
		{Message: &aap.AssistantMessage{Content: aap.TextContent("Hi! ünïcödé, 日本語")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rows {
		got, ok := decodeTextEntry(row)
		want, err := decodeEntryGeneral(row)
		if !ok || err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: fast %#v (%v), general %#v (%v)", row, got, ok, want, err)
		}
	}
	for _, row := range []string{
		`{"id":"m","message":{"role":"user","content":"a \"quote\""}}`,
		`{"id":"m","message":{"role":"user","content":"line\nbreak"}}`,
		`{"id":"m","message":{"role":"user","content":"raw` + "\x01" + `control"}}`,
		`{"id":"m","message":{"role":"user","content":"bad ` + "\xff" + ` utf-8"}}`,
		`{"id":"m","message":{"role":"tool","content":"x"}}`,
		`{"id":"m","message":{"role":"user","content":[{"type":"text","text":"x"}]}}`,
		`{"id":"m","message":{"role":"user","content":"x"},"agui":{"a":1}}`,
		`{"id":"m", "message":{"role":"user","content":"x"}}`,
		`{"id":"m","message":{"role":"user","content":"x"}} `,
	} {
		if _, ok := decodeTextEntry([]byte(row)); ok {
			t.Errorf("%s: the fast path took it", row)
		}
	}
}

// FuzzDecodeTextEntry holds the fast path of DecodeEntries to the general
// decoder: whatever row it takes, the general decoder reads the same.
func FuzzDecodeTextEntry(f *testing.F) {
	f.Add([]byte(`{"id":"m1","message":{"role":"user","content":"hello there"}}`))
	f.Add([]byte(`{"id":"","message":{"role":"assistant","content":"Hi! \u2028 ü"}}`))
	f.Add([]byte(`{"id":"x","message":{"role":"user","content":"tab	and more text, long enough for words"}}`))
	f.Add([]byte(`{"id":"x","message":{"role":"assistant","content":"abc"},"agui":{}}`))
	f.Fuzz(func(t *testing.T, row []byte) {
		got, ok := decodeTextEntry(row)
		if !ok {
			return
		}
		want, err := decodeEntryGeneral(row)
		if err != nil {
			t.Fatalf("%q: the fast path took a row the general decoder refuses: %v", row, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: fast %#v, general %#v", row, got, want)
		}
	})
}

// BenchmarkDecodeEntries2MB reads a history of a thousand 2 KB text
// messages, as a turn of a long conversation does.
func BenchmarkDecodeEntries2MB(b *testing.B) {
	text := ""
	for len(text) < 2000 {
		text += "lorem ipsum dolor sit amet, "
	}
	entries := make([]Entry, 1000)
	for i := range entries {
		if i%2 == 0 {
			entries[i] = Entry{Message: aap.UserText(text), AGUIID: "m" + string(rune('a'+i%26))}
		} else {
			entries[i] = Entry{Message: &aap.AssistantMessage{Content: aap.TextContent(text)}}
		}
	}
	rows, err := EncodeEntries(entries)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(rows) * len(rows[0])))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeEntries(rows); err != nil {
			b.Fatal(err)
		}
	}
}

// An entry's row is written byte for byte as encoding/json (without HTML
// escaping) writes its entryJSON, whatever the message and its AG-UI
// part hold.
func FuzzEncodeEntry(f *testing.F) {
	f.Add([]byte(`{"id":"m1","message":{"role":"user","content":"hello <there> & \u2028 ü"}}`))
	f.Add([]byte(`{"id":"a","message":{"role":"assistant","content":[{"type":"text","text":"x"},{"type":"tool_use","toolCallId":"c1","name":"f","input":{ "a" : [1, 2] }}]},"agui":{ "encryptedValue" : "e" }}`))
	f.Add([]byte(`{"id":"t","message":{"role":"tool","toolCallId":"c1","content":[{"type":"text","text":"ok"}]}}`))
	f.Add([]byte(`{"id":"p","message":{"role":"tool_permission","toolCallId":"c1","granted":false,"reason":"no"}}`))
	f.Add([]byte(`{"id":"s","message":{"role":"system","content":"be brief"},"agui":[1,2 ,3]}`))
	f.Fuzz(func(t *testing.T, row []byte) {
		e, err := decodeEntryGeneral(row)
		if err != nil {
			return
		}
		msg, err := jsonenc.Marshal(e.Message)
		if err != nil {
			_, got := appendEntry(nil, e)
			require.Error(t, got, "a message encoding/json cannot write")
			return
		}
		want, wantErr := jsonenc.Marshal(entryJSON{ID: e.AGUIID, Message: msg, AGUI: e.AGUI})
		got, err := appendEntry(nil, e)
		if wantErr != nil {
			require.Error(t, err)
			return
		}
		require.NoError(t, err)
		require.Equal(t, string(want), string(got))
	})
}
