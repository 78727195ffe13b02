package translate_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/stretchr/testify/require"
	"golang.org/x/tools/txtar"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/internal/sse"
	"github.com/aapagui/aapagui/translate"
)

// goldenSections returns the named sections of every golden file, as fuzz
// seeds.
func goldenSections(f *testing.F, suffix string) [][]byte {
	files, err := filepath.Glob("../testdata/golden/*.txtar")
	if err != nil {
		f.Fatal(err)
	}
	var out [][]byte
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		for _, s := range txtar.Parse(data).Files {
			if strings.HasSuffix(s.Name, suffix) {
				out = append(out, s.Data)
			}
		}
	}
	return out
}

// checkAAPStream checks the invariants of every AAP stream the translator
// produces: turn_start first, exactly one turn_stop and it is last, only
// the events of the mode, and tool inputs that are JSON objects.
func checkAAPStream(t *testing.T, mode aap.StreamMode, out []aap.Event) {
	t.Helper()
	if mode == aap.StreamNone {
		if len(out) != 0 {
			t.Fatalf("none mode emitted %d events", len(out))
		}
		return
	}
	if len(out) < 2 {
		t.Fatalf("stream of %d events", len(out))
	}
	if _, ok := out[0].(*aap.TurnStart); !ok {
		t.Fatalf("first event %s", out[0].EventName())
	}
	for i, ev := range out[1:] {
		last := i == len(out)-2
		switch e := ev.(type) {
		case *aap.TurnStart:
			t.Fatalf("second turn_start at %d", i+1)
		case *aap.TurnStop:
			if !last {
				t.Fatalf("turn_stop at %d of %d", i+1, len(out))
			}
			if !e.StopReason.Valid() {
				t.Fatalf("invalid stop reason %q", e.StopReason)
			}
		case *aap.TextDelta, *aap.ThinkingDelta:
			if mode != aap.StreamDelta {
				t.Fatalf("%s in %s mode", ev.EventName(), mode)
			}
		case *aap.Text, *aap.Thinking:
			if mode != aap.StreamMessage {
				t.Fatalf("%s in %s mode", ev.EventName(), mode)
			}
		case *aap.ToolCall:
			if !json.Valid(e.Input) || bytes.TrimSpace(e.Input)[0] != '{' {
				t.Fatalf("tool_call input %q is not a JSON object", e.Input)
			}
		}
		if last {
			if _, ok := ev.(*aap.TurnStop); !ok {
				t.Fatalf("last event %s", ev.EventName())
			}
		}
		if _, err := aap.AppendFrame(nil, ev); err != nil {
			t.Fatalf("encoding %s: %v", ev.EventName(), err)
		}
	}
}

// FuzzAGUIToAAP feeds AG-UI SSE streams (as bytes) to the AG-UI→AAP
// translator in every mode, a MESSAGES_SNAPSHOT as a bridge does
// (fuzzSnapshot).
func FuzzAGUIToAAP(f *testing.F) {
	for _, s := range goldenSections(f, ".agui.sse") {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var evs []events.Event
		for frame, err := range sse.Read(bytes.NewReader(data), sse.ReadOptions{MaxEventSize: 1 << 16}) {
			if err != nil {
				break
			}
			if ev, err := agui.DecodeEvent(frame.Data); err == nil {
				evs = append(evs, ev)
			}
		}
		for _, mode := range []aap.StreamMode{aap.StreamDelta, aap.StreamMessage, aap.StreamNone} {
			tr := translate.NewAGUIToAAP(translate.AGUIToAAPOptions{Mode: mode})
			var out []aap.Event
			for _, ev := range evs {
				var o []aap.Event
				if e, ok := ev.(*events.MessagesSnapshotEvent); ok {
					o = fuzzSnapshot(t, tr, e, out)
				} else {
					o, _ = tr.Feed(ev)
				}
				out = append(out, o...)
			}
			out = append(out, tr.Finish()...)
			checkAAPStream(t, mode, out)
			resp := tr.Response()
			b, err := json.Marshal(resp)
			if err != nil {
				t.Fatal(err)
			}
			var back aap.PostSessionTurnResponse
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatalf("the turn's response does not decode: %v\n%s", err, b)
			}
		}
	})
}

