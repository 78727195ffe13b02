package agui_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/internal/jsonenc"
)

// Helpers of this file are prefixed with "codec" to stay clear of the other
// test files of the package.

func codecStr(s string) *string { return &s }

func codecBool(b bool) *bool { return &b }

func codecBase(typ events.EventType) *events.BaseEvent {
	return &events.BaseEvent{EventType: typ}
}

func codecBaseAt(typ events.EventType, ts int64) *events.BaseEvent {
	return &events.BaseEvent{EventType: typ, TimestampMs: &ts}
}

// codecEncoderJSON is the reference AppendEvent must match: json.Encoder
// with HTML escaping off, minus the trailing newline.
// codecEncoderJSON is encoding/json's encoding of v, the U+FFFD it writes
// for invalid UTF-8 in one form (escaped by Go 1.26, as is by 1.27: see
// sameJSON).
func codecEncoderJSON(t testing.TB, v any) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(v))
	return sameJSON(strings.TrimSuffix(buf.String(), "\n"))
}

// sameJSON writes the escapes \ufffd of encoded JSON as the character, so
// that the encoders compare with encoding/json whichever toolchain runs
// the tests.
func sameJSON(s string) string { return string(jsonenc.UnescapeReplacement([]byte(s))) }

// codecAllTypes lists every event type constant of the SDK; DecodeEvent must
// decode each into its struct, not into *UnknownEvent.
var codecAllTypes = []events.EventType{
	events.EventTypeTextMessageStart, events.EventTypeTextMessageContent,
	events.EventTypeTextMessageEnd, events.EventTypeTextMessageChunk,
	events.EventTypeToolCallStart, events.EventTypeToolCallArgs, events.EventTypeToolCallEnd,
	events.EventTypeToolCallChunk, events.EventTypeToolCallResult,
	events.EventTypeStateSnapshot, events.EventTypeStateDelta, events.EventTypeMessagesSnapshot,
	events.EventTypeActivitySnapshot, events.EventTypeActivityDelta,
	events.EventTypeRaw, events.EventTypeCustom,
	events.EventTypeRunStarted, events.EventTypeRunFinished, events.EventTypeRunError,
	events.EventTypeStepStarted, events.EventTypeStepFinished,
	events.EventTypeThinkingStart, events.EventTypeThinkingEnd,
	events.EventTypeThinkingTextMessageStart, events.EventTypeThinkingTextMessageContent,
	events.EventTypeThinkingTextMessageEnd,
	events.EventTypeReasoningStart, events.EventTypeReasoningMessageStart,
	events.EventTypeReasoningMessageContent, events.EventTypeReasoningMessageEnd,
	events.EventTypeReasoningMessageChunk, events.EventTypeReasoningEnd,
	events.EventTypeReasoningEncryptedValue,
}

func TestDecodeEventKnowsEveryType(t *testing.T) {
	for _, typ := range codecAllTypes {
		t.Run(string(typ), func(t *testing.T) {
			ev, err := agui.DecodeEvent([]byte(`{"type":"` + string(typ) + `"}`))
			require.NoError(t, err)
			require.NotNil(t, ev.GetBaseEvent())
			assert.Equal(t, typ, ev.Type())
			assert.NotContains(t, fmt.Sprintf("%T", ev), "UnknownEvent")
			// The struct is the SDK's own one wherever the SDK can tell.
			if sdk, err := events.EventFromJSON([]byte(`{"type":"` + string(typ) + `"}`)); err == nil {
				assert.Equal(t, reflect.TypeOf(sdk), reflect.TypeOf(ev))
			}
		})
	}
}

