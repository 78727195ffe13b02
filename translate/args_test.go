package translate_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/translate"
)

func TestArgumentsFromInput(t *testing.T) {
	tests := []struct {
		name    string
		input   json.RawMessage
		want    string
		wantErr string
	}{
		{name: "nil input is an empty object", input: nil, want: `{}`},
		{name: "empty input is an empty object", input: json.RawMessage(``), want: `{}`},
		{name: "whitespace-only input is an empty object", input: json.RawMessage(" \n\t\r "), want: `{}`},
		{name: "null is an empty object", input: json.RawMessage(`null`), want: `{}`},
		{name: "null with whitespace is an empty object", input: json.RawMessage(" null\n"), want: `{}`},
		{name: "empty object", input: json.RawMessage(`{}`), want: `{}`},
		{name: "compact object is unchanged", input: json.RawMessage(`{"location":"Tokyo"}`), want: `{"location":"Tokyo"}`},
		{
			name:  "whitespace outside strings is removed, inside kept",
			input: json.RawMessage("{\n  \"q\" : \"a  b\\t c\",\r\n  \"n\" : [ 1 , 2 ]\n}\n"),
			want:  `{"q":"a  b\t c","n":[1,2]}`,
		},
		{name: "key order is kept", input: json.RawMessage(`{"z":1,"a":2,"m":3}`), want: `{"z":1,"a":2,"m":3}`},
		{name: "duplicate keys are kept", input: json.RawMessage(`{"a":1,"a":2}`), want: `{"a":1,"a":2}`},
		{name: "integer beyond 2^53 is kept", input: json.RawMessage(`{"id": 9007199254740993}`), want: `{"id":9007199254740993}`},
		{name: "number spelling is kept", input: json.RawMessage(`{"a":1.0,"b":1e+10,"c":-0,"d":0.1000}`), want: `{"a":1.0,"b":1e+10,"c":-0,"d":0.1000}`},
		{name: "unicode escape stays escaped", input: json.RawMessage(`{"city":"Montr\u00e9al"}`), want: `{"city":"Montr\u00e9al"}`},
		{name: "raw unicode stays raw", input: json.RawMessage(`{"city":"Montréal 東京 🎉"}`), want: `{"city":"Montréal 東京 🎉"}`},
		{name: "html characters are not escaped", input: json.RawMessage(`{"h":"<b>&amp;</b>"}`), want: `{"h":"<b>&amp;</b>"}`},
		{name: "escaped quote and backslash before a space", input: json.RawMessage(`{"s":"a\" \\" , "t" : 1}`), want: `{"s":"a\" \\","t":1}`},
		{name: "array", input: json.RawMessage(`[1,2]`), wantErr: `invalid tool call arguments: not a JSON object (got an array)`},
		{name: "string", input: json.RawMessage(`"x"`), wantErr: `invalid tool call arguments: not a JSON object (got a string)`},
		{name: "number", input: json.RawMessage(`42`), wantErr: `invalid tool call arguments: not a JSON object (got a number)`},
		{name: "boolean", input: json.RawMessage(`true`), wantErr: `invalid tool call arguments: not a JSON object (got a boolean)`},
		{
			name:    "truncated object",
			input:   json.RawMessage(`{"a":`),
			wantErr: `invalid tool call arguments: not valid JSON: unexpected end of JSON input (at byte 5)`,
		},
		{
			name:    "trailing garbage",
			input:   json.RawMessage(`{} x`),
			wantErr: `invalid tool call arguments: not valid JSON: invalid character 'x' after top-level value (at byte 4)`,
		},
		{name: "invalid UTF-8 inside a string", input: json.RawMessage("{\"a\":\"\xff\"}"), wantErr: `invalid tool call arguments: not valid UTF-8`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := translate.ArgumentsFromInput(tt.input)
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				var ae *translate.ArgumentsError
				require.ErrorAs(t, err, &ae)
				assert.Empty(t, ae.ToolCallID)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestInputFromArguments(t *testing.T) {
	tests := []struct {
		name    string
		args    string
		want    string
		wantErr string
		or      string // what Go 1.27's encoding/json says instead
	}{
		{name: "empty string is an empty object", args: ``, want: `{}`},
		{name: "whitespace-only is an empty object", args: " \n\t", want: `{}`},
		{name: "object", args: `{"location":"Tokyo"}`, want: `{"location":"Tokyo"}`},
		{name: "object is compacted", args: "{ \"a\" : [ 1, {\"b\" : null} ] }\n", want: `{"a":[1,{"b":null}]}`},
		{name: "integer beyond 2^53 is kept", args: `{"n":9007199254740993}`, want: `{"n":9007199254740993}`},
		{name: "big float is kept", args: `{"x":1.7976931348623157e309}`, want: `{"x":1.7976931348623157e309}`},
		{name: "escapes are kept", args: `{"e":"\u00e9\n\"\/\ud83c\udf89"}`, want: `{"e":"\u00e9\n\"\/\ud83c\udf89"}`},
		{name: "raw unicode is kept", args: `{"e":"é"}`, want: `{"e":"é"}`},
		{
			name:    "truncated",
			args:    `{"city":"Par`,
			wantErr: `invalid arguments for tool call "call_1": not valid JSON: unexpected end of JSON input (at byte 12)`,
		},
		{
			name:    "invalid",
			args:    `{city:"Paris"}`,
			wantErr: `invalid arguments for tool call "call_1": not valid JSON: invalid character 'c' looking for beginning of object key string (at byte 2)`,
		},
		{
			name:    "trailing garbage",
			args:    `{"a":1}}`,
			wantErr: `invalid arguments for tool call "call_1": not valid JSON: invalid character '}' after top-level value (at byte 8)`,
		},
		{
			name:    "two objects",
			args:    `{}{}`,
			wantErr: `invalid arguments for tool call "call_1": not valid JSON: invalid character '{' after top-level value (at byte 3)`,
		},
		{
			name:    "non-JSON whitespace is not whitespace",
			args:    "\u00a0{}",
			wantErr: `invalid arguments for tool call "call_1": not valid JSON: invalid character 'Â' looking for beginning of value (at byte 1)`,
			or:      `invalid arguments for tool call "call_1": not valid JSON: invalid character '\u00a0' looking for beginning of value (at byte 2)`, // Go 1.27
		},
		{name: "array", args: `[{"a":1}]`, wantErr: `invalid arguments for tool call "call_1": not a JSON object (got an array)`},
		{name: "string", args: `"{\"a\":1}"`, wantErr: `invalid arguments for tool call "call_1": not a JSON object (got a string)`},
		{name: "number", args: `3.5`, wantErr: `invalid arguments for tool call "call_1": not a JSON object (got a number)`},
		{name: "boolean", args: `false`, wantErr: `invalid arguments for tool call "call_1": not a JSON object (got a boolean)`},
		{name: "null", args: `null`, wantErr: `invalid arguments for tool call "call_1": not a JSON object (got null)`},
		{name: "invalid UTF-8", args: "{\"a\":\"\xc3\"}", wantErr: `invalid arguments for tool call "call_1": not valid UTF-8`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := translate.InputFromArguments("call_1", tt.args)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.or {
					require.EqualError(t, err, tt.wantErr)
				}
				var ae *translate.ArgumentsError
				require.ErrorAs(t, err, &ae)
				assert.Equal(t, "call_1", ae.ToolCallID)
				assert.Nil(t, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
		})
	}
}

func TestArgumentsErrorQuotesToolCallID(t *testing.T) {
	_, err := translate.InputFromArguments("id with \"quotes\"\n", `[]`)
	require.EqualError(t, err, `invalid arguments for tool call "id with \"quotes\"\n": not a JSON object (got an array)`)
}

// TestArgumentsRoundTripOverTheWire sends AAP inputs through a real AG-UI
// ToolCall encoding (the arguments become a JSON string, where encoding/json
// escapes <, > and &) and back, and expects the compacted input byte for byte.
func TestArgumentsRoundTripOverTheWire(t *testing.T) {
	deep := strings.Repeat(`{"a": [`, 500) + `1` + strings.Repeat(`] }`, 500)
	tests := []struct {
		name  string
		input string
		want  string
	}{
		{name: "simple", input: `{"location": "Tokyo"}`, want: `{"location":"Tokyo"}`},
		{name: "2^53+1", input: `{"n": 9007199254740993, "m": -9007199254740993}`, want: `{"n":9007199254740993,"m":-9007199254740993}`},
		{name: "escapes", input: `{"a": "\u00e9", "b": "é", "c": "\"\\\/\b\f\n\r\t", "d": "\ud800"}`, want: `{"a":"\u00e9","b":"é","c":"\"\\\/\b\f\n\r\t","d":"\ud800"}`},
		{name: "html and line separators", input: "{\"h\": \"<a href='x'>&</a>\u2028\u2029\"}", want: "{\"h\":\"<a href='x'>&</a>\u2028\u2029\"}"},
		{name: "key order", input: `{"b": {"y": 1, "x": 2}, "a": []}`, want: `{"b":{"y":1,"x":2},"a":[]}`},
		{name: "deep nesting", input: deep, want: strings.Repeat(`{"a":[`, 500) + `1` + strings.Repeat(`]}`, 500)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args, err := translate.ArgumentsFromInput(json.RawMessage(tt.input))
			require.NoError(t, err)

			wire, err := json.Marshal(types.ToolCall{
				ID:       "call_1",
				Type:     types.ToolCallTypeFunction,
				Function: types.FunctionCall{Name: "f", Arguments: args},
			})
			require.NoError(t, err)
			var back types.ToolCall
			require.NoError(t, json.Unmarshal(wire, &back))

			got, err := translate.InputFromArguments(back.ID, back.Function.Arguments)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
		})
	}
}

func TestRecoverInput(t *testing.T) {
	tests := []struct {
		name   string
		args   string
		want   string
		wantOK bool
	}{
		{name: "object", args: `{"a": 1}`, want: `{"a":1}`, wantOK: true},
		{name: "empty", args: ``, want: `{}`, wantOK: true},
		{name: "object that uses the raw key itself", args: `{"_raw_arguments":"x"}`, want: `{"_raw_arguments":"x"}`, wantOK: true},
		{name: "truncated", args: `{"city":"Par`, want: `{"_raw_arguments":"{\"city\":\"Par"}`},
		{name: "truncated after a key", args: `{"a":1,"b`, want: `{"_raw_arguments":"{\"a\":1,\"b"}`},
		{name: "array", args: `[1, 2]`, want: `{"_raw_arguments":"[1, 2]"}`},
		{name: "null", args: `null`, want: `{"_raw_arguments":"null"}`},
		{name: "plain text with html and newline", args: "call <b>&</b>\n", want: `{"_raw_arguments":"call <b>&</b>\n"}`},
		{name: "unicode stays raw", args: `{"é":`, want: `{"_raw_arguments":"{\"é\":"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := translate.RecoverInput(tt.args)
			assert.Equal(t, tt.wantOK, ok)
			assert.Equal(t, tt.want, string(got))
			require.True(t, json.Valid(got))
			if !ok {
				// The application gets the exact text back under the documented key.
				var m map[string]string
				require.NoError(t, json.Unmarshal(got, &m))
				assert.Equal(t, map[string]string{translate.RawArgumentsKey: tt.args}, m)
			}
		})
	}
}

// accOp is one step applied to an accumulator in the table tests below.
type accOp func(a *translate.ArgsAccumulator) error

func accStart(id, name string) accOp {
	return func(a *translate.ArgsAccumulator) error { return a.Start(id, name, "") }
}

func accAppend(id, delta string) accOp {
	return func(a *translate.ArgsAccumulator) error { return a.Append(id, delta) }
}

func accEnd(id string) accOp {
	return func(a *translate.ArgsAccumulator) error { _, err := a.End(id); return err }
}

func TestArgsAccumulatorErrors(t *testing.T) {
	tests := []struct {
		name    string
		ops     []accOp
		wantErr string
	}{
		{name: "start with empty id", ops: []accOp{accStart("", "f")}, wantErr: `tool call start with an empty toolCallId`},
		{name: "start with empty name", ops: []accOp{accStart("c1", "")}, wantErr: `tool call "c1": empty toolCallName`},
		{name: "start twice", ops: []accOp{accStart("c1", "f"), accStart("c1", "f")}, wantErr: `tool call "c1": started twice`},
		{name: "start after end", ops: []accOp{accStart("c1", "f"), accEnd("c1"), accStart("c1", "f")}, wantErr: `tool call "c1": started again after it ended`},
		{name: "args before start", ops: []accOp{accAppend("c1", "{}")}, wantErr: `tool call "c1": args for a call that was not started`},
		{name: "args for another id", ops: []accOp{accStart("c1", "f"), accAppend("c2", "{}")}, wantErr: `tool call "c2": args for a call that was not started`},
		{name: "args after end", ops: []accOp{accStart("c1", "f"), accAppend("c1", "{"), accEnd("c1"), accAppend("c1", "}")}, wantErr: `tool call "c1": args after the call ended`},
		{name: "end before start", ops: []accOp{accEnd("c1")}, wantErr: `tool call "c1": end for a call that was not started`},
		{name: "end twice", ops: []accOp{accStart("c1", "f"), accEnd("c1"), accEnd("c1")}, wantErr: `tool call "c1": end after the call ended`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var a translate.ArgsAccumulator
			var err error
			for i, step := range tt.ops {
				err = step(&a)
				if i < len(tt.ops)-1 {
					require.NoError(t, err, "step %d", i)
				}
			}
			require.EqualError(t, err, tt.wantErr)
		})
	}
}

func TestArgsAccumulatorFailedStepChangesNothing(t *testing.T) {
	var a translate.ArgsAccumulator
	require.NoError(t, a.Start("c1", "f", "m1"))
	require.NoError(t, a.Append("c1", `{"a":`))
	require.Error(t, a.Start("c1", "g", "m2"))
	require.Error(t, a.Append("c2", `junk`))
	require.NoError(t, a.Append("c1", `1}`))
	got, err := a.End("c1")
	require.NoError(t, err)
	assert.Equal(t, translate.CompletedCall{ToolCallID: "c1", Name: "f", ParentMessageID: "m1", Arguments: `{"a":1}`}, got)
}

func TestArgsAccumulatorInterleaved(t *testing.T) {
	tests := []struct {
		name     string
		ops      []accOp
		wantOpen []string
		ends     []string
		want     []translate.CompletedCall
	}{
		{
			name: "two calls",
			ops: []accOp{
				accStart("a", "weather"), accStart("b", "search"),
				accAppend("a", `{"city":`), accAppend("b", `{"q":`),
				accAppend("a", `"Tokyo"}`), accAppend("b", `"rain"}`),
			},
			wantOpen: []string{"a", "b"},
			ends:     []string{"b", "a"},
			want: []translate.CompletedCall{
				{ToolCallID: "b", Name: "search", Arguments: `{"q":"rain"}`},
				{ToolCallID: "a", Name: "weather", Arguments: `{"city":"Tokyo"}`},
			},
		},
		{
			name: "three calls, one without args",
			ops: []accOp{
				accStart("c3", "three"), accStart("c1", "one"), accAppend("c1", `{"n":`),
				accStart("c2", "two"), accAppend("c3", `[`), accAppend("c1", `1`),
				accAppend("c3", `]`), accAppend("c1", `}`),
			},
			wantOpen: []string{"c3", "c1", "c2"},
			ends:     []string{"c1", "c2", "c3"},
			want: []translate.CompletedCall{
				{ToolCallID: "c1", Name: "one", Arguments: `{"n":1}`},
				{ToolCallID: "c2", Name: "two", Arguments: ``},
				{ToolCallID: "c3", Name: "three", Arguments: `[]`},
			},
		},
		{
			name: "empty deltas change nothing",
			ops: []accOp{
				accStart("a", "f"), accAppend("a", ""), accAppend("a", "{}"), accAppend("a", ""),
			},
			wantOpen: []string{"a"},
			ends:     []string{"a"},
			want:     []translate.CompletedCall{{ToolCallID: "a", Name: "f", Arguments: `{}`}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var a translate.ArgsAccumulator
			for i, step := range tt.ops {
				require.NoError(t, step(&a), "step %d", i)
			}
			assert.Equal(t, tt.wantOpen, a.Open())
			var got []translate.CompletedCall
			for _, id := range tt.ends {
				c, err := a.End(id)
				require.NoError(t, err)
				got = append(got, c)
			}
			assert.Equal(t, tt.want, got)
			assert.Empty(t, a.Open())
		})
	}
}

func TestArgsAccumulatorOpenKeepsStartOrder(t *testing.T) {
	var a translate.ArgsAccumulator
	assert.Empty(t, a.Open())
	for _, id := range []string{"x", "y", "z", "w"} {
		require.NoError(t, a.Start(id, "f", ""))
	}
	_, err := a.End("y")
	require.NoError(t, err)
	assert.Equal(t, []string{"x", "z", "w"}, a.Open())
	require.NoError(t, a.Start("v", "f", ""))
	assert.Equal(t, []string{"x", "z", "w", "v"}, a.Open())
}

func TestArgsAccumulatorReset(t *testing.T) {
	var a translate.ArgsAccumulator
	require.NoError(t, a.Start("a", "f", ""))
	require.NoError(t, a.Append("a", `{"old":`))
	require.NoError(t, a.Start("b", "f", ""))
	_, err := a.End("b")
	require.NoError(t, err)
	_, _, err = a.Chunk(argsPtr("c"), argsPtr("f"), nil, argsPtr(`{"accChunk":`))
	require.NoError(t, err)

	a.Reset()
	assert.Empty(t, a.Open())
	_, ok := a.EndChunked()
	assert.False(t, ok, "the chunked call is forgotten")
	require.EqualError(t, a.Append("a", "x"), `tool call "a": args for a call that was not started`)

	// Ids of the previous stream may be used again, and reused buffers start empty.
	for _, id := range []string{"a", "b", "c"} {
		require.NoError(t, a.Start(id, "g", ""))
		require.NoError(t, a.Append(id, `{"id":"`+id+`"}`))
	}
	for _, id := range []string{"a", "b", "c"} {
		c, err := a.End(id)
		require.NoError(t, err)
		assert.Equal(t, `{"id":"`+id+`"}`, c.Arguments)
	}
}

func argsPtr(s string) *string { return &s }

// accChunk is one TOOL_CALL_CHUNK, or (endChunked) a non-accChunk event.
type accChunk struct {
	id, name, parent, delta *string
	endChunked              bool
}

func TestArgsAccumulatorChunk(t *testing.T) {
	type result struct {
		ended   []translate.CompletedCall
		started bool
		err     string
	}
	tests := []struct {
		name     string
		setup    []accOp
		chunks   []accChunk
		want     []result
		wantOpen []string
	}{
		{
			name: "one chunked call, ended by a non-accChunk event",
			chunks: []accChunk{
				{id: argsPtr("c1"), name: argsPtr("weather"), parent: argsPtr("m1"), delta: argsPtr(`{"city":`)},
				{delta: argsPtr(`"Tokyo"`)},
				{id: argsPtr("c1"), delta: argsPtr(`}`)},
				{endChunked: true},
			},
			want: []result{
				{started: true},
				{},
				{},
				{ended: []translate.CompletedCall{{ToolCallID: "c1", Name: "weather", ParentMessageID: "m1", Arguments: `{"city":"Tokyo"}`}}},
			},
		},
		{
			name: "id switch ends the current call and starts the next",
			chunks: []accChunk{
				{id: argsPtr("c1"), name: argsPtr("a"), delta: argsPtr(`{"x":1}`)},
				{id: argsPtr("c2"), name: argsPtr("b"), parent: argsPtr("m1"), delta: argsPtr(`{"y":`)},
				{delta: argsPtr(`2}`)},
			},
			want: []result{
				{started: true},
				{ended: []translate.CompletedCall{{ToolCallID: "c1", Name: "a", Arguments: `{"x":1}`}}, started: true},
				{},
			},
			wantOpen: []string{"c2"},
		},
		{
			name: "later name and parent are ignored, accChunk without delta only starts",
			chunks: []accChunk{
				{id: argsPtr("c1"), name: argsPtr("a")},
				{id: argsPtr("c1"), name: argsPtr("other"), parent: argsPtr("m9"), delta: argsPtr(`{}`)},
				{endChunked: true},
			},
			want: []result{
				{started: true},
				{},
				{ended: []translate.CompletedCall{{ToolCallID: "c1", Name: "a", Arguments: `{}`}}},
			},
		},
		{
			name:   "first accChunk without id",
			chunks: []accChunk{{name: argsPtr("a"), delta: argsPtr(`{}`)}},
			want:   []result{{err: `TOOL_CALL_CHUNK without toolCallId and no chunked tool call in progress`}},
		},
		{
			name:   "first accChunk without name",
			chunks: []accChunk{{id: argsPtr("c1"), delta: argsPtr(`{}`)}},
			want:   []result{{err: `tool call "c1": first TOOL_CALL_CHUNK has no toolCallName`}},
		},
		{
			name: "switch to an id without name ends the current call and fails",
			chunks: []accChunk{
				{id: argsPtr("c1"), name: argsPtr("a"), delta: argsPtr(`{"k":true}`)},
				{id: argsPtr("c2"), delta: argsPtr(`{}`)},
				{delta: argsPtr(`x`)},
			},
			want: []result{
				{started: true},
				{
					ended: []translate.CompletedCall{{ToolCallID: "c1", Name: "a", Arguments: `{"k":true}`}},
					err:   `tool call "c2": first TOOL_CALL_CHUNK has no toolCallName`,
				},
				{err: `TOOL_CALL_CHUNK without toolCallId and no chunked tool call in progress`},
			},
		},
		{
			name: "a accChunk after a non-accChunk event must start again",
			chunks: []accChunk{
				{id: argsPtr("c1"), name: argsPtr("a"), delta: argsPtr(`{`)},
				{endChunked: true},
				{delta: argsPtr(`}`)},
			},
			want: []result{
				{started: true},
				{ended: []translate.CompletedCall{{ToolCallID: "c1", Name: "a", Arguments: `{`}}},
				{err: `TOOL_CALL_CHUNK without toolCallId and no chunked tool call in progress`},
			},
		},
		{
			name: "reusing an ended id",
			chunks: []accChunk{
				{id: argsPtr("c1"), name: argsPtr("a")},
				{endChunked: true},
				{id: argsPtr("c1"), name: argsPtr("a")},
			},
			want: []result{
				{started: true},
				{ended: []translate.CompletedCall{{ToolCallID: "c1", Name: "a"}}},
				{err: `tool call "c1": started again after it ended`},
			},
		},
		{
			name:   "accChunk for a call opened by TOOL_CALL_START",
			setup:  []accOp{accStart("c1", "a")},
			chunks: []accChunk{{id: argsPtr("c1"), name: argsPtr("a"), delta: argsPtr(`{}`)}},
			want:   []result{{err: `tool call "c1": started twice`}},
			// The explicit call is untouched.
			wantOpen: []string{"c1"},
		},
		{
			name:  "chunked call alongside explicit calls",
			setup: []accOp{accStart("e1", "explicit")},
			chunks: []accChunk{
				{id: argsPtr("k1"), name: argsPtr("chunked"), delta: argsPtr(`{"a":`)},
				{delta: argsPtr(`1}`)},
			},
			want:     []result{{started: true}, {}},
			wantOpen: []string{"e1", "k1"},
		},
		{
			name:   "EndChunked with nothing chunked",
			setup:  []accOp{accStart("e1", "explicit")},
			chunks: []accChunk{{endChunked: true}},
			want:   []result{{}},
			// An explicit call is never closed by EndChunked.
			wantOpen: []string{"e1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Len(t, tt.want, len(tt.chunks))
			var a translate.ArgsAccumulator
			for i, step := range tt.setup {
				require.NoError(t, step(&a), "setup %d", i)
			}
			for i, c := range tt.chunks {
				var got result
				if c.endChunked {
					if done, ok := a.EndChunked(); ok {
						got.ended = []translate.CompletedCall{done}
					}
				} else {
					ended, started, err := a.Chunk(c.id, c.name, c.parent, c.delta)
					got = result{ended: ended, started: started}
					if err != nil {
						got.err = err.Error()
					}
				}
				assert.Equal(t, tt.want[i], got, "accChunk %d", i)
			}
			assert.Equal(t, tt.wantOpen, a.Open())
		})
	}
}

func TestArgsAccumulatorEndOfChunkedCallByID(t *testing.T) {
	// A TOOL_CALL_END naming the chunked call closes it; EndChunked then has
	// nothing left to end and a later accChunk without id is refused.
	var a translate.ArgsAccumulator
	_, _, err := a.Chunk(argsPtr("c1"), argsPtr("a"), nil, argsPtr(`{}`))
	require.NoError(t, err)
	got, err := a.End("c1")
	require.NoError(t, err)
	assert.Equal(t, `{}`, got.Arguments)
	_, ok := a.EndChunked()
	assert.False(t, ok)
	_, _, err = a.Chunk(nil, nil, nil, argsPtr(`x`))
	require.EqualError(t, err, `TOOL_CALL_CHUNK without toolCallId and no chunked tool call in progress`)
}

func TestStreamedArgumentsKeepBytes(t *testing.T) {
	// Deltas that split an escape, a multi-byte character and a big integer
	// are joined back exactly before parsing.
	input := `{"city":"Montr\u00e9al","emoji":"🎉","id":9007199254740993}`
	var a translate.ArgsAccumulator
	require.NoError(t, a.Start("c1", "f", ""))
	for i := 0; i < len(input); i += 3 {
		require.NoError(t, a.Append("c1", input[i:min(i+3, len(input))]))
	}
	got, err := a.End("c1")
	require.NoError(t, err)
	in, err := translate.InputFromArguments(got.ToolCallID, got.Arguments)
	require.NoError(t, err)
	assert.Equal(t, input, string(in))
}

func ExampleArgsAccumulator() {
	var acc translate.ArgsAccumulator
	// Two tool calls stream their arguments at the same time.
	_ = acc.Start("call_1", "get_weather", "msg_1")
	_ = acc.Start("call_2", "web_search", "msg_1")
	_ = acc.Append("call_1", `{"location":`)
	_ = acc.Append("call_2", `{"query":"Tokyo`)
	_ = acc.Append("call_1", `"Tokyo"}`)
	done, _ := acc.End("call_1")
	input, err := translate.InputFromArguments(done.ToolCallID, done.Arguments)
	fmt.Println(string(input), err)
	fmt.Println(acc.Open())

	// The upstream stream ends while call_2 is truncated: keep its text.
	done, _ = acc.End("call_2")
	input, ok := translate.RecoverInput(done.Arguments)
	fmt.Println(string(input), ok)
	// Output:
	// {"location":"Tokyo"} <nil>
	// [call_2]
	// {"_raw_arguments":"{\"query\":\"Tokyo"} false
}

func ExampleArgumentsFromInput() {
	args, _ := translate.ArgumentsFromInput(json.RawMessage(`{ "id": 9007199254740993, "city": "Montr\u00e9al" }`))
	fmt.Println(args)
	input, _ := translate.InputFromArguments("call_1", args)
	fmt.Println(string(input))
	_, err := translate.InputFromArguments("call_1", `["not", "an", "object"]`)
	fmt.Println(err)
	// Output:
	// {"id":9007199254740993,"city":"Montr\u00e9al"}
	// {"id":9007199254740993,"city":"Montr\u00e9al"}
	// invalid arguments for tool call "call_1": not a JSON object (got an array)
}
