package agui_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/aapagui/aapagui/agui"
)

// codecFuzzSeeds are realistic events as AG-UI servers send them, plus a few
// that exercise the corners of the scanner.
var codecFuzzSeeds = []string{
	`{"type":"RUN_STARTED","threadId":"thread_1","runId":"run_1","timestamp":1718000000000}`,
	`{"type":"TEXT_MESSAGE_START","messageId":"msg_1","role":"assistant"}`,
	`{"type":"TEXT_MESSAGE_CONTENT","messageId":"msg_1","delta":"Hello"}`,
	`{"type":"TEXT_MESSAGE_CONTENT","messageId":"msg_1","delta":" world!\n\n- item \"one\"\n- caf\u00e9 😀"}`,
	`{"type":"TEXT_MESSAGE_CONTENT","timestamp":1718000000001,"messageId":"msg_1","delta":"\ud83d\ude00\ud800\\"}`,
	`{"type":"TEXT_MESSAGE_END","messageId":"msg_1"}`,
	`{"type":"TEXT_MESSAGE_CHUNK","messageId":"msg_2","role":"assistant","delta":"chunk"}`,
	`{"type":"REASONING_START","messageId":"rs_1"}`,
	`{"type":"REASONING_MESSAGE_START","messageId":"rs_1","role":"reasoning"}`,
	`{"type":"REASONING_MESSAGE_CONTENT","messageId":"rs_1","delta":"Let me think."}`,
	`{"type":"REASONING_MESSAGE_END","messageId":"rs_1"}`,
	`{"type":"REASONING_MESSAGE_CHUNK","messageId":"rs_1","delta":"x"}`,
	`{"type":"REASONING_ENCRYPTED_VALUE","subtype":"tool-call","entityId":"call_1","encryptedValue":"gAAAA=="}`,
	`{"type":"REASONING_END","messageId":"rs_1"}`,
	`{"type":"THINKING_START","title":"t"}`,
	`{"type":"THINKING_TEXT_MESSAGE_CONTENT","delta":"hm"}`,
	`{"type":"THINKING_END"}`,
	`{"type":"TOOL_CALL_START","toolCallId":"call_1","toolCallName":"get_weather","parentMessageId":"msg_1"}`,
	`{"type":"TOOL_CALL_ARGS","toolCallId":"call_1","delta":"{\"city\": \"Par"}`,
	`{"type":"TOOL_CALL_ARGS","toolCallId":"call_1","delta":"is\"}"}`,
	`{"type":"TOOL_CALL_END","toolCallId":"call_1"}`,
	`{"type":"TOOL_CALL_CHUNK","toolCallId":"call_2","toolCallName":"f","delta":"{}"}`,
	`{"type":"TOOL_CALL_RESULT","messageId":"tr_1","toolCallId":"call_1","content":"{\"temp\":21}","role":"tool"}`,
	// @ag-ui/core 1.0 shapes.
	`{"type":"TOOL_CALL_RESULT","messageId":"tr_2","toolCallId":"call_1","content":[{"type":"text","text":"a"},{"type":"image","source":{"type":"url","value":"https://x/y.png"}},{"type":"audio","source":{"type":"file","value":"f-1","provider":"openai"},"metadata":{"k":[1,2]}}],"role":"tool"}`,
	`{"type":"TOOL_CALL_RESULT","messageId":"tr_3","toolCallId":"call_1","content":[]}`,
	`{"type":"TOOL_CALL_RESULT","messageId":"tr_3","toolCallId":"call_1","content":[1,"x",null]}`,
	`{"type":"SUBAGENT_STARTED","subagentRunId":"sa-1","name":"researcher","description":"d","parentSubagentRunId":"sa-0","parentToolCallId":"c","parentMessageId":"m"}`,
	`{"type":"SUBAGENT_FINISHED","subagentRunId":"sa-1","result":{"n":1},"outcome":{"type":"suspended","interruptIds":["i1"]}}`,
	`{"type":"SUBAGENT_ERROR","subagentRunId":"sa-1","message":"quota","code":"Q"}`,
	`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"x","subagentRunId":"sa-1"}`,
	`{"type":"TEXT_MESSAGE_START","messageId":"u","role":"developer","name":"dev"}`,
	`{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"cancelled"},"usage":[{"provider":"openai","model":"m","inputTokens":10,"outputTokens":5,"totalTokens":15,"reasoningTokens":2,"cachedInputTokens":3}]}`,
	`{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"success","pendingToolCallIds":["c1"]}}`,
	`{"type":"RUN_ERROR","message":"failed","usage":[{"inputTokens":1}]}`,
	`{"type":"STATE_SNAPSHOT","snapshot":{"todos":[{"id":1,"done":false}]}}`,
	`{"type":"STATE_DELTA","delta":[{"op":"replace","path":"/todos/0/done","value":true}]}`,
	`{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"u1","role":"user","content":"hi"},{"id":"a1","role":"assistant","toolCalls":[]}]}`,
	`{"type":"ACTIVITY_SNAPSHOT","messageId":"a1","activityType":"PLAN","content":{},"replace":true}`,
	`{"type":"ACTIVITY_DELTA","messageId":"a1","activityType":"PLAN","patch":[]}`,
	`{"type":"STEP_STARTED","stepName":"plan"}`,
	`{"type":"STEP_FINISHED","stepName":"plan"}`,
	`{"type":"RAW","event":{"id":"chatcmpl-1"},"source":"openai"}`,
	`{"type":"CUSTOM","name":"progress","value":0.5}`,
	`{"type":"RUN_FINISHED","threadId":"thread_1","runId":"run_1","result":{"answer":42}}`,
	`{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"interrupt","interrupts":[{"id":"i","reason":"tool_call","responseSchema":{}}]}}`,
	`{"type":"RUN_ERROR","message":"upstream failed","code":"UPSTREAM"}`,
	`{"type":"SOMETHING_NEW","payload":[1,{"a":"]}"}]}`,
	`{"Type":"TEXT_MESSAGE_CONTENT","MESSAGEID":"m","delta":null,"delta":"d","timestamp":null}`,
	`{"type":"TOOL_CALL_ARGS","type":5}`,
	`{"\u0074ype":"TOOL_CALL_ARGS","toolCallId":"c","delta":"\u00"}`,
	`{"type":"TEXT_MESSAGE_CONTENT","timestamp":-9223372036854775808,"delta":"x"}`,
	`{"type":"TEXT_MESSAGE_CONTENT","timestamp":1e3}`,
	`{"type":"","a":1}`,
	`[{"type":"RUN_STARTED"}]`,
	`{"type":"RUN_STARTED"`,
}