// fuzzSnapshot feeds a MESSAGES_SNAPSHOT (AGUIToAAP.FeedSnapshot) to a
// run that was sent the snapshot's messages up to its last user message,
// and checks that what it streams shows no call or result that the stream
// (out, so far) or the snapshot's own events showed already.
func fuzzSnapshot(t *testing.T, tr *translate.AGUIToAAP, e *events.MessagesSnapshotEvent, out []aap.Event) []aap.Event {
	t.Helper()
	msgs, ids, err := translate.MessagesToAAPWithIDs(e.Messages)
	if err != nil {
		return nil
	}
	snap := make([]translate.HistoryEntry, len(msgs))
	sent := 0
	for i, m := range msgs {
		snap[i] = translate.HistoryEntry{Message: m, AGUIID: ids[i]}
		if m.Role() == aap.RoleUser {
			sent = i + 1
		}
	}
	o, _ := tr.FeedSnapshot(snap, snap[:sent], nil)
	seen := map[string]bool{}
	note := func(ev aap.Event) (key string, again bool) {
		switch x := ev.(type) {
		case *aap.ToolCall:
			key = "call " + x.ToolCallID
		case *aap.ToolResult:
			key = "result " + x.ToolCallID
		default:
			return "", false
		}
		again = seen[key]
		seen[key] = true
		return key, again
	}
	for _, ev := range out {
		note(ev)
	}
	for _, ev := range o {
		if key, again := note(ev); again {
			t.Fatalf("the snapshot streamed the %s again", key)
		}
	}
	return o
}

// FuzzAGUIToAAPOps drives the AG-UI→AAP translator with event sequences
// built from the fuzz bytes over a small pool of ids, which reaches the
// translator's states much faster than raw JSON does. A nil event of the
// sequence is a call of EndMessage (two runs strung into one turn).
func FuzzAGUIToAAPOps(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13})
	f.Add([]byte{5, 6, 5, 22, 6, 27, 7, 23, 12})
	f.Add([]byte{9, 9, 9, 10, 14})
	f.Add([]byte{0, 1, 2, 3, 19, 0, 33, 34, 35, 13})
	f.Fuzz(func(t *testing.T, ops []byte) {
		evs := opsToAGUI(ops)
		for _, mode := range []aap.StreamMode{aap.StreamDelta, aap.StreamMessage, aap.StreamNone} {
			tr := translate.NewAGUIToAAP(translate.AGUIToAAPOptions{Mode: mode})
			var out []aap.Event
			for _, ev := range evs {
				if ev == nil {
					out = append(out, tr.EndMessage()...)
					continue
				}
				o, _ := tr.Feed(ev)
				out = append(out, o...)
			}
			out = append(out, tr.Finish()...)
			checkAAPStream(t, mode, out)
		}
	})
}

// FuzzAddTextDelta checks that AddTextDelta, which takes a stream's
// usual text delta without its event, is Feed of that event: a translator
// given each TEXT_MESSAGE_CONTENT by AddTextDelta where it takes it (the
// caller then writes the text_delta) makes the same stream, messages and
// response as one fed every event.
func FuzzAddTextDelta(f *testing.F) {
	f.Add([]byte{0, 1, 2, 2, 2, 3, 13})
	f.Add([]byte{0, 1, 2, 2, 3, 1, 2, 2, 13})
	f.Add([]byte{0, 1, 2, 34, 2, 5, 2, 3, 13})
	f.Fuzz(func(t *testing.T, ops []byte) {
		evs := opsToAGUI(ops)
		fed := translate.NewAGUIToAAP(translate.AGUIToAAPOptions{Mode: aap.StreamDelta})
		added := translate.NewAGUIToAAP(translate.AGUIToAAPOptions{Mode: aap.StreamDelta})
		var want, got []aap.Event
		for _, ev := range evs {
			if ev == nil {
				want = append(want, fed.EndMessage()...)
				got = append(got, added.EndMessage()...)
				continue
			}
			o, wantErr := fed.Feed(ev)
			want = append(want, o...)
			if e, ok := ev.(*events.TextMessageContentEvent); ok && added.AddTextDelta(e.MessageID, []byte(e.Delta)) {
				require.NoError(t, wantErr)
				got = append(got, &aap.TextDelta{Delta: e.Delta})
				continue
			}
			o, err := added.Feed(ev)
			require.Equal(t, wantErr, err)
			got = append(got, o...)
		}
		want = append(want, fed.Finish()...)
		got = append(got, added.Finish()...)
		require.Equal(t, want, got)
		require.Equal(t, fed.Messages(), added.Messages())
		require.Equal(t, fed.MessageIDs(), added.MessageIDs())
		require.Equal(t, fed.Response(), added.Response())
	})
}