func TestDecodeEvent(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want events.Event
	}{
		{
			name: "RUN_STARTED",
			in:   `{"type":"RUN_STARTED","timestamp":1700000000000,"threadId":"t1","runId":"r1"}`,
			want: &events.RunStartedEvent{BaseEvent: codecBaseAt(events.EventTypeRunStarted, 1700000000000), ThreadIDValue: "t1", RunIDValue: "r1"},
		},
		{
			name: "RUN_FINISHED with result and interrupt outcome",
			in: `{"type":"RUN_FINISHED","threadId":"t1","runId":"r1","result":{"ok":true,"n":2},` +
				`"outcome":{"type":"interrupt","interrupts":[{"id":"i1","reason":"tool_call","tool_call_id":"c1"}]}}`,
			want: &events.RunFinishedEvent{
				BaseEvent: codecBase(events.EventTypeRunFinished), ThreadIDValue: "t1", RunIDValue: "r1",
				Result: map[string]any{"ok": true, "n": 2.0},
				Outcome: &events.RunFinishedOutcome{
					Type:       events.RunFinishedOutcomeTypeInterrupt,
					Interrupts: []types.Interrupt{{ID: "i1", Reason: "tool_call", ToolCallID: "c1"}},
				},
			},
		},
		{
			name: "RUN_ERROR",
			in:   `{"type":"RUN_ERROR","code":"overloaded","message":"try later","runId":"r1"}`,
			want: &events.RunErrorEvent{BaseEvent: codecBase(events.EventTypeRunError), Code: codecStr("overloaded"), Message: "try later", RunIDValue: "r1"},
		},
		{
			name: "STEP_STARTED",
			in:   `{"type":"STEP_STARTED","stepName":"plan"}`,
			want: &events.StepStartedEvent{BaseEvent: codecBase(events.EventTypeStepStarted), StepName: "plan"},
		},
		{
			name: "STEP_FINISHED",
			in:   `{"type":"STEP_FINISHED","stepName":"plan"}`,
			want: &events.StepFinishedEvent{BaseEvent: codecBase(events.EventTypeStepFinished), StepName: "plan"},
		},
		{
			name: "TEXT_MESSAGE_START",
			in:   `{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}`,
			want: &events.TextMessageStartEvent{BaseEvent: codecBase(events.EventTypeTextMessageStart), MessageID: "m1", Role: codecStr("assistant")},
		},
		{
			name: "TEXT_MESSAGE_CONTENT",
			in:   `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Hello"}`,
			want: &events.TextMessageContentEvent{BaseEvent: codecBase(events.EventTypeTextMessageContent), MessageID: "m1", Delta: "Hello"},
		},
		{
			name: "TEXT_MESSAGE_CONTENT with timestamp, whitespace and type last",
			in:   " {\n\t\"messageId\" : \"m1\" ,\r\n \"delta\":\"a b\", \"timestamp\": -0, \"type\":\"TEXT_MESSAGE_CONTENT\" } \n",
			want: &events.TextMessageContentEvent{BaseEvent: codecBaseAt(events.EventTypeTextMessageContent, 0), MessageID: "m1", Delta: "a b"},
		},
		{
			name: "TEXT_MESSAGE_CONTENT with escapes and non-ASCII",
			in:   `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m\u00e9","delta":"l1\nl2\t\"q\" \\ \/ \u00e9t\u00E9 \ud83d\ude00 😀 <&> \b\f\r"}`,
			want: &events.TextMessageContentEvent{BaseEvent: codecBase(events.EventTypeTextMessageContent), MessageID: "mé", Delta: "l1\nl2\t\"q\" \\ / été 😀 😀 <&> \b\f\r"},
		},
		{
			name: "TEXT_MESSAGE_CONTENT with lone surrogates and invalid UTF-8",
			in:   "{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m1\",\"delta\":\"\\ud800x\\udc00\\ud800\\u0041\xff\xc3(\"}",
			want: &events.TextMessageContentEvent{BaseEvent: codecBase(events.EventTypeTextMessageContent), MessageID: "m1", Delta: "\uFFFDx\uFFFD\uFFFDA\uFFFD\uFFFD("},
		},
		{
			name: "TEXT_MESSAGE_CONTENT null fields and duplicates (last wins, null keeps)",
			in:   `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"a","delta":"b","messageId":null,"timestamp":5,"timestamp":null}`,
			want: &events.TextMessageContentEvent{BaseEvent: codecBase(events.EventTypeTextMessageContent), MessageID: "m1", Delta: "b"},
		},
		{
			name: "TEXT_MESSAGE_CONTENT with case-insensitive keys and unknown fields",
			in:   `{"TYPE":"TEXT_MESSAGE_CONTENT","MessageID":"m1","Delta":"d","extra":{"x":[1,"]"]},"rawEvent":{"src":"openai"}}`,
			want: &events.TextMessageContentEvent{
				BaseEvent: &events.BaseEvent{EventType: events.EventTypeTextMessageContent, RawEvent: map[string]any{"src": "openai"}},
				MessageID: "m1", Delta: "d",
			},
		},
		{
			name: "TEXT_MESSAGE_CONTENT with escaped key",
			in:   `{"\u0074ype":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"d"}`,
			want: &events.TextMessageContentEvent{BaseEvent: codecBase(events.EventTypeTextMessageContent), MessageID: "m1", Delta: "d"},
		},
		{
			name: "TEXT_MESSAGE_CONTENT with escaped type value",
			in:   `{"type":"TEXT_MESSAGE\u005fCONTENT","messageId":"m1","delta":"d"}`,
			want: &events.TextMessageContentEvent{BaseEvent: codecBase(events.EventTypeTextMessageContent), MessageID: "m1", Delta: "d"},
		},
		{
			name: "TEXT_MESSAGE_CONTENT type given twice",
			in:   `{"type":"RUN_STARTED","messageId":"m1","type":"TEXT_MESSAGE_CONTENT","delta":"d","type":null}`,
			want: &events.TextMessageContentEvent{BaseEvent: codecBase(events.EventTypeTextMessageContent), MessageID: "m1", Delta: "d"},
		},
		{
			name: "TEXT_MESSAGE_END",
			in:   `{"type":"TEXT_MESSAGE_END","messageId":"m1"}`,
			want: &events.TextMessageEndEvent{BaseEvent: codecBase(events.EventTypeTextMessageEnd), MessageID: "m1"},
		},
		{
			name: "TEXT_MESSAGE_CHUNK",
			in:   `{"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","role":"assistant","delta":"Hi"}`,
			want: &events.TextMessageChunkEvent{BaseEvent: codecBase(events.EventTypeTextMessageChunk), MessageID: codecStr("m1"), Role: codecStr("assistant"), Delta: codecStr("Hi")},
		},
		{
			name: "TOOL_CALL_START",
			in:   `{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"search","parentMessageId":"m1"}`,
			want: &events.ToolCallStartEvent{BaseEvent: codecBase(events.EventTypeToolCallStart), ToolCallID: "c1", ToolCallName: "search", ParentMessageID: codecStr("m1")},
		},
		{
			name: "TOOL_CALL_ARGS",
			in:   `{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{\"q\":\"go json\"}"}`,
			want: &events.ToolCallArgsEvent{BaseEvent: codecBase(events.EventTypeToolCallArgs), ToolCallID: "c1", Delta: `{"q":"go json"}`},
		},
		{
			name: "TOOL_CALL_ARGS long delta",
			in:   `{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"` + strings.Repeat(`\"ab\"`, 1000) + `"}`,
			want: &events.ToolCallArgsEvent{BaseEvent: codecBase(events.EventTypeToolCallArgs), ToolCallID: "c1", Delta: strings.Repeat(`"ab"`, 1000)},
		},
		{
			name: "TOOL_CALL_END",
			in:   `{"type":"TOOL_CALL_END","toolCallId":"c1"}`,
			want: &events.ToolCallEndEvent{BaseEvent: codecBase(events.EventTypeToolCallEnd), ToolCallID: "c1"},
		},
		{
			name: "TOOL_CALL_CHUNK",
			in:   `{"type":"TOOL_CALL_CHUNK","toolCallId":"c1","toolCallName":"search","parentMessageId":"m1","delta":"{\"q\""}`,
			want: &events.ToolCallChunkEvent{
				BaseEvent: codecBase(events.EventTypeToolCallChunk), ToolCallID: codecStr("c1"),
				ToolCallName: codecStr("search"), ParentMessageID: codecStr("m1"), Delta: codecStr(`{"q"`),
			},
		},
		{
			name: "TOOL_CALL_RESULT",
			in:   `{"type":"TOOL_CALL_RESULT","messageId":"m2","toolCallId":"c1","content":"42","role":"tool"}`,
			want: &events.ToolCallResultEvent{BaseEvent: codecBase(events.EventTypeToolCallResult), MessageID: "m2", ToolCallID: "c1", Content: "42", Role: codecStr("tool")},
		},
		{
			name: "STATE_SNAPSHOT",
			in:   `{"type":"STATE_SNAPSHOT","snapshot":{"count":1,"tags":["a"]}}`,
			want: &events.StateSnapshotEvent{BaseEvent: codecBase(events.EventTypeStateSnapshot), Snapshot: map[string]any{"count": 1.0, "tags": []any{"a"}}},
		},
		{
			name: "STATE_DELTA",
			in:   `{"type":"STATE_DELTA","delta":[{"op":"replace","path":"/count","value":2},{"op":"move","path":"/b","from":"/a"}]}`,
			want: &events.StateDeltaEvent{BaseEvent: codecBase(events.EventTypeStateDelta), Delta: []events.JSONPatchOperation{
				{Op: "replace", Path: "/count", Value: 2.0},
				{Op: "move", Path: "/b", From: "/a"},
			}},
		},
		{
			name: "MESSAGES_SNAPSHOT",
			in: `{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"u1","role":"user","content":"hi"},` +
				`{"id":"a1","role":"assistant","toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},` +
				`{"id":"t1","role":"tool","content":"ok","tool_call_id":"c1"}]}`,
			want: &events.MessagesSnapshotEvent{BaseEvent: codecBase(events.EventTypeMessagesSnapshot), Messages: []types.Message{
				{ID: "u1", Role: types.RoleUser, Content: "hi"},
				{ID: "a1", Role: types.RoleAssistant, ToolCalls: []types.ToolCall{{ID: "c1", Type: "function", Function: types.FunctionCall{Name: "f", Arguments: "{}"}}}},
				{ID: "t1", Role: types.RoleTool, Content: "ok", ToolCallID: "c1"},
			}},
		},
		{
			name: "ACTIVITY_SNAPSHOT",
			in:   `{"type":"ACTIVITY_SNAPSHOT","messageId":"a1","activityType":"PLAN","content":{"steps":[]},"replace":false}`,
			want: &events.ActivitySnapshotEvent{BaseEvent: codecBase(events.EventTypeActivitySnapshot), MessageID: "a1", ActivityType: "PLAN", Content: map[string]any{"steps": []any{}}, Replace: codecBool(false)},
		},
		{
			name: "ACTIVITY_DELTA",
			in:   `{"type":"ACTIVITY_DELTA","messageId":"a1","activityType":"PLAN","patch":[{"op":"add","path":"/steps/-","value":"x"}]}`,
			want: &events.ActivityDeltaEvent{BaseEvent: codecBase(events.EventTypeActivityDelta), MessageID: "a1", ActivityType: "PLAN", Patch: []events.JSONPatchOperation{{Op: "add", Path: "/steps/-", Value: "x"}}},
		},
		{
			name: "RAW",
			in:   `{"type":"RAW","event":{"kind":"x"},"source":"upstream"}`,
			want: &events.RawEvent{BaseEvent: codecBase(events.EventTypeRaw), Event: map[string]any{"kind": "x"}, Source: codecStr("upstream")},
		},
		{
			name: "CUSTOM",
			in:   `{"type":"CUSTOM","name":"ping","value":[1,null]}`,
			want: &events.CustomEvent{BaseEvent: codecBase(events.EventTypeCustom), Name: "ping", Value: []any{1.0, nil}},
		},
		{
			name: "THINKING_START",
			in:   `{"type":"THINKING_START","title":"plan"}`,
			want: &events.ThinkingStartEvent{BaseEvent: codecBase(events.EventTypeThinkingStart), Title: codecStr("plan")},
		},
		{
			name: "THINKING_END",
			in:   `{"type":"THINKING_END","timestamp":7}`,
			want: &events.ThinkingEndEvent{BaseEvent: codecBaseAt(events.EventTypeThinkingEnd, 7)},
		},
		{
			name: "THINKING_TEXT_MESSAGE_START",
			in:   `{"type":"THINKING_TEXT_MESSAGE_START"}`,
			want: &events.ThinkingTextMessageStartEvent{BaseEvent: codecBase(events.EventTypeThinkingTextMessageStart)},
		},
		{
			name: "THINKING_TEXT_MESSAGE_CONTENT",
			in:   `{"type":"THINKING_TEXT_MESSAGE_CONTENT","delta":"hmm"}`,
			want: &events.ThinkingTextMessageContentEvent{BaseEvent: codecBase(events.EventTypeThinkingTextMessageContent), Delta: "hmm"},
		},
		{
			name: "THINKING_TEXT_MESSAGE_END",
			in:   `{"type":"THINKING_TEXT_MESSAGE_END"}`,
			want: &events.ThinkingTextMessageEndEvent{BaseEvent: codecBase(events.EventTypeThinkingTextMessageEnd)},
		},
		{
			name: "REASONING_START",
			in:   `{"type":"REASONING_START","messageId":"r1"}`,
			want: &events.ReasoningStartEvent{BaseEvent: codecBase(events.EventTypeReasoningStart), MessageID: "r1"},
		},
		{
			name: "REASONING_MESSAGE_START",
			in:   `{"type":"REASONING_MESSAGE_START","messageId":"r1","role":"reasoning"}`,
			want: &events.ReasoningMessageStartEvent{BaseEvent: codecBase(events.EventTypeReasoningMessageStart), MessageID: "r1", Role: "reasoning"},
		},
		{
			name: "REASONING_MESSAGE_CONTENT",
			in:   `{"type":"REASONING_MESSAGE_CONTENT","messageId":"r1","delta":"so"}`,
			want: &events.ReasoningMessageContentEvent{BaseEvent: codecBase(events.EventTypeReasoningMessageContent), MessageID: "r1", Delta: "so"},
		},
		{
			name: "REASONING_MESSAGE_END",
			in:   `{"type":"REASONING_MESSAGE_END","messageId":"r1"}`,
			want: &events.ReasoningMessageEndEvent{BaseEvent: codecBase(events.EventTypeReasoningMessageEnd), MessageID: "r1"},
		},
		{
			name: "REASONING_MESSAGE_CHUNK",
			in:   `{"type":"REASONING_MESSAGE_CHUNK","messageId":"r1","delta":"so"}`,
			want: &events.ReasoningMessageChunkEvent{BaseEvent: codecBase(events.EventTypeReasoningMessageChunk), MessageID: codecStr("r1"), Delta: codecStr("so")},
		},
		{
			name: "REASONING_END",
			in:   `{"type":"REASONING_END","messageId":"r1"}`,
			want: &events.ReasoningEndEvent{BaseEvent: codecBase(events.EventTypeReasoningEnd), MessageID: "r1"},
		},
		{
			name: "REASONING_ENCRYPTED_VALUE",
			in:   `{"type":"REASONING_ENCRYPTED_VALUE","subtype":"message","entityId":"m1","encryptedValue":"b64=="}`,
			want: &events.ReasoningEncryptedValueEvent{BaseEvent: codecBase(events.EventTypeReasoningEncryptedValue), Subtype: events.ReasoningEncryptedValueSubtypeMessage, EntityID: "m1", EncryptedValue: "b64=="},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := agui.DecodeEvent([]byte(tt.in))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			// Whatever path DecodeEvent took, it agrees with encoding/json.
			ref := reflect.New(reflect.TypeOf(got).Elem()).Interface()
			require.NoError(t, json.Unmarshal([]byte(tt.in), ref))
			assert.Equal(t, ref, got)
		})
	}
}

