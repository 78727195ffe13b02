package aap_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
)

// captureEvents are the distinct events of the reference server captures:
// the event: name and the data: line, copied byte for byte.
var captureEvents = []struct {
	name  string // test name
	event string
	data  string
	want  aap.Event
}{
	{name: "turn_start", event: "turn_start", data: `{}`, want: &aap.TurnStart{}},
	{name: "text_delta", event: "text_delta", data: `{"delta":"Hello! You said: "}`, want: &aap.TextDelta{Delta: "Hello! You said: "}},
	{name: "text_delta non-ASCII", event: "text_delta", data: `{"delta":"says: Tokyo: 18°C, "}`, want: &aap.TextDelta{Delta: "says: Tokyo: 18°C, "}},
	{name: "text_delta escaped quote", event: "text_delta", data: `{"delta":"Search result: \"Top "}`, want: &aap.TextDelta{Delta: `Search result: "Top `}},
	{name: "text_delta trailing quote", event: "text_delta", data: `{"delta":"(agentapplicationprotocol.com)\""}`, want: &aap.TextDelta{Delta: `(agentapplicationprotocol.com)"`}},
	{name: "thinking_delta", event: "thinking_delta", data: `{"delta":"The user asked "}`, want: &aap.ThinkingDelta{Delta: "The user asked "}},
	{name: "text", event: "text", data: `{"text":"The weather tool says: Tokyo: 18°C, partly cloudy"}`, want: &aap.Text{Text: "The weather tool says: Tokyo: 18°C, partly cloudy"}},
	{
		name: "tool_call", event: "tool_call", data: `{"toolCallId":"call_001","name":"get_weather","input":{"location":"Tokyo"}}`,
		want: &aap.ToolCall{ToolCallID: "call_001", Name: "get_weather", Input: json.RawMessage(`{"location":"Tokyo"}`)},
	},
	{
		name: "tool_result", event: "tool_result", data: `{"toolCallId":"call_004","content":"\"Top result for dogs: AAP is the Agent Application Protocol (agentapplicationprotocol.com)\""}`,
		want: &aap.ToolResult{ToolCallID: "call_004", Content: aap.TextContent(`"Top result for dogs: AAP is the Agent Application Protocol (agentapplicationprotocol.com)"`)},
	},
	{name: "turn_stop end_turn", event: "turn_stop", data: `{"stopReason":"end_turn"}`, want: &aap.TurnStop{StopReason: aap.StopEndTurn}},
	{name: "turn_stop tool_use", event: "turn_stop", data: `{"stopReason":"tool_use"}`, want: &aap.TurnStop{StopReason: aap.StopToolUse}},
}

func TestDecodeEventCaptures(t *testing.T) {
	for _, tt := range captureEvents {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := aap.DecodeEvent(tt.event, []byte(tt.data))
			require.NoError(t, err)
			assert.Equal(t, tt.want, ev)
			assert.Equal(t, aap.EventName(tt.event), ev.EventName())
		})
	}
}

func TestAppendDataMatchesCaptures(t *testing.T) {
	for _, tt := range captureEvents {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.want.AppendData(nil)
			require.NoError(t, err)
			assert.Equal(t, tt.data, string(got))
		})
	}
}

func TestAppendDataAppends(t *testing.T) {
	for _, tt := range captureEvents {
		t.Run(tt.name, func(t *testing.T) {
			dst := []byte("data: ")
			got, err := tt.want.AppendData(dst)
			require.NoError(t, err)
			assert.Equal(t, "data: "+tt.data, string(got))
		})
	}
}