// AddTextDelta takes the deltas after a text message's first, in delta
// mode only.
func TestAddTextDelta(t *testing.T) {
	base := func(typ events.EventType) *events.BaseEvent { return &events.BaseEvent{EventType: typ} }
	for _, mode := range []aap.StreamMode{aap.StreamDelta, aap.StreamMessage} {
		tr := translate.NewAGUIToAAP(translate.AGUIToAAPOptions{Mode: mode})
		_, _ = tr.Feed(&events.RunStartedEvent{BaseEvent: base(events.EventTypeRunStarted), ThreadIDValue: "t", RunIDValue: "r"})
		_, _ = tr.Feed(&events.TextMessageStartEvent{BaseEvent: base(events.EventTypeTextMessageStart), MessageID: "m"})
		require.False(t, tr.AddTextDelta("m", []byte("Hel")), "the message's first delta")
		_, _ = tr.Feed(&events.TextMessageContentEvent{BaseEvent: base(events.EventTypeTextMessageContent), MessageID: "m", Delta: "Hel"})
		require.Equal(t, mode == aap.StreamDelta, tr.AddTextDelta("m", []byte("lo")), mode)
		require.False(t, tr.AddTextDelta("other", []byte("x")), "a message not started")
		require.False(t, tr.AddTextDelta("m", nil), "an empty delta")
	}
}

func opsToAGUI(ops []byte) []events.Event {
	var out []events.Event
	base := func(typ events.EventType) *events.BaseEvent { return &events.BaseEvent{EventType: typ} }
	str := func(s string) *string { return &s }
	for i, op := range ops {
		id := fmt.Sprintf("id%d", op>>5) // four ids
		delta := []string{"", "x", "{\"a\":", "1}"}[i%4]
		switch op & 31 {
		case 0:
			out = append(out, &events.RunStartedEvent{BaseEvent: base(events.EventTypeRunStarted), ThreadIDValue: "t", RunIDValue: "r"})
		case 1:
			out = append(out, &events.TextMessageStartEvent{BaseEvent: base(events.EventTypeTextMessageStart), MessageID: id})
		case 2:
			out = append(out, &events.TextMessageContentEvent{BaseEvent: base(events.EventTypeTextMessageContent), MessageID: id, Delta: delta})
		case 3:
			out = append(out, &events.TextMessageEndEvent{BaseEvent: base(events.EventTypeTextMessageEnd), MessageID: id})
		case 4:
			out = append(out, &events.ReasoningMessageStartEvent{BaseEvent: base(events.EventTypeReasoningMessageStart), MessageID: id, Role: "reasoning"})
		case 5:
			out = append(out, &events.ToolCallStartEvent{BaseEvent: base(events.EventTypeToolCallStart), ToolCallID: id, ToolCallName: "tool"})
		case 6:
			out = append(out, &events.ToolCallArgsEvent{BaseEvent: base(events.EventTypeToolCallArgs), ToolCallID: id, Delta: delta})
		case 7:
			out = append(out, &events.ToolCallEndEvent{BaseEvent: base(events.EventTypeToolCallEnd), ToolCallID: id})
		case 8:
			out = append(out, &events.ToolCallResultEvent{BaseEvent: base(events.EventTypeToolCallResult), MessageID: "r" + id, ToolCallID: id, Content: delta})
		case 9:
			out = append(out, &events.ReasoningMessageContentEvent{BaseEvent: base(events.EventTypeReasoningMessageContent), MessageID: id, Delta: delta})
		case 10:
			out = append(out, &events.ReasoningMessageEndEvent{BaseEvent: base(events.EventTypeReasoningMessageEnd), MessageID: id})
		case 11:
			ev := &events.TextMessageChunkEvent{BaseEvent: base(events.EventTypeTextMessageChunk), Delta: str(delta)}
			if op&32 != 0 {
				ev.MessageID = str(id)
			}
			out = append(out, ev)
		case 12:
			ev := &events.ToolCallChunkEvent{BaseEvent: base(events.EventTypeToolCallChunk), Delta: str(delta)}
			if op&32 != 0 {
				ev.ToolCallID, ev.ToolCallName = str(id), str("tool")
			}
			out = append(out, ev)
		case 13:
			out = append(out, &events.RunFinishedEvent{BaseEvent: base(events.EventTypeRunFinished), ThreadIDValue: "t", RunIDValue: "r"})
		case 14:
			out = append(out, &events.RunErrorEvent{BaseEvent: base(events.EventTypeRunError), Message: "boom"})
		case 15:
			out = append(out, &events.ThinkingTextMessageContentEvent{BaseEvent: base(events.EventTypeThinkingTextMessageContent), Delta: delta})
		case 16:
			out = append(out, &events.RunFinishedEvent{BaseEvent: base(events.EventTypeRunFinished), ThreadIDValue: "t", RunIDValue: "r",
				Outcome: &events.RunFinishedOutcome{Type: events.RunFinishedOutcomeTypeInterrupt, Interrupts: []types.Interrupt{{ID: "i" + id, Reason: "tool_call", ToolCallID: id}}}})
		case 17:
			out = append(out, &events.RunFinishedEvent{BaseEvent: base(events.EventTypeRunFinished), ThreadIDValue: "t", RunIDValue: "r",
				Result: map[string]any{"stopReason": []string{"max_tokens", "refusal", "bogus", "error"}[i%4]}})
		case 18:
			ev := &events.ReasoningMessageChunkEvent{BaseEvent: base(events.EventTypeReasoningMessageChunk), Delta: str(delta)}
			if op&32 != 0 {
				ev.MessageID = str(id)
			}
			out = append(out, ev)
		case 19:
			out = append(out, nil) // EndMessage
		default:
			out = append(out, &events.StepStartedEvent{BaseEvent: base(events.EventTypeStepStarted), StepName: id})
		}
	}
	return out
}