func TestDecodeEventDoesNotValidate(t *testing.T) {
	ev, err := agui.DecodeEvent([]byte(`{"type":"TEXT_MESSAGE_CONTENT"}`))
	require.NoError(t, err)
	assert.Equal(t, &events.TextMessageContentEvent{BaseEvent: codecBase(events.EventTypeTextMessageContent)}, ev)
	assert.EqualError(t, ev.Validate(), "TextMessageContentEvent validation failed: messageId field is required")
}

func TestDecodeEventUnknownType(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		wantType events.EventType
		wantJSON string
	}{
		{
			name:     "newer protocol event",
			in:       "{ \"type\": \"META_EVENT\", \"payload\": {\"a\": [1, 2]} }\n",
			wantType: "META_EVENT",
			wantJSON: `{"type":"META_EVENT","payload":{"a":[1,2]}}`,
		},
		{
			name:     "the SDK's UNKNOWN placeholder",
			in:       `{"type":"UNKNOWN"}`,
			wantType: events.EventTypeUnknown,
			wantJSON: `{"type":"UNKNOWN"}`,
		},
		{
			name:     "lower-case spelling of a known type",
			in:       `{"type":"text_message_content","delta":"x"}`,
			wantType: "text_message_content",
			wantJSON: `{"type":"text_message_content","delta":"x"}`,
		},
		{
			name:     "escaped type",
			in:       `{"type":"X\u00e9\n","a":"<&>"}`,
			wantType: "Xé\n",
			wantJSON: `{"type":"X\u00e9\n","a":"<&>"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := []byte(tt.in)
			ev, err := agui.DecodeEvent(in)
			require.NoError(t, err)
			u, ok := ev.(*agui.UnknownEvent)
			require.True(t, ok, "got %T", ev)
			assert.Equal(t, tt.wantType, u.Type())
			assert.Equal(t, tt.in, string(u.Raw))
			assert.NoError(t, u.Validate())
			raw, err := u.ToJSON()
			require.NoError(t, err)
			assert.Equal(t, tt.in, string(raw))

			out, err := agui.AppendEvent([]byte("x"), ev)
			require.NoError(t, err)
			assert.Equal(t, "x"+tt.wantJSON, string(out))
			assert.Equal(t, tt.wantJSON, codecEncoderJSON(t, ev), "encoding/json agrees through MarshalJSON")

			// Raw is a copy: the reader may reuse its buffer.
			for i := range in {
				in[i] = ' '
			}
			assert.Equal(t, tt.in, string(u.Raw))
		})
	}
}

func TestDecodeEventErrors(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		wantErr   string
		wantType  events.EventType
		wantField string
		syntax    bool // the error unwraps to a *json.SyntaxError
		// What Go 1.27's encoding/json says instead (its messages name
		// things differently; the error is the same).
		or, orField string
	}{
		{name: "empty", in: "", wantErr: "agui: AG-UI event: malformed JSON at byte 0: unexpected end of JSON input", syntax: true},
		{name: "blank", in: " \n", wantErr: "agui: AG-UI event: malformed JSON at byte 2: unexpected end of JSON input", syntax: true},
		{name: "not JSON", in: "data: {}", wantErr: "agui: AG-UI event: malformed JSON at byte 1: invalid character 'd' looking for beginning of value", syntax: true},
		{name: "array", in: `[{"type":"RUN_STARTED"}]`, wantErr: "agui: AG-UI event: not a JSON object (got array)"},
		{name: "string", in: `"RUN_STARTED"`, wantErr: "agui: AG-UI event: not a JSON object (got string)"},
		{name: "null", in: `null`, wantErr: "agui: AG-UI event: not a JSON object (got null)"},
		{name: "number", in: ` 42 `, wantErr: "agui: AG-UI event: not a JSON object (got number)"},
		{name: "truncated", in: `{"type":"TEXT_MESSAGE_CONTENT","delta":"ab`, wantType: events.EventTypeTextMessageContent, syntax: true,
			wantErr: "agui: AG-UI TEXT_MESSAGE_CONTENT event: malformed JSON at byte 42: unexpected end of JSON input"},
		{name: "trailing data", in: `{"type":"TEXT_MESSAGE_CONTENT","delta":"ab"} {}`, wantType: events.EventTypeTextMessageContent, syntax: true,
			wantErr: "agui: AG-UI TEXT_MESSAGE_CONTENT event: malformed JSON at byte 46: invalid character '{' after top-level value"},
		{name: "control character in a string", in: "{\"type\":\"TEXT_MESSAGE_CONTENT\",\"delta\":\"a\tb\"}", wantType: events.EventTypeTextMessageContent, syntax: true,
			wantErr: "agui: AG-UI TEXT_MESSAGE_CONTENT event: malformed JSON at byte 42: invalid character '\\t' in string literal",
			or:      "agui: AG-UI TEXT_MESSAGE_CONTENT event: malformed JSON at byte 42: invalid character '\\t' in string"},
		{name: "bad escape", in: `{"type":"TOOL_CALL_ARGS","delta":"\'"}`, wantType: events.EventTypeToolCallArgs, syntax: true,
			wantErr: "agui: AG-UI TOOL_CALL_ARGS event: malformed JSON at byte 36: invalid character '\\'' in string escape code",
			or:      "agui: AG-UI TOOL_CALL_ARGS event: malformed JSON at byte 36: invalid escape sequence `\\'` in string"},
		{name: "leading zero", in: `{"type":"TOOL_CALL_ARGS","timestamp":01}`, wantType: events.EventTypeToolCallArgs, syntax: true,
			wantErr: "agui: AG-UI TOOL_CALL_ARGS event: malformed JSON at byte 39: invalid character '1' after object key:value pair"},
		{name: "trailing comma", in: `{"type":"RUN_STARTED",}`, wantType: events.EventTypeRunStarted, syntax: true,
			wantErr: "agui: AG-UI RUN_STARTED event: malformed JSON at byte 23: invalid character '}' looking for beginning of object key string"},
		{name: "unknown type, malformed", in: `{"type":"NEW_THING","a":[1,}`, wantType: "NEW_THING", syntax: true,
			wantErr: "agui: AG-UI NEW_THING event: malformed JSON at byte 28: invalid character '}' looking for beginning of value"},
		{name: "missing type, malformed", in: `{"a":tru}`, syntax: true,
			wantErr: "agui: AG-UI event: malformed JSON at byte 9: invalid character '}' in literal true (expecting 'e')"},
		{name: "missing type", in: `{"messageId":"m1","delta":"x"}`, wantField: "type",
			wantErr: `agui: AG-UI event: type: missing`},
		{name: "empty object", in: `{}`, wantField: "type", wantErr: `agui: AG-UI event: type: missing`},
		{name: "null type", in: `{"type":null}`, wantField: "type", wantErr: `agui: AG-UI event: type: expected a string, got null`},
		{name: "empty type", in: `{"type":""}`, wantField: "type", wantErr: `agui: AG-UI event: type: must not be empty`},
		{name: "number type", in: `{"type":5}`, wantField: "type", wantErr: `agui: AG-UI event: type: expected a string, got number`},
		{name: "object type", in: `{"Type":{"name":"RUN_STARTED"}}`, wantField: "type", wantErr: `agui: AG-UI event: type: expected a string, got object`},
		{name: "array type besides a good one", in: `{"type":"RUN_STARTED","type":["x"]}`, wantField: "type", wantErr: `agui: AG-UI event: type: expected a string, got array`},
		{name: "wrong delta", in: `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":5}`, wantType: events.EventTypeTextMessageContent, wantField: "delta",
			wantErr: `agui: AG-UI TEXT_MESSAGE_CONTENT event: delta: expected a string, got number`},
		{name: "wrong delta bool", in: `{"type":"TOOL_CALL_ARGS","delta":true}`, wantType: events.EventTypeToolCallArgs, wantField: "delta",
			wantErr: `agui: AG-UI TOOL_CALL_ARGS event: delta: expected a string, got boolean`},
		{name: "fractional timestamp", in: `{"type":"TEXT_MESSAGE_CONTENT","timestamp":1.5}`, wantType: events.EventTypeTextMessageContent, wantField: "timestamp",
			wantErr: `agui: AG-UI TEXT_MESSAGE_CONTENT event: timestamp: expected an integer, got number 1.5`},
		{name: "timestamp out of range", in: `{"type":"REASONING_MESSAGE_CONTENT","timestamp":9223372036854775808}`, wantType: events.EventTypeReasoningMessageContent, wantField: "timestamp",
			wantErr: `agui: AG-UI REASONING_MESSAGE_CONTENT event: timestamp: expected an integer, got number 9223372036854775808`},
		{name: "string timestamp", in: `{"type":"RUN_STARTED","timestamp":"2024-01-01"}`, wantType: events.EventTypeRunStarted, wantField: "timestamp",
			wantErr: `agui: AG-UI RUN_STARTED event: timestamp: expected an integer, got string`},
		{name: "chunk with object delta", in: `{"type":"TOOL_CALL_CHUNK","delta":{"q":1}}`, wantType: events.EventTypeToolCallChunk, wantField: "delta",
			wantErr: `agui: AG-UI TOOL_CALL_CHUNK event: delta: expected a string, got object`},
		{name: "patch op of wrong type", in: `{"type":"STATE_DELTA","delta":[{"op":5,"path":"/a"}]}`, wantType: events.EventTypeStateDelta, wantField: "delta.op",
			wantErr: `agui: AG-UI STATE_DELTA event: delta.op: expected a string, got number`,
			or:      `agui: AG-UI STATE_DELTA event: delta.0.op: expected a string, got number`, orField: "delta.0.op"},
		{name: "messages not an array", in: `{"type":"MESSAGES_SNAPSHOT","messages":{}}`, wantType: events.EventTypeMessagesSnapshot, wantField: "messages",
			wantErr: `agui: AG-UI MESSAGES_SNAPSHOT event: messages: expected an array, got object`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := agui.DecodeEvent([]byte(tt.in))
			require.Error(t, err)
			assert.Nil(t, ev)
			wantErr, wantField := tt.wantErr, tt.wantField
			if tt.or != "" && err.Error() == tt.or {
				wantErr = tt.or
				if tt.orField != "" {
					wantField = tt.orField
				}
			}
			assert.EqualError(t, err, wantErr)
			var de *agui.EventDecodeError
			require.ErrorAs(t, err, &de)
			assert.Equal(t, tt.wantType, de.Type)
			assert.Equal(t, wantField, de.Field)
			var se *json.SyntaxError
			assert.Equal(t, tt.syntax, errors.As(err, &se), "unwraps to *json.SyntaxError")
		})
	}
}