func TestAppendData(t *testing.T) {
	tests := []struct {
		name string
		ev   aap.Event
		want string
	}{
		{name: "empty delta", ev: &aap.TextDelta{}, want: `{"delta":""}`},
		{name: "control characters escaped", ev: &aap.TextDelta{Delta: "a\nb\tc\"d\\e\x01"}, want: `{"delta":"a\nb\tc\"d\\e\u0001"}`},
		{name: "HTML characters kept", ev: &aap.Text{Text: "<b>&</b>"}, want: `{"text":"<b>&</b>"}`},
		{name: "line separators escaped", ev: &aap.Thinking{Thinking: "a\u2028b\u2029c"}, want: `{"thinking":"a\u2028b\u2029c"}`},
		{name: "invalid UTF-8 replaced", ev: &aap.ThinkingDelta{Delta: "a\xffb"}, want: "{\"delta\":\"a\uFFFDb\"}"},
		{name: "tool call without input", ev: &aap.ToolCall{ToolCallID: "c", Name: "n"}, want: `{"toolCallId":"c","name":"n","input":{}}`},
		{name: "tool call input compacted", ev: &aap.ToolCall{ToolCallID: "c", Name: "n", Input: json.RawMessage("{\n \"b\": 1,\n \"a\": [1e400, 9007199254740993]\n}")}, want: `{"toolCallId":"c","name":"n","input":{"b":1,"a":[1e400,9007199254740993]}}`},
		{name: "tool result blocks", ev: &aap.ToolResult{ToolCallID: "c", Content: aap.BlockContent(&aap.TextBlock{Text: "18°C"}, &aap.ImageBlock{URL: "https://x/m.png"})}, want: `{"toolCallId":"c","content":[{"type":"text","text":"18°C"},{"type":"image","url":"https://x/m.png"}]}`},
		{name: "tool result empty blocks", ev: &aap.ToolResult{ToolCallID: "c", Content: aap.BlockContent()}, want: `{"toolCallId":"c","content":[]}`},
		{name: "turn_stop error", ev: &aap.TurnStop{StopReason: aap.StopError}, want: `{"stopReason":"error"}`},
		{name: "unknown event compacted", ev: &aap.UnknownEvent{Name: "usage", Data: json.RawMessage(`{ "tokens" : 12 }`)}, want: `{"tokens":12}`},
		{name: "unknown event without data", ev: &aap.UnknownEvent{Name: "ping"}, want: `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.ev.AppendData(nil)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
			assert.True(t, json.Valid(got), "AppendData wrote invalid JSON")
		})
	}
}

func TestAppendDataErrors(t *testing.T) {
	tests := []struct {
		name    string
		ev      aap.Event
		wantErr error // nil: any error
	}{
		{name: "tool call input an array", ev: &aap.ToolCall{ToolCallID: "c", Name: "n", Input: json.RawMessage(`[1]`)}, wantErr: aap.ErrInputNotObject},
		{name: "tool call input a string", ev: &aap.ToolCall{ToolCallID: "c", Name: "n", Input: json.RawMessage(`"x"`)}, wantErr: aap.ErrInputNotObject},
		{name: "tool call input malformed", ev: &aap.ToolCall{ToolCallID: "c", Name: "n", Input: json.RawMessage(`{"a":}`)}, wantErr: aap.ErrInputNotObject},
		{name: "tool call input with trailing data", ev: &aap.ToolCall{ToolCallID: "c", Name: "n", Input: json.RawMessage(`{"a":1}{"b":2}`)}, wantErr: aap.ErrInputNotObject},
		{name: "unknown event malformed", ev: &aap.UnknownEvent{Name: "x", Data: json.RawMessage(`{nope`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.ev.AppendData(nil)
			require.Error(t, err)
			if tt.wantErr != nil {
				assert.True(t, errors.Is(err, tt.wantErr), "got %v", err)
			}
		})
	}
}

func TestDecodeEventUnknown(t *testing.T) {
	data := []byte(`{"tokens": 12}`)
	ev, err := aap.DecodeEvent("usage", data)
	require.NoError(t, err)
	u, ok := ev.(*aap.UnknownEvent)
	require.True(t, ok, "got %T", ev)
	assert.Equal(t, aap.EventName("usage"), u.EventName())
	assert.Equal(t, `{"tokens": 12}`, string(u.Data))

	data[0] = 'X' // the event keeps its own copy
	assert.Equal(t, `{"tokens": 12}`, string(u.Data))

	got, err := u.AppendData(nil)
	require.NoError(t, err)
	assert.Equal(t, `{"tokens":12}`, string(got))
}

func TestDecodeEventErrors(t *testing.T) {
	tests := []struct {
		event string
		data  string
		want  string
	}{
		{event: "turn_start", data: `[]`, want: `aap: turn_start: data must be a JSON object`},
		{event: "turn_start", data: `{`, want: `aap: turn_start: data is not valid JSON`},
		{event: "turn_start", data: ``, want: `aap: turn_start: data must be a JSON object`},
		{event: "text_delta", data: `{}`, want: `aap: text_delta.delta: required`},
		{event: "text_delta", data: `{"delta":5}`, want: `aap: text_delta.delta: expected a string, got number`},
		{event: "text_delta", data: `"hi"`, want: `aap: text_delta: must be a JSON object`},
		{event: "thinking_delta", data: `{"text":"x"}`, want: `aap: thinking_delta.delta: required`},
		{event: "text", data: `{"delta":"x"}`, want: `aap: text.text: required`},
		{event: "thinking", data: `{}`, want: `aap: thinking.thinking: required`},
		{event: "tool_call", data: `{"name":"n","input":{}}`, want: `aap: tool_call.toolCallId: required`},
		{event: "tool_call", data: `{"toolCallId":"c","input":{}}`, want: `aap: tool_call.name: required`},
		{event: "tool_call", data: `{"toolCallId":"c","name":"n"}`, want: `aap: tool_call.input: required`},
		{event: "tool_call", data: `{"toolCallId":"c","name":"n","input":"{}"}`, want: `aap: tool_call.input: must be a JSON object`},
		{event: "tool_call", data: `{"toolCallId":"c","name":"n","input":[]}`, want: `aap: tool_call.input: must be a JSON object`},
		{event: "tool_result", data: `{"content":"x"}`, want: `aap: tool_result.toolCallId: required`},
		{event: "tool_result", data: `{"toolCallId":"c"}`, want: `aap: tool_result.content: required`},
		{event: "tool_result", data: `{"toolCallId":"c","content":5}`, want: `aap: tool_result.content: must be a string or an array of content blocks`},
		{event: "tool_result", data: `{"toolCallId":"c","content":[{"type":"nope"}]}`, want: `aap: tool_result.content[0].type: unknown content block type "nope"`},
		{event: "turn_stop", data: `{}`, want: `aap: turn_stop.stopReason: required`},
		{event: "turn_stop", data: `{"stopReason":"done"}`, want: `aap: turn_stop.stopReason: unknown stop reason "done"`},
		{event: "turn_stop", data: `null`, want: `aap: turn_stop: must be a JSON object`},
		{event: "turn_stop", data: `{"stopReason":"end_turn"`, want: `aap: turn_stop: malformed JSON at byte 24: unexpected end of JSON input`},
	}
	for _, tt := range tests {
		t.Run(tt.event+" "+tt.data, func(t *testing.T) {
			ev, err := aap.DecodeEvent(tt.event, []byte(tt.data))
			require.EqualError(t, err, tt.want)
			assert.Nil(t, ev)
			var de *aap.DecodeError
			assert.True(t, errors.As(err, &de), "want a *aap.DecodeError, got %T", err)
		})
	}
}

func TestDecodeEventAllStopReasons(t *testing.T) {
	for _, r := range []aap.StopReason{aap.StopEndTurn, aap.StopToolUse, aap.StopMaxTokens, aap.StopRefusal, aap.StopError} {
		t.Run(string(r), func(t *testing.T) {
			assert.True(t, r.Valid())
			ev, err := aap.DecodeEvent("turn_stop", []byte(`{"stopReason":"`+string(r)+`"}`))
			require.NoError(t, err)
			assert.Equal(t, &aap.TurnStop{StopReason: r}, ev)
		})
	}
	assert.False(t, aap.StopReason("").Valid())
	assert.False(t, aap.StopReason("END_TURN").Valid())
}

func TestEventRoundTrip(t *testing.T) {
	events := []aap.Event{
		&aap.TurnStart{},
		&aap.TextDelta{Delta: "a \"quoted\" <tag> & 18°C\n"},
		&aap.ThinkingDelta{Delta: "\u2028"},
		&aap.Text{Text: ""},
		&aap.Thinking{Thinking: "😀"},
		&aap.ToolCall{ToolCallID: "c", Name: "n", Input: json.RawMessage(`{"z":1e400,"a":"\u00e9"}`)},
		&aap.ToolResult{ToolCallID: "c", Content: aap.TextContent("ok")},
		&aap.ToolResult{ToolCallID: "c", Content: aap.BlockContent(&aap.TextBlock{Text: "ok"})},
		&aap.TurnStop{StopReason: aap.StopMaxTokens},
		&aap.UnknownEvent{Name: "usage", Data: json.RawMessage(`{"tokens":12}`)},
	}
	for _, ev := range events {
		t.Run(string(ev.EventName()), func(t *testing.T) {
			data, err := ev.AppendData(nil)
			require.NoError(t, err)
			back, err := aap.DecodeEvent(string(ev.EventName()), data)
			require.NoError(t, err)
			assert.Equal(t, ev, back)
		})
	}
}
