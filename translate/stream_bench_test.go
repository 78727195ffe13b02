package translate_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/internal/sse"
	"github.com/aapagui/aapagui/translate"
)

// The per-event hot path of aap2agui and agui2aap: one decoded event in,
// translated, encoded as an SSE frame into a reused buffer. One op is one
// text-delta event.

func BenchmarkAAPToAGUITextDelta(b *testing.B) {
	tr := translate.NewAAPToAGUI(translate.AAPToAGUIOptions{ThreadID: "t", RunID: "r", NewID: translate.SequentialIDs("m")})
	in := &aap.TextDelta{Delta: "word "}
	buf := make([]byte, 0, 4096)
	data := make([]byte, 0, 512)
	_, _ = tr.Feed(&aap.TurnStart{})
	b.ReportAllocs()
	for b.Loop() {
		out, _ := tr.Feed(in)
		for _, ev := range out {
			data, _ = agui.AppendEvent(data[:0], ev)
			buf = sse.AppendEvent(buf, "", data)
		}
		if len(buf) > 3072 {
			buf = buf[:0]
		}
	}
}

func BenchmarkAGUIToAAPTextDelta(b *testing.B) {
	for _, mode := range []aap.StreamMode{aap.StreamDelta, aap.StreamMessage} {
		b.Run(string(mode), func(b *testing.B) {
			tr := translate.NewAGUIToAAP(translate.AGUIToAAPOptions{Mode: mode})
			_, _ = tr.Feed(&events.RunStartedEvent{BaseEvent: &events.BaseEvent{EventType: events.EventTypeRunStarted}})
			_, _ = tr.Feed(&events.TextMessageStartEvent{BaseEvent: &events.BaseEvent{EventType: events.EventTypeTextMessageStart}, MessageID: "m1"})
			in := &events.TextMessageContentEvent{BaseEvent: &events.BaseEvent{EventType: events.EventTypeTextMessageContent}, MessageID: "m1", Delta: "word "}
			buf := make([]byte, 0, 4096)
			b.ReportAllocs()
			for b.Loop() {
				out, _ := tr.Feed(in)
				for _, ev := range out {
					buf, _ = aap.AppendFrame(buf, ev)
				}
				if len(buf) > 3072 {
					buf = buf[:0]
				}
			}
		})
	}
}

// BenchmarkAGUIToAAPTextDeltaFromWire includes reading the AG-UI SSE frame
// and decoding its JSON with a Decoder per stream of 1,000 frames: the
// whole per-event cost of aap2agui's proxy loop.
func BenchmarkAGUIToAAPTextDeltaFromWire(b *testing.B) {
	frame := []byte("data: {\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m1\",\"delta\":\"word \"}\n\n")
	const perChunk = 1000
	wire := bytes.Repeat(frame, perChunk)
	tr := translate.NewAGUIToAAP(translate.AGUIToAAPOptions{Mode: aap.StreamDelta})
	_, _ = tr.Feed(&events.TextMessageStartEvent{BaseEvent: &events.BaseEvent{EventType: events.EventTypeTextMessageStart}, MessageID: "m1"})
	buf := make([]byte, 0, 4096)
	b.ReportAllocs()
	b.SetBytes(int64(len(frame)))
	n := 0
	for n < b.N {
		var dec agui.Decoder
		for f, err := range sse.Read(bytes.NewReader(wire), sse.ReadOptions{}) {
			if err != nil {
				b.Fatal(err)
			}
			ev, err := dec.Decode(f.Data)
			if err != nil {
				b.Fatal(err)
			}
			out, _ := tr.Feed(ev)
			for _, o := range out {
				buf, _ = aap.AppendFrame(buf, o)
			}
			buf = buf[:0]
			n++
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/event")
}

// streamArgs2KB is about 2 KB of tool arguments, and its 50 deltas.
func streamArgs2KB() (string, []string) {
	var sb strings.Builder
	sb.WriteString(`{"items":[`)
	for i := 0; sb.Len() < 2000; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(`{"name":"item","note":"caf\u00e9 – 12345","n":9007199254740993}`)
	}
	sb.WriteString(`]}`)
	s := sb.String()
	deltas := make([]string, 50)
	step := (len(s) + 49) / 50
	for i := range deltas {
		lo, hi := min(i*step, len(s)), min((i+1)*step, len(s))
		deltas[i] = s[lo:hi]
	}
	return s, deltas
}

// BenchmarkAGUIToAAPToolCall2KB50Deltas: TOOL_CALL_START, 50 TOOL_CALL_ARGS
// and TOOL_CALL_END into one AAP tool_call frame. One op is one tool call.
func BenchmarkAGUIToAAPToolCall2KB50Deltas(b *testing.B) {
	_, deltas := streamArgs2KB()
	start := &events.ToolCallStartEvent{BaseEvent: &events.BaseEvent{EventType: events.EventTypeToolCallStart}, ToolCallID: "call_1", ToolCallName: "store"}
	args := make([]*events.ToolCallArgsEvent, len(deltas))
	for i, d := range deltas {
		args[i] = &events.ToolCallArgsEvent{BaseEvent: &events.BaseEvent{EventType: events.EventTypeToolCallArgs}, ToolCallID: "call_1", Delta: d}
	}
	end := &events.ToolCallEndEvent{BaseEvent: &events.BaseEvent{EventType: events.EventTypeToolCallEnd}, ToolCallID: "call_1"}
	buf := make([]byte, 0, 8192)
	b.ReportAllocs()
	for b.Loop() {
		tr := translate.NewAGUIToAAP(translate.AGUIToAAPOptions{Mode: aap.StreamDelta})
		_, _ = tr.Feed(start)
		for _, a := range args {
			_, _ = tr.Feed(a)
		}
		out, _ := tr.Feed(end)
		buf = buf[:0]
		for _, o := range out {
			buf, _ = aap.AppendFrame(buf, o)
		}
	}
}

// BenchmarkAAPToAGUIToolCall2KB: one AAP tool_call with 2 KB of input into
// TOOL_CALL_START/ARGS/END frames. One op is one tool call.
func BenchmarkAAPToAGUIToolCall2KB(b *testing.B) {
	s, _ := streamArgs2KB()
	call := &aap.ToolCall{ToolCallID: "call_1", Name: "store", Input: json.RawMessage(s)}
	buf := make([]byte, 0, 16384)
	data := make([]byte, 0, 8192)
	b.ReportAllocs()
	for b.Loop() {
		tr := translate.NewAAPToAGUI(translate.AAPToAGUIOptions{ThreadID: "t", RunID: "r", NewID: func() string { return "m" }})
		out, _ := tr.Feed(call)
		buf = buf[:0]
		for _, ev := range out {
			data, _ = agui.AppendEvent(data[:0], ev)
			buf = sse.AppendEvent(buf, "", data)
		}
	}
}