// codecFastPathEvents has one event per AppendEvent fast path, with every
// optional field set, and strings that need escaping.
func codecFastPathEvents() []events.Event {
	const nasty = "<a href=\"x\">&amp;</a> \\ / \x00\x01\x1f\x7f \b\f\n\r\t é 😀 \u2028\u2029 \xff\xc3( end"
	return []events.Event{
		&events.RunStartedEvent{BaseEvent: codecBaseAt(events.EventTypeRunStarted, 1700000000123), ThreadIDValue: "t1", RunIDValue: nasty},
		&events.RunFinishedEvent{BaseEvent: codecBase(events.EventTypeRunFinished), ThreadIDValue: "t1", RunIDValue: "r1"},
		&events.RunFinishedEvent{BaseEvent: codecBaseAt(events.EventTypeRunFinished, -1), ThreadIDValue: "t1", RunIDValue: "r1",
			Outcome: &events.RunFinishedOutcome{Type: events.RunFinishedOutcomeTypeSuccess}},
		&events.RunFinishedEvent{BaseEvent: codecBase(events.EventTypeRunFinished), Outcome: &events.RunFinishedOutcome{Type: "x", Interrupts: []types.Interrupt{}}},
		&events.RunErrorEvent{BaseEvent: codecBase(events.EventTypeRunError), Message: nasty},
		&events.RunErrorEvent{BaseEvent: codecBaseAt(events.EventTypeRunError, 0), Code: codecStr(""), Message: "m", RunIDValue: "r1"},
		&events.TextMessageStartEvent{BaseEvent: codecBase(events.EventTypeTextMessageStart), MessageID: "m1"},
		&events.TextMessageStartEvent{BaseEvent: codecBaseAt(events.EventTypeTextMessageStart, 9), MessageID: "m1", Role: codecStr("assistant")},
		&events.TextMessageContentEvent{BaseEvent: codecBase(events.EventTypeTextMessageContent), MessageID: "m1", Delta: nasty},
		&events.TextMessageContentEvent{BaseEvent: codecBaseAt(events.EventTypeTextMessageContent, -9223372036854775808)},
		&events.TextMessageEndEvent{BaseEvent: codecBase(events.EventTypeTextMessageEnd), MessageID: nasty},
		&events.ReasoningStartEvent{BaseEvent: codecBase(events.EventTypeReasoningStart), MessageID: "r1"},
		&events.ReasoningEndEvent{BaseEvent: codecBaseAt(events.EventTypeReasoningEnd, 1), MessageID: "r1"},
		&events.ReasoningMessageStartEvent{BaseEvent: codecBase(events.EventTypeReasoningMessageStart), MessageID: "r1", Role: "reasoning"},
		&events.ReasoningMessageContentEvent{BaseEvent: codecBase(events.EventTypeReasoningMessageContent), MessageID: "r1", Delta: nasty},
		&events.ReasoningMessageEndEvent{BaseEvent: codecBase(events.EventTypeReasoningMessageEnd), MessageID: "r1"},
		&events.ToolCallStartEvent{BaseEvent: codecBase(events.EventTypeToolCallStart), ToolCallID: "c1", ToolCallName: "search"},
		&events.ToolCallStartEvent{BaseEvent: codecBase(events.EventTypeToolCallStart), ToolCallID: "c1", ToolCallName: "search", ParentMessageID: codecStr("m1")},
		&events.ToolCallArgsEvent{BaseEvent: codecBase(events.EventTypeToolCallArgs), ToolCallID: "c1", Delta: `{"q":"<b> & \"x\""}`},
		&events.ToolCallEndEvent{BaseEvent: codecBaseAt(events.EventTypeToolCallEnd, 3), ToolCallID: "c1"},
		&events.ToolCallResultEvent{BaseEvent: codecBase(events.EventTypeToolCallResult), MessageID: "m2", ToolCallID: "c1", Content: nasty},
		&events.ToolCallResultEvent{BaseEvent: codecBase(events.EventTypeToolCallResult), MessageID: "m2", ToolCallID: "c1", Content: "", Role: codecStr("tool")},
		// The struct's EventType is written as is, even when it is not
		// the struct's usual type.
		&events.TextMessageContentEvent{BaseEvent: codecBase("not\"the<type>"), MessageID: "m1", Delta: "d"},
	}
}

