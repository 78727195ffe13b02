package aap

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/aapagui/aapagui/internal/jsonenc"
)

// generalHistory decodes a GET history body with the general decoders
// only, as GetSessionHistoryResponse did before its one-pass form.
func generalHistory(data []byte) (GetSessionHistoryResponse, error) {
	var w struct {
		History json.RawMessage `json:"history"`
	}
	var out GetSessionHistoryResponse
	if err := decodeObject(data, &w); err != nil {
		return out, err
	}
	if w.History == nil {
		return out, fieldErr("history", "required")
	}
	var h struct {
		Compacted json.RawMessage `json:"compacted"`
		Full      json.RawMessage `json:"full"`
	}
	if err := decodeObject(w.History, &h); err != nil {
		return out, err
	}
	var err error
	if h.Compacted != nil {
		if out.History.Compacted, err = decodeHistoryGeneral(h.Compacted); err != nil {
			return out, err
		}
	}
	if h.Full != nil {
		out.History.Full, err = decodeHistoryGeneral(h.Full)
	}
	return out, err
}

// FuzzHistoryResponse holds the one-pass reading of a history body to the
// general decoders: both accept or refuse it, and read the same.
func FuzzHistoryResponse(f *testing.F) {
	for _, s := range []string{
		`{"history":{"full":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]}}`,
		`{"history":{"compacted":[{"role":"user","content":"hi"}]}}`,
		`{"history":{"full":[]},"history":{"compacted":[]}}`,
		`{"history":{"full":[{"role":"user","content":"hi"}]},"x":1}`,
		`{"history":{"full":[{"role":"user","content":"a"}],"compacted":[]}}`,
		`{"history":{"full":[{"role":"tool","toolCallId":"c","content":"x"}]}}`,
		`{"history":{"full":null}}`,
		`{"history":{"full":[1]}}`,
		`{"history":{}}`,
		`{"history":[]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got GetSessionHistoryResponse
		err := got.UnmarshalJSON(data)
		want, wantErr := generalHistory(data)
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("%q: one pass: %v, general: %v", data, err, wantErr)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: one pass %#v, general %#v", data, got, want)
		}
	})
}

// FuzzAppendHistoryResponse holds AppendHistoryResponse to what
// encoding/json (no HTML escaping) writes of the response.
func FuzzAppendHistoryResponse(f *testing.F) {
	f.Add("hello <there> & \"you\"", "c1", true, false)
	f.Add("\u2028\xff\x00", "", false, true)
	f.Fuzz(func(t *testing.T, text, id string, compacted, empty bool) {
		msgs := []Message{
			UserText(text), &AssistantMessage{Content: BlockContent(&TextBlock{Text: text}, &ToolUseBlock{ToolCallID: id, Name: "f", Input: json.RawMessage(`{"a":1}`)})},
			&ToolMessage{ToolCallID: id, Content: TextContent(text)}, &ToolPermissionMessage{ToolCallID: id, Granted: false, Reason: text},
		}
		h := SessionHistory{Full: msgs}
		if compacted {
			h.Compacted = msgs[:1]
		}
		if empty {
			h.Full = []Message{}
		}
		want, err := jsonenc.Marshal(GetSessionHistoryResponse{History: h})
		if err != nil {
			t.Skip(err)
		}
		got, err := AppendHistoryResponse(nil, &h)
		if err != nil || string(got) != string(jsonenc.UnescapeReplacement(want)) {
			t.Fatalf("AppendHistoryResponse: %v\n got %s\nwant %s", err, got, want)
		}
	})
}

// FuzzDecodeHistory holds DecodeHistory's one-pass split to encoding/json:
// the same messages, or the same error.
func FuzzDecodeHistory(f *testing.F) {
	for _, s := range []string{
		`[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"text","text":"a \"b\" \\"},{"type":"tool_use","toolCallId":"c","name":"f","input":{"x":[1,{"y":"]"}]}}]}]`,
		` [ {"role":"tool","toolCallId":"c","content":"x"} , {"role":"system","content":"s"} ] `,
		`[]`, `[1]`, `[{"role":"user","content":"a"}]]`, `[{"role":"user","content":"a"},]`,
		`[{"role":"user","content":"a"]}`, `[{"role":"tool_permission","toolCallId":"c","granted":true}]`,
		`[{"role":"user","content":"\ud800"}]`, "[{\"role\":\"user\",\"content\":\"\xff\"}]",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := DecodeHistory(data)
		want, wantErr := decodeHistoryGeneral(data)
		if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
			t.Fatalf("%q: one pass: %v, general: %v", data, err, wantErr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: one pass %#v, general %#v", data, got, want)
		}
	})
}
