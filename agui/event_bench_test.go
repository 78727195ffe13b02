package agui_test

import (
	"encoding/json"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"

	"github.com/aapagui/aapagui/agui"
)

// A typical streamed token and a typical tool-argument fragment.
var (
	codecBenchTextJSON = []byte(`{"type":"TEXT_MESSAGE_CONTENT","timestamp":1718000000000,"messageId":"msg_01J9Z3K4","delta":" the quick brown fox"}`)
	codecBenchArgsJSON = []byte(`{"type":"TOOL_CALL_ARGS","toolCallId":"call_9f8e7d","delta":"{\"location\": \"Paris, France\", \"unit\": \"c"}`)
	codecBenchSnapshot = []byte(`{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"u1","role":"user","content":"What is the weather in Paris?"},` +
		`{"id":"a1","role":"assistant","content":"Let me check.","toolCalls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},` +
		`{"id":"t1","role":"tool","content":"{\"temp\":21}","toolCallId":"c1"},{"id":"a2","role":"assistant","content":"It is 21°C in Paris."}]}`)
)

func BenchmarkDecodeTextMessageContent(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(codecBenchTextJSON)))
	for b.Loop() {
		if _, err := agui.DecodeEvent(codecBenchTextJSON); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeTextMessageContentEncodingJSON is the baseline the fast
// path replaces: encoding/json into the SDK struct (type already known).
func BenchmarkDecodeTextMessageContentEncodingJSON(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(codecBenchTextJSON)))
	for b.Loop() {
		var ev events.TextMessageContentEvent
		if err := json.Unmarshal(codecBenchTextJSON, &ev); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeToolCallArgs(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(codecBenchArgsJSON)))
	for b.Loop() {
		if _, err := agui.DecodeEvent(codecBenchArgsJSON); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeMessagesSnapshot measures the slow path: the type scan
// plus encoding/json.
func BenchmarkDecodeMessagesSnapshot(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(codecBenchSnapshot)))
	for b.Loop() {
		if _, err := agui.DecodeEvent(codecBenchSnapshot); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeMessagesSnapshotSDK is the SDK's EventFromJSON on the same
// input (it unmarshals twice).
func BenchmarkDecodeMessagesSnapshotSDK(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(codecBenchSnapshot)))
	for b.Loop() {
		if _, err := events.EventFromJSON(codecBenchSnapshot); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendTextMessageContent(b *testing.B) {
	ts := int64(1718000000000)
	ev := &events.TextMessageContentEvent{
		BaseEvent: &events.BaseEvent{EventType: events.EventTypeTextMessageContent, TimestampMs: &ts},
		MessageID: "msg_01J9Z3K4",
		Delta:     " the quick brown fox",
	}
	benchmarkAppend(b, ev)
}

func BenchmarkAppendToolCallArgs(b *testing.B) {
	ev := &events.ToolCallArgsEvent{
		BaseEvent:  &events.BaseEvent{EventType: events.EventTypeToolCallArgs},
		ToolCallID: "call_9f8e7d",
		Delta:      `{"location": "Paris, France", "unit": "c`,
	}
	benchmarkAppend(b, ev)
}

// BenchmarkAppendTextMessageContentEncoder is the baseline the fast path
// replaces: a json.Encoder with HTML escaping off.
func BenchmarkAppendTextMessageContentEncoder(b *testing.B) {
	ts := int64(1718000000000)
	ev := &events.TextMessageContentEvent{
		BaseEvent: &events.BaseEvent{EventType: events.EventTypeTextMessageContent, TimestampMs: &ts},
		MessageID: "msg_01J9Z3K4",
		Delta:     " the quick brown fox",
	}
	b.ReportAllocs()
	w := &codecDiscard{}
	for b.Loop() {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(ev); err != nil {
			b.Fatal(err)
		}
	}
}

type codecDiscard struct{}

func (*codecDiscard) Write(p []byte) (int, error) { return len(p), nil }

func benchmarkAppend(b *testing.B, ev events.Event) {
	b.ReportAllocs()
	dst := make([]byte, 0, 1024)
	for b.Loop() {
		var err error
		dst, err = agui.AppendEvent(dst[:0], ev)
		if err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(dst)))
}

// BenchmarkDecoderTextMessageContent decodes a stream's run of text deltas
// with one Decoder, as aap2agui does: ids shared, events and texts in
// slabs and chunks.
func BenchmarkDecoderTextMessageContent(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(codecBenchTextJSON)))
	var d agui.Decoder
	for b.Loop() {
		if _, err := d.Decode(codecBenchTextJSON); err != nil {
			b.Fatal(err)
		}
	}
}