func TestAppendEventFastPathsMatchEncoder(t *testing.T) {
	for i, ev := range codecFastPathEvents() {
		t.Run(fmt.Sprintf("%d_%s", i, ev.Type()), func(t *testing.T) {
			want := codecEncoderJSON(t, ev)
			got, err := agui.AppendEvent([]byte("prefix|"), ev)
			require.NoError(t, err)
			assert.Equal(t, "prefix|"+want, sameJSON(string(got)))
			assert.NotContains(t, string(got), `\u003c`, "never HTML-escaped")
		})
	}
}

func TestAppendEventFastPathsDoNotAllocate(t *testing.T) {
	for i, ev := range codecFastPathEvents() {
		t.Run(fmt.Sprintf("%d_%s", i, ev.Type()), func(t *testing.T) {
			dst := make([]byte, 0, 4096)
			allocs := testing.AllocsPerRun(100, func() {
				var err error
				dst, err = agui.AppendEvent(dst[:0], ev)
				if err != nil {
					t.Fatal(err)
				}
			})
			assert.Zero(t, allocs)
		})
	}
}

func TestAppendEventEscapesLikeEncodingJSON(t *testing.T) {
	var cases []string
	for b := range 256 {
		cases = append(cases, string([]byte{'a', byte(b), 'z'}))
	}
	cases = append(cases, "\u2028", "\u2029", "\u2027\u202a", "\U0010ffff", "\xed\xa0\x80", "\xf4\x90\x80\x80",
		"\xe2\x80", "\xe2\x80\xa8\xe2", "\uFFFD", "", strings.Repeat("<>&", 100))
	for _, s := range cases {
		ev := &events.TextMessageContentEvent{BaseEvent: codecBase(events.EventTypeTextMessageContent), MessageID: s, Delta: s}
		got, err := agui.AppendEvent(nil, ev)
		require.NoError(t, err)
		require.Equal(t, codecEncoderJSON(t, ev), sameJSON(string(got)), "string %q", s)
	}
}

