package aap_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/aapagui/aapagui/aap"
)

// FuzzDecodeMessage checks that DecodeMessage never panics and that a decoded
// message encodes to a fixed point: decoding the encoding succeeds, keeps the
// role and encodes to the same bytes.
func FuzzDecodeMessage(f *testing.F) {
	for _, s := range []string{
		wireSystem, wireUser, wireAssistantText, wireAssistantBoth, wireAssistantTool,
		wireTool, wireToolQuoted, wireToolDenied,
		`{"role":"tool_permission","toolCallId":"call_002","granted":false,"reason":"User declined"}`,
		`{"role":"user","content":[{"type":"image","url":"data:image/png;base64,AAAA"},{"type":"image","url":"https://x/y"}]}`,
		`{"role":"assistant","content":[{"type":"tool_use","toolCallId":"c","name":"n","input":{"z":1e400,"a":9007199254740993,"s":"\u00e9<&>"}}]}`,
		`{"role":"assistant","content":[]}`,
		`{"role":"user","content":"a\u2028b\ud800"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := aap.DecodeMessage(data)
		if err != nil {
			return
		}
		first, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("decoded message %#v does not encode: %v", m, err)
		}
		back, err := aap.DecodeMessage(first)
		if err != nil {
			t.Fatalf("encoding %s does not decode: %v", first, err)
		}
		if back.Role() != m.Role() {
			t.Fatalf("role changed from %q to %q through %s", m.Role(), back.Role(), first)
		}
		second, err := json.Marshal(back)
		if err != nil {
			t.Fatalf("re-decoded message does not encode: %v", err)
		}
		if string(first) != string(second) {
			t.Fatalf("not a fixed point:\n first: %s\nsecond: %s", first, second)
		}
	})
}

// FuzzDecodeTurnRequest checks the same fixed point for a whole turn
// request, whose decoding also checks the shape of the turn.
func FuzzDecodeTurnRequest(f *testing.F) {
	for _, s := range []string{
		wireTurnDelta, wireTurnTool, wireTurnMessage, wireTurnNone, wireTurnAgent,
		`{"messages":[{"role":"tool","toolCallId":"a","content":[{"type":"text","text":"x"}]},{"role":"tool_permission","toolCallId":"b","granted":true}]}`,
		`{"agent":{"tools":[],"options":{"b":"1","a":"2"}},"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"t","title":"","description":"d","parameters":{"type":"object"}}]}`,
		`{"agent":null,"stream":"none","messages":[{"role":"user","content":[{"type":"image","url":"https://x"}]}],"tools":[]}`,
		`{"messages":[{"role":"user","content":"hi"}],"agui":{"state":{"b":1.50,"a":[null]},"context":[{"description":"d","value":"v"}],"forwardedProps":{"x":{}}}}`,
		`{"messages":[{"role":"user","content":"hi"}],"agui":{"state":null,"context":[]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var r aap.PostSessionTurnRequest
		if err := json.Unmarshal(data, &r); err != nil {
			return
		}
		first, err := json.Marshal(&r)
		if err != nil {
			t.Fatalf("decoded request %#v does not encode: %v", r, err)
		}
		var back aap.PostSessionTurnRequest
		if err := json.Unmarshal(first, &back); err != nil {
			t.Fatalf("encoding %s does not decode: %v", first, err)
		}
		if err := aap.CheckTurnMessages(back.Messages); err != nil {
			t.Fatalf("re-decoded turn has a bad shape: %v", err)
		}
		second, err := json.Marshal(&back)
		if err != nil {
			t.Fatalf("re-decoded request does not encode: %v", err)
		}
		if string(first) != string(second) {
			t.Fatalf("not a fixed point:\n first: %s\nsecond: %s", first, second)
		}
	})
}

// FuzzDecodeEvent checks that a decoded event's data encodes with
// AppendData, decodes again to the same kind of event and re-encodes to the
// same bytes.
func FuzzDecodeEvent(f *testing.F) {
	for _, e := range captureEvents {
		f.Add(e.event, []byte(e.data))
	}
	f.Add("tool_result", []byte(`{"toolCallId":"c","content":[{"type":"tool_use","toolCallId":"d","name":"n","input":{ "a" : "<>" }}]}`))
	f.Add("usage", []byte(`{"tokens": 1}`))
	f.Add("session_start", []byte(`{"sessionId": "sess_abc123"}`))
	f.Add("session_start", []byte(`{"sessionId":"\u00e9\"<>","x":[]}`))
	f.Add("agui", []byte(`{"type":"STATE_DELTA","delta":[{"op":"add","path":"/a","value":1.50}]}`))
	f.Add("agui", []byte(` {"type":"CUSTOM","name":"x",
 "value":"\u00e9"} `))
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		ev, err := aap.DecodeEvent(name, data)
		if err != nil {
			return
		}
		if ev.EventName() != aap.EventName(name) {
			t.Fatalf("event name %q decoded as %q", name, ev.EventName())
		}
		first, err := ev.AppendData(nil)
		if err != nil {
			if _, unknown := ev.(*aap.UnknownEvent); unknown {
				return // unknown events are kept as received, valid or not
			}
			t.Fatalf("decoded %#v does not encode: %v", ev, err)
		}
		back, err := aap.DecodeEvent(name, first)
		if err != nil {
			t.Fatalf("encoding %s does not decode: %v", first, err)
		}
		second, err := back.AppendData(nil)
		if err != nil {
			t.Fatalf("re-decoded event does not encode: %v", err)
		}
		if string(first) != string(second) {
			t.Fatalf("not a fixed point:\n first: %s\nsecond: %s", first, second)
		}
	})
}

// FuzzDecodeVersions checks the decoders of the version 1 and 2 bodies,
// and DecodeMeta of every version, for the same fixed point as
// FuzzDecodeTurnRequest: what decodes encodes, decodes again and encodes
// to the same bytes. The first byte chooses the type; the seeds are the
// bodies of the wire transcripts.
func FuzzDecodeVersions(f *testing.F) {
	news := []func() any{
		func() any { return new(aap.PutSessionRequest) },
		func() any { return new(aap.PutSessionResponse) },
		func() any { return new(aap.SessionTurnRequestV1) },
		func() any { return new(aap.SessionResponseV1) },
		func() any { return new(aap.SessionListResponseV1) },
		func() any { return new(aap.SessionListResponseV2) },
		func() any { return new(aap.MetaResponseV1) },
		func() any { return new(aap.ToolSpecV1) },
		func() any { return new(metaOfAnyVersion) },
		func() any { return new(aap.SessionInfo) },
	}
	for _, version := range []int{1, 2, 3} {
		arc, err := txtar.ParseFile(fmt.Sprintf("../testdata/wire/v%d.txtar", version))
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range arc.Files {
			if len(file.Data) > 0 && file.Data[0] == '{' {
				for i := range news {
					f.Add(append([]byte{byte(i)}, file.Data...))
				}
			}
		}
	}
	f.Add([]byte("\x07{\"name\":\"t\",\"description\":\"\",\"inputSchema\":{ \"a\" : 1e400 }}"))
	f.Add([]byte("\x09{\"sessionId\":\"s\",\"agent\":{\"name\":\"a\"},\"agui\":{\"state\":{\"b\":1.50},\"activities\":[{\"at\":1,\"id\":\"a1\",\"activityType\":\"t\",\"content\":{\"x\":[1]}}],\"metadata\":[{\"at\":0,\"metadata\":{\"k\":1.50},\"toolCalls\":{\"c\":{}}}]}}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		newValue := news[int(data[0])%len(news)]
		v := newValue()
		if err := json.Unmarshal(data[1:], v); err != nil {
			return
		}
		first, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("decoded %#v does not encode: %v", v, err)
		}
		back := newValue()
		if err := json.Unmarshal(first, back); err != nil {
			t.Fatalf("encoding %s does not decode: %v", first, err)
		}
		second, err := json.Marshal(back)
		if err != nil {
			t.Fatalf("re-decoded value does not encode: %v", err)
		}
		if string(first) != string(second) {
			t.Fatalf("not a fixed point:\n first: %s\nsecond: %s", first, second)
		}
	})
}

// metaOfAnyVersion decodes with aap.DecodeMeta and encodes in the shape
// of the version it names.
type metaOfAnyVersion struct{ m *aap.GetMetaResponse }

func (x *metaOfAnyVersion) UnmarshalJSON(data []byte) error {
	m, err := aap.DecodeMeta(data)
	x.m = m
	return err
}

func (x *metaOfAnyVersion) MarshalJSON() ([]byte, error) {
	if x.m.Version == 1 || x.m.Version == 2 {
		return json.Marshal(x.m.V1(x.m.Version))
	}
	return json.Marshal(x.m)
}