// FuzzAAPToAGUI drives the AAP→AG-UI translator with AAP event sequences
// built from the fuzz bytes, of any order (even invalid), and checks that
// what it emits always passes the AG-UI client's rules and encodes.
func FuzzAAPToAGUI(f *testing.F) {
	f.Add([]byte{0, 1, 1, 7})
	f.Add([]byte{0, 2, 1, 5, 6, 1, 7})
	f.Add([]byte{3, 4, 5, 5, 7})
	f.Add([]byte{0, 0x18, 1, 0x28, 0x38, 0x48, 0x58, 0x68, 0x78, 7})
	f.Add([]byte{0, 116, 134, 5, 7})       // a call's preview, then the call
	f.Add([]byte{0, 116, 1, 134, 5, 6, 7}) // text closes the preview
	f.Add([]byte{0, 116, 152, 7})          // a preview the turn leaves open
	f.Fuzz(func(t *testing.T, ops []byte) {
		tr := translate.NewAAPToAGUI(translate.AAPToAGUIOptions{
			ThreadID: "t", RunID: "r", NewID: translate.SequentialIDs("m"),
			IsClientTool: func(name string) bool { return name == "client" },
		})
		var out []events.Event
		for _, ev := range opsToAAP(ops) {
			o, _ := tr.Feed(ev)
			out = append(out, o...)
		}
		out = append(out, tr.Finish()...)
		if err := agui.Verify(out); err != nil {
			t.Fatalf("%v\n%s", err, dumpAGUI(out))
		}
		for _, ev := range out {
			if _, err := agui.AppendEvent(nil, ev); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// opsToAAP makes an AAP event sequence of fuzz bytes, of any order.
func opsToAAP(ops []byte) []aap.Event {
	out := make([]aap.Event, 0, len(ops))
	for i, op := range ops {
		delta := []string{"", "x", "y\n", "é"}[i%4]
		var ev aap.Event
		switch op % 9 {
		case 0:
			ev = &aap.TurnStart{}
		case 1:
			ev = &aap.TextDelta{Delta: delta}
		case 2:
			ev = &aap.ThinkingDelta{Delta: delta}
		case 3:
			ev = &aap.Text{Text: delta}
		case 4:
			ev = &aap.Thinking{Thinking: delta}
		case 5:
			name := []string{"client", "server"}[int(op>>4)%2]
			ev = &aap.ToolCall{ToolCallID: fmt.Sprintf("c%d", op>>5), Name: name, Input: json.RawMessage([]string{`{}`, ``, `{"a":1}`}[i%3])}
		case 6:
			ev = &aap.ToolResult{ToolCallID: fmt.Sprintf("c%d", op>>5), Content: aap.TextContent(delta)}
		case 7:
			ev = &aap.TurnStop{StopReason: []aap.StopReason{aap.StopEndTurn, aap.StopToolUse, aap.StopMaxTokens, aap.StopRefusal, aap.StopError}[int(op>>4)%5]}
		default:
			// An unknown event, or what the AG-UI extension may carry: the
			// events AAP has none for, a run's result, and what it must
			// never pass on (a run's start or end, broken JSON).
			switch op >> 4 {
			case 0:
				ev = &aap.UnknownEvent{Name: "future", Data: json.RawMessage(`{}`)}
			default:
				ev = &aap.AGUIEvent{Data: json.RawMessage([]string{
					`{"type":"STATE_DELTA","delta":[{"op":"add","path":"/a","value":1.50}]}`,
					`{"type":"RUN_FINISHED","threadId":"x","runId":"y","result":{"n":2.50}}`,
					`{"type":"RUN_STARTED","threadId":"x","runId":"y"}`,
					`{"type":"CUSTOM","name":"PredictState","value":[]}`,
					`{"type":"TEXT_MESSAGE_END","messageId":"m1"}`,
					`{"type":"STEP_STARTED","stepName":"s"}`,
					`{"type":`,
					// A call's preview, of a call the stream may or may
					// not go on to make.
					`{"type":"TOOL_CALL_START","toolCallId":"c0","toolCallName":"client"}`,
					`{"type":"TOOL_CALL_ARGS","toolCallId":"c0","delta":"{\"a\""}`,
					`{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":":1}"}`,
				}[int(op>>4)%10])}
			}
		}
		out = append(out, ev)
	}
	return out
}

// FuzzAAPToAGUIAddTextDelta checks that AAPToAGUI.AddTextDelta, which
// takes a stream's usual text delta without its event, is Feed of that
// event: a translator given each text_delta by AddTextDelta where it
// takes it (the caller then writes the TEXT_MESSAGE_CONTENT) makes the
// same events and messages as one fed every event.
func FuzzAAPToAGUIAddTextDelta(f *testing.F) {
	f.Add([]byte{0, 1, 1, 1, 7})
	f.Add([]byte{0, 1, 1, 2, 1, 1, 5, 6, 1, 1, 7})
	f.Fuzz(func(t *testing.T, ops []byte) {
		opts := translate.AAPToAGUIOptions{ThreadID: "t", RunID: "r", IsClientTool: func(name string) bool { return name == "client" }}
		opts.NewID = translate.SequentialIDs("m")
		fed := translate.NewAAPToAGUI(opts)
		opts.NewID = translate.SequentialIDs("m")
		added := translate.NewAAPToAGUI(opts)
		var want, got []byte
		for _, ev := range opsToAAP(ops) {
			o, wantErr := fed.Feed(ev)
			want = appendFrames(t, want, o)
			if d, ok := ev.(*aap.TextDelta); ok {
				if id, ok := added.AddTextDelta(d.Delta); ok {
					got = agui.AppendTextContentFrame(got, id, d.Delta)
					continue
				}
			}
			o, err := added.Feed(ev)
			require.Equal(t, wantErr, err)
			got = appendFrames(t, got, o)
		}
		want = appendFrames(t, want, fed.Finish())
		got = appendFrames(t, got, added.Finish())
		require.Equal(t, string(want), string(got))
		require.Equal(t, fed.Messages(), added.Messages())
	})
}

// appendFrames appends the frames of evs.
func appendFrames(t *testing.T, dst []byte, evs []events.Event) []byte {
	for _, ev := range evs {
		var err error
		if dst, err = agui.AppendFrame(dst, ev); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func dumpAGUI(evs []events.Event) string {
	var sb strings.Builder
	for _, ev := range evs {
		b, _ := agui.AppendEvent(nil, ev)
		sb.Write(b)
		sb.WriteByte('\n')
	}
	return sb.String()
}

// AAPToAGUI.AddTextDelta takes the deltas after a text message's first,
// until something else begins.
func TestAAPToAGUIAddTextDelta(t *testing.T) {
	tr := translate.NewAAPToAGUI(translate.AAPToAGUIOptions{ThreadID: "t", RunID: "r", NewID: translate.SequentialIDs("m")})
	_, ok := tr.AddTextDelta("Hel")
	require.False(t, ok, "no text message yet")
	_, _ = tr.Feed(&aap.TextDelta{Delta: "Hel"})
	id, ok := tr.AddTextDelta("lo")
	require.True(t, ok)
	require.Equal(t, "m1", id)
	_, _ = tr.Feed(&aap.ThinkingDelta{Delta: "hmm"})
	_, ok = tr.AddTextDelta("again")
	require.False(t, ok, "reasoning open")
}