func TestAppendEventFallsBackToEncoder(t *testing.T) {
	tests := []struct {
		name string
		ev   events.Event
	}{
		{"RUN_FINISHED with result", &events.RunFinishedEvent{BaseEvent: codecBase(events.EventTypeRunFinished), ThreadIDValue: "t1", RunIDValue: "r1", Result: map[string]any{"html": "<b>"}}},
		{"RUN_FINISHED with interrupts", &events.RunFinishedEvent{BaseEvent: codecBase(events.EventTypeRunFinished), Outcome: &events.RunFinishedOutcome{
			Type: events.RunFinishedOutcomeTypeInterrupt, Interrupts: []types.Interrupt{{ID: "i1", Reason: "tool_call", Metadata: map[string]any{"b": 1, "a": "<"}}},
		}}},
		{"fast type with rawEvent", &events.TextMessageContentEvent{BaseEvent: &events.BaseEvent{EventType: events.EventTypeTextMessageContent, RawEvent: map[string]any{"x": "&"}}, MessageID: "m1", Delta: "d"}},
		{"TOOL_CALL_CHUNK", &events.ToolCallChunkEvent{BaseEvent: codecBase(events.EventTypeToolCallChunk), ToolCallID: codecStr("c1"), Delta: codecStr("{\"a\"")}},
		{"MESSAGES_SNAPSHOT", &events.MessagesSnapshotEvent{BaseEvent: codecBase(events.EventTypeMessagesSnapshot), Messages: []types.Message{{ID: "u1", Role: types.RoleUser, Content: "<hi>"}}}},
		{"STATE_DELTA", &events.StateDeltaEvent{BaseEvent: codecBaseAt(events.EventTypeStateDelta, 4), Delta: []events.JSONPatchOperation{{Op: "add", Path: "/a", Value: "\u2028"}}}},
		{"THINKING_END", &events.ThinkingEndEvent{BaseEvent: codecBase(events.EventTypeThinkingEnd)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := agui.AppendEvent([]byte("prefix|"), tt.ev)
			require.NoError(t, err)
			assert.Equal(t, "prefix|"+codecEncoderJSON(t, tt.ev), string(got))
		})
	}
}