// codecRefEvent returns an empty SDK struct for typ, the reference list
// (written independently of the package's own), or nil for other types.
func codecRefEvent(typ events.EventType) events.Event {
	switch typ {
	case events.EventTypeThinkingStart:
		return &events.ThinkingStartEvent{}
	case events.EventTypeThinkingEnd:
		return &events.ThinkingEndEvent{}
	case events.EventTypeThinkingTextMessageStart:
		return &events.ThinkingTextMessageStartEvent{}
	case events.EventTypeThinkingTextMessageContent:
		return &events.ThinkingTextMessageContentEvent{}
	case events.EventTypeThinkingTextMessageEnd:
		return &events.ThinkingTextMessageEndEvent{}
	case events.EventTypeToolCallChunk:
		return &events.ToolCallChunkEvent{}
	// @ag-ui/core 1.0 types the SDK lacks: the package's own structs.
	case "SUBAGENT_STARTED":
		return &agui.SubagentStartedEvent{}
	case "SUBAGENT_FINISHED":
		return &agui.SubagentFinishedEvent{}
	case "SUBAGENT_ERROR":
		return &agui.SubagentErrorEvent{}
	}
	// The SDK's decoder knows the other types; use it only to pick the
	// struct, the decoding itself is plain encoding/json below.
	ev, err := events.EventFromJSON([]byte(`{"type":` + codecQuote(string(typ)) + `}`))
	if err != nil {
		return nil
	}
	return reflect.New(reflect.TypeOf(ev).Elem()).Interface().(events.Event)
}

func codecQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// codecSameEvent reports whether b is what a should read back as after an
// encode/decode round trip.
func codecSameEvent(a, b events.Event) bool {
	if ua, ok := a.(*agui.UnknownEvent); ok {
		ub, ok := b.(*agui.UnknownEvent)
		if !ok || ua.Type() != ub.Type() {
			return false
		}
		var ca bytes.Buffer
		return json.Compact(&ca, ua.Raw) == nil && bytes.Equal(ca.Bytes(), ub.Raw)
	}
	return reflect.DeepEqual(a, b)
}

// FuzzDecodeEvent checks DecodeEvent against encoding/json on any input:
// it fails exactly when encoding/json fails (or the type is missing), it
// decodes into the struct encoding/json fills and to the same values, and
// what it decodes survives AppendEvent and DecodeEvent again.
func FuzzDecodeEvent(f *testing.F) {
	for _, s := range codecFuzzSeeds {
		f.Add([]byte(s))
	}
	for _, ev := range goldenEvents(f) {
		f.Add(ev)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		codecCheckDecode(t, data)
		// The same bytes as the content of the fast path's strings, where
		// the escape and UTF-8 handling is hand-written.
		codecCheckDecode(t, slices.Concat([]byte(`{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"`), data, []byte(`"}`)))
	})
}

func codecCheckDecode(t *testing.T, data []byte) {
	t.Helper()
	ev, err := agui.DecodeEvent(data)

	// The reference: encoding/json, first for the type, then for the
	// struct of that type.
	var probe struct {
		Type events.EventType `json:"type"`
	}
	refErr := json.Unmarshal(data, &probe)
	if refErr == nil && probe.Type == "" {
		if err == nil {
			t.Fatalf("DecodeEvent(%q) = %#v, want an error for a missing type", data, ev)
		}
		return
	}
	var ref events.Event
	if refErr == nil {
		if ref = codecRefEvent(probe.Type); ref != nil {
			refErr = json.Unmarshal(data, ref)
		}
		// @ag-ui/core 1.0: a TOOL_CALL_RESULT whose content is an array
		// of parts, which the SDK's struct (a string) cannot hold.
		var te *json.UnmarshalTypeError
		if probe.Type == events.EventTypeToolCallResult && errors.As(refErr, &te) && te.Field == "content" && te.Value == "array" {
			ref = &agui.ToolCallResultPartsEvent{}
			refErr = json.Unmarshal(data, ref)
		}
	}
	if refErr != nil {
		if err == nil {
			t.Fatalf("DecodeEvent(%q) = %#v, want an error like %v", data, ev, refErr)
		}
		var de *agui.EventDecodeError
		if !errors.As(err, &de) {
			t.Fatalf("DecodeEvent(%q) error %T, want *EventDecodeError", data, err)
		}
		return
	}
	if err != nil {
		t.Fatalf("DecodeEvent(%q): %v, encoding/json decodes it", data, err)
	}
	if ev.GetBaseEvent() == nil || ev.Type() != probe.Type {
		t.Fatalf("DecodeEvent(%q) base %#v, want type %q", data, ev.GetBaseEvent(), probe.Type)
	}
	if ref == nil {
		u, ok := ev.(*agui.UnknownEvent)
		if !ok || !bytes.Equal(u.Raw, data) {
			t.Fatalf("DecodeEvent(%q) = %#v, want *UnknownEvent with the input", data, ev)
		}
	} else if !reflect.DeepEqual(ev, ref) {
		t.Fatalf("DecodeEvent(%q)\n got %#v\nwant %#v (encoding/json)", data, ev, ref)
	}

	// Round trip.
	out, err := agui.AppendEvent(nil, ev)
	if err != nil {
		t.Fatalf("AppendEvent(DecodeEvent(%q)): %v", data, err)
	}
	if ref != nil {
		if want := codecEncoderJSON(t, ev); string(out) != want {
			t.Fatalf("AppendEvent(DecodeEvent(%q))\n got %s\nwant %s", data, out, want)
		}
	}
	ev2, err := agui.DecodeEvent(out)
	if err != nil {
		t.Fatalf("DecodeEvent(AppendEvent(DecodeEvent(%q))) = %s: %v", data, out, err)
	}
	switch ev.(type) {
	case *events.MessagesSnapshotEvent, *events.RunFinishedEvent, *agui.SubagentFinishedEvent:
		// omitempty turns empty toolCalls, interrupts, interruptIds and
		// maps into absent ones: equal after one more round trip.
		out2, err := agui.AppendEvent(nil, ev2)
		if err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("second round trip of %q: %s, %v; want %s", data, out2, err, out)
		}
	default:
		if !codecSameEvent(ev, ev2) {
			t.Fatalf("round trip of %q via %s\n got %#v\nwant %#v", data, out, ev2, ev)
		}
	}
}