func TestAppendEventErrors(t *testing.T) {
	tests := []struct {
		name    string
		ev      events.Event
		wantIs  error
		wantErr string
	}{
		{name: "nil", ev: nil, wantIs: agui.ErrNilEvent, wantErr: "agui: nil AG-UI event"},
		{name: "nil fast-path pointer", ev: (*events.TextMessageContentEvent)(nil), wantIs: agui.ErrNilEvent, wantErr: "agui: nil AG-UI event"},
		{name: "nil slow-path pointer", ev: (*events.StateSnapshotEvent)(nil), wantIs: agui.ErrNilEvent, wantErr: "agui: nil AG-UI event"},
		{name: "nil unknown event", ev: (*agui.UnknownEvent)(nil), wantIs: agui.ErrNilEvent, wantErr: "agui: nil AG-UI event"},
		{name: "fast path, nil BaseEvent", ev: &events.ToolCallArgsEvent{ToolCallID: "c1"}, wantIs: agui.ErrNilBaseEvent,
			wantErr: "agui: AG-UI event with a nil BaseEvent (*events.ToolCallArgsEvent)"},
		{name: "slow path, nil BaseEvent", ev: &events.CustomEvent{Name: "x"}, wantIs: agui.ErrNilBaseEvent,
			wantErr: "agui: AG-UI event with a nil BaseEvent (*events.CustomEvent)"},
		{name: "unknown event, nil BaseEvent", ev: &agui.UnknownEvent{Raw: json.RawMessage(`{}`)}, wantIs: agui.ErrNilBaseEvent,
			wantErr: "agui: AG-UI event with a nil BaseEvent (*agui.UnknownEvent)"},
		{name: "unknown event, bad raw", ev: &agui.UnknownEvent{BaseEvent: codecBase("X"), Raw: json.RawMessage(`{"a":}`)},
			wantErr: "agui: encode AG-UI X event: raw JSON: invalid character '}' looking for beginning of value"},
		{name: "unencodable value", ev: &events.CustomEvent{BaseEvent: codecBase(events.EventTypeCustom), Name: "x", Value: func() {}},
			wantErr: "agui: encode AG-UI CUSTOM event: json: unsupported type: func()"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := []byte("keep")
			got, err := agui.AppendEvent(dst, tt.ev)
			assert.EqualError(t, err, tt.wantErr)
			if tt.wantIs != nil {
				assert.ErrorIs(t, err, tt.wantIs)
			}
			assert.Equal(t, "keep", string(got))
		})
	}
}

// codecRoundTripEvents holds one event of every type, with values that
// survive JSON unchanged (numbers as float64, objects as map[string]any).
func codecRoundTripEvents() []events.Event {
	var evs []events.Event
	for _, ev := range codecFastPathEvents() {
		switch ev := ev.(type) {
		case *events.RunFinishedEvent:
			if ev.Outcome != nil && ev.Outcome.Interrupts != nil {
				continue // omitempty: an empty list reads back as nil
			}
		case *events.TextMessageContentEvent:
			if ev.Type() != events.EventTypeTextMessageContent {
				continue // a mislabelled event reads back as its label says
			}
		}
		evs = append(evs, ev)
	}
	return append(evs,
		&events.RunFinishedEvent{BaseEvent: codecBase(events.EventTypeRunFinished), ThreadIDValue: "t1", RunIDValue: "r1", Result: []any{"ok", 1.5, nil, true}},
		&events.RunFinishedEvent{BaseEvent: codecBase(events.EventTypeRunFinished), Outcome: &events.RunFinishedOutcome{
			Type: events.RunFinishedOutcomeTypeInterrupt, Interrupts: []types.Interrupt{{ID: "i1", Reason: "tool_call", ResponseSchema: map[string]any{"type": "object"}}},
		}},
		&events.StepStartedEvent{BaseEvent: codecBase(events.EventTypeStepStarted), StepName: "s"},
		&events.StepFinishedEvent{BaseEvent: codecBase(events.EventTypeStepFinished), StepName: "s"},
		&events.TextMessageChunkEvent{BaseEvent: codecBase(events.EventTypeTextMessageChunk), Delta: codecStr("")},
		&events.ToolCallChunkEvent{BaseEvent: codecBaseAt(events.EventTypeToolCallChunk, 5), ToolCallID: codecStr("c1"), ToolCallName: codecStr("f"), ParentMessageID: codecStr("m1"), Delta: codecStr("{")},
		&events.StateSnapshotEvent{BaseEvent: codecBase(events.EventTypeStateSnapshot), Snapshot: map[string]any{"a": []any{1.0, "b"}}},
		&events.StateDeltaEvent{BaseEvent: codecBase(events.EventTypeStateDelta), Delta: []events.JSONPatchOperation{{Op: "remove", Path: "/a"}}},
		&events.MessagesSnapshotEvent{BaseEvent: codecBase(events.EventTypeMessagesSnapshot), Messages: []types.Message{
			{ID: "s1", Role: types.RoleSystem, Content: "be brief"},
			{ID: "a1", Role: types.RoleAssistant, Content: "x", ToolCalls: []types.ToolCall{{ID: "c1", Type: "function", Function: types.FunctionCall{Name: "f", Arguments: `{"a":1}`}}}},
		}},
		&events.ActivitySnapshotEvent{BaseEvent: codecBase(events.EventTypeActivitySnapshot), MessageID: "a1", ActivityType: "PLAN", Content: map[string]any{}, Replace: codecBool(true)},
		&events.ActivityDeltaEvent{BaseEvent: codecBase(events.EventTypeActivityDelta), MessageID: "a1", ActivityType: "PLAN", Patch: []events.JSONPatchOperation{{Op: "test", Path: "/x", Value: false}}},
		&events.RawEvent{BaseEvent: codecBase(events.EventTypeRaw), Event: "anything"},
		&events.CustomEvent{BaseEvent: &events.BaseEvent{EventType: events.EventTypeCustom, RawEvent: map[string]any{"k": "v"}}, Name: "n", Value: 3.0},
		&events.ThinkingStartEvent{BaseEvent: codecBase(events.EventTypeThinkingStart), Title: codecStr("t")},
		&events.ThinkingEndEvent{BaseEvent: codecBase(events.EventTypeThinkingEnd)},
		&events.ThinkingTextMessageStartEvent{BaseEvent: codecBase(events.EventTypeThinkingTextMessageStart)},
		&events.ThinkingTextMessageContentEvent{BaseEvent: codecBase(events.EventTypeThinkingTextMessageContent), Delta: "d"},
		&events.ThinkingTextMessageEndEvent{BaseEvent: codecBase(events.EventTypeThinkingTextMessageEnd)},
		&events.ReasoningMessageChunkEvent{BaseEvent: codecBase(events.EventTypeReasoningMessageChunk), MessageID: codecStr("r1")},
		&events.ReasoningEncryptedValueEvent{BaseEvent: codecBase(events.EventTypeReasoningEncryptedValue), Subtype: events.ReasoningEncryptedValueSubtypeToolCall, EntityID: "c1", EncryptedValue: "zz"},
	)
}

func TestEventRoundTrip(t *testing.T) {
	for i, ev := range codecRoundTripEvents() {
		t.Run(fmt.Sprintf("%d_%s", i, ev.Type()), func(t *testing.T) {
			data, err := agui.AppendEvent(nil, ev)
			require.NoError(t, err)
			got, err := agui.DecodeEvent(data)
			require.NoError(t, err)
			want := ev
			if strings.ContainsRune(string(data), utf8.RuneError) || strings.Contains(string(data), `\ufffd`) {
				// Invalid UTF-8 does not survive JSON: compare with what
				// encoding/json reads back.
				want = reflect.New(reflect.TypeOf(ev).Elem()).Interface().(events.Event)
				require.NoError(t, json.Unmarshal(data, want))
			}
			assert.Equal(t, want, got)
		})
	}
}

func TestDecodeEventFastPathAllocations(t *testing.T) {
	in := []byte(`{"type":"TEXT_MESSAGE_CONTENT","timestamp":1700000000000,"messageId":"msg_01","delta":"Hello, \"world\"\n"}`)
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := agui.DecodeEvent(in); err != nil {
			t.Fatal(err)
		}
	})
	// One for the event with its BaseEvent and timestamp, one for the two
	// strings.
	assert.LessOrEqual(t, allocs, 2.0)
}

func ExampleDecodeEvent() {
	for _, line := range []string{
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Hi"}`,
		`{"type":"TOOL_CALL_CHUNK","toolCallId":"c1","delta":"{}"}`,
		`{"type":"SOMETHING_NEWER","x":1}`,
	} {
		ev, err := agui.DecodeEvent([]byte(line))
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		switch ev := ev.(type) {
		case *events.TextMessageContentEvent:
			fmt.Printf("text %s: %q\n", ev.MessageID, ev.Delta)
		case *events.ToolCallChunkEvent:
			fmt.Printf("tool call chunk %s: %s\n", *ev.ToolCallID, *ev.Delta)
		case *agui.UnknownEvent:
			fmt.Printf("skipping unknown event %s\n", ev.Type())
		}
	}
	// Output:
	// text m1: "Hi"
	// tool call chunk c1: {}
	// skipping unknown event SOMETHING_NEWER
}

func ExampleAppendEvent() {
	ts := int64(1700000000000)
	ev := &events.TextMessageContentEvent{
		BaseEvent: &events.BaseEvent{EventType: events.EventTypeTextMessageContent, TimestampMs: &ts},
		MessageID: "m1",
		Delta:     "<b>bold</b> & more\n",
	}
	buf := make([]byte, 0, 512) // reuse it across events: no allocation
	buf, err := agui.AppendEvent(buf[:0], ev)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(buf))
	// Output:
	// {"type":"TEXT_MESSAGE_CONTENT","timestamp":1700000000000,"messageId":"m1","delta":"<b>bold</b> & more\n"}
}