// FuzzAppendEventMatchesEncoder builds every fast-path event from random
// strings and checks AppendEvent against json.Encoder byte for byte, and
// that DecodeEvent reads the event back.
func FuzzAppendEventMatchesEncoder(f *testing.F) {
	f.Add("msg_1", "Hello, world", "assistant", int64(1718000000000), uint8(0xff))
	f.Add("call_1", `{"city":"Paris","q":"<a&b>"}`, "", int64(0), uint8(0))
	f.Add("m\u2028", "line\nbreak\t\"q\" \\ \x00\x1f\x7f", "tool", int64(-1), uint8(0x55))
	f.Add("\xff\xfe", "caf\xc3\xa9 \xc3( \xed\xa0\x80 😀", "\u2029", int64(9223372036854775807), uint8(0xaa))
	f.Fuzz(func(t *testing.T, a, b, c string, ts int64, flags uint8) {
		base := func(typ events.EventType) *events.BaseEvent {
			be := &events.BaseEvent{EventType: typ}
			if flags&1 != 0 {
				be.TimestampMs = &ts
			}
			return be
		}
		opt := func(bit uint8, s string) *string {
			if flags&bit != 0 {
				return &s
			}
			return nil
		}
		var outcome *events.RunFinishedOutcome
		if flags&8 != 0 {
			outcome = &events.RunFinishedOutcome{Type: events.RunFinishedOutcomeType(c)}
		}
		evs := []events.Event{
			&events.RunStartedEvent{BaseEvent: base(events.EventTypeRunStarted), ThreadIDValue: a, RunIDValue: b},
			&events.RunFinishedEvent{BaseEvent: base(events.EventTypeRunFinished), ThreadIDValue: a, RunIDValue: b, Outcome: outcome},
			&events.RunErrorEvent{BaseEvent: base(events.EventTypeRunError), Code: opt(2, c), Message: b, RunIDValue: a},
			&events.TextMessageStartEvent{BaseEvent: base(events.EventTypeTextMessageStart), MessageID: a, Role: opt(4, c)},
			&events.TextMessageContentEvent{BaseEvent: base(events.EventTypeTextMessageContent), MessageID: a, Delta: b},
			&events.TextMessageEndEvent{BaseEvent: base(events.EventTypeTextMessageEnd), MessageID: a},
			&events.ReasoningStartEvent{BaseEvent: base(events.EventTypeReasoningStart), MessageID: a},
			&events.ReasoningEndEvent{BaseEvent: base(events.EventTypeReasoningEnd), MessageID: b},
			&events.ReasoningMessageStartEvent{BaseEvent: base(events.EventTypeReasoningMessageStart), MessageID: a, Role: c},
			&events.ReasoningMessageContentEvent{BaseEvent: base(events.EventTypeReasoningMessageContent), MessageID: a, Delta: b},
			&events.ReasoningMessageEndEvent{BaseEvent: base(events.EventTypeReasoningMessageEnd), MessageID: a},
			&events.ToolCallStartEvent{BaseEvent: base(events.EventTypeToolCallStart), ToolCallID: a, ToolCallName: c, ParentMessageID: opt(16, b)},
			&events.ToolCallArgsEvent{BaseEvent: base(events.EventTypeToolCallArgs), ToolCallID: a, Delta: b},
			&events.ToolCallEndEvent{BaseEvent: base(events.EventTypeToolCallEnd), ToolCallID: a},
			&events.ToolCallResultEvent{BaseEvent: base(events.EventTypeToolCallResult), MessageID: c, ToolCallID: a, Content: b, Role: opt(32, c)},
			// A struct labelled with a random type is written as labelled.
			&events.TextMessageContentEvent{BaseEvent: base(events.EventType(c)), MessageID: a, Delta: b},
		}
		valid := utf8.ValidString(a) && utf8.ValidString(b) && utf8.ValidString(c)
		for i, ev := range evs {
			want := codecEncoderJSON(t, ev)
			got, err := agui.AppendEvent([]byte("p"), ev)
			if err != nil {
				t.Fatalf("AppendEvent(%#v): %v", ev, err)
			}
			if sameJSON(string(got)) != "p"+want {
				t.Fatalf("AppendEvent(%#v)\n got %s\nwant p%s", ev, got, want)
			}
			if i == len(evs)-1 || !valid {
				continue
			}
			back, err := agui.DecodeEvent(got[1:])
			if err != nil {
				t.Fatalf("DecodeEvent(%s): %v", got[1:], err)
			}
			if !reflect.DeepEqual(back, ev) {
				t.Fatalf("DecodeEvent(%s)\n got %#v\nwant %#v", got[1:], back, ev)
			}
		}
		// A snapshot's text messages are written by hand too; the others
		// go through encoding/json.
		snapshot := &events.MessagesSnapshotEvent{BaseEvent: base(events.EventTypeMessagesSnapshot), Messages: []types.Message{
			{ID: a, Role: types.RoleUser, Content: b}, {ID: b, Role: types.Role(c), Content: strings.Repeat(b, 30), Name: c, EncryptedValue: a},
			{ID: c, Role: types.RoleAssistant, ToolCalls: []types.ToolCall{{ID: a, Type: "function", Function: types.FunctionCall{Name: c, Arguments: b}}}},
			{ID: a, Role: types.RoleTool, ToolCallID: c, Content: []any{map[string]any{"type": "text", "text": b}}},
		}}
		if flags&64 != 0 {
			snapshot.Messages = nil
		}
		want := codecEncoderJSON(t, snapshot)
		got, err := agui.AppendEvent([]byte("p"), snapshot)
		if err != nil || sameJSON(string(got)) != "p"+want {
			t.Fatalf("AppendEvent(%#v): %v\n got %s\nwant p%s", snapshot, err, got, want)
		}
	})
}

// FuzzAppendTextContentFrame holds the frame written without an event
// to AppendFrame's of its TEXT_MESSAGE_CONTENT.
func FuzzAppendTextContentFrame(f *testing.F) {
	f.Add("m1", "Hello")
	f.Add("m\"1", "a\nb\u2028<&>\xff")
	f.Fuzz(func(t *testing.T, id, delta string) {
		want, err := agui.AppendFrame([]byte("id: x\n"), &events.TextMessageContentEvent{
			BaseEvent: &events.BaseEvent{EventType: events.EventTypeTextMessageContent}, MessageID: id, Delta: delta,
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := agui.AppendTextContentFrame([]byte("id: x\n"), id, delta); string(got) != string(want) {
			t.Fatalf("%q %q: %q, AppendFrame %q", id, delta, got, want)
		}
	})
}
