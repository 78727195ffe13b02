package agui_test

import (
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/internal/jsonenc"
)

// FuzzDecoderMatchesDecodeEvent checks that a Decoder, which shares ids
// between events and allocates them in slabs and their texts in chunks,
// decodes every event of a stream exactly as DecodeEvent decodes it alone,
// and that none changes once decoded.
func FuzzDecoderMatchesDecodeEvent(f *testing.F) {
	f.Add([]byte(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Hel"}`), []byte(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"lo"}`))
	f.Add([]byte(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"a"}`), []byte(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m2","delta":"b"}`))
	f.Add([]byte(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m\u0031","delta":"a"}`), []byte(`{"type":"REASONING_MESSAGE_CONTENT","messageId":"m1","delta":"\n"}`))
	f.Add([]byte(`{"type":"TOOL_CALL_ARGS","toolCallId":"c","delta":"{\"a\""}`), []byte(`{"type":"TOOL_CALL_ARGS","toolCallId":"c","delta":":1}","timestamp":5}`))
	f.Add([]byte(`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`), []byte(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"","delta":"x"}`))
	// Each golden event after the one before it, as a stream brings them.
	evs := goldenEvents(f)
	for i := 1; i < len(evs); i++ {
		f.Add(evs[i-1], evs[i])
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		var d agui.Decoder
		var kept []events.Event
		// Many rounds: the second meets the ids of the first, later ones
		// fill the slabs and the texts' chunks and start new ones.
		for range 40 {
			for _, data := range [][]byte{a, b} {
				want, wantErr := agui.DecodeEvent(data)
				got, err := d.Decode(data)
				require.Equal(t, wantErr, err)
				require.Equal(t, want, got)
				if d.Plain() {
					require.Empty(t, agui.SubagentRunID(data), "a plain event holds no subagent's run id")
				}
				kept = append(kept, got)
			}
		}
		// No later event changed an earlier one.
		for i, got := range kept {
			want, _ := agui.DecodeEvent([][]byte{a, b}[i%2])
			require.Equal(t, want, got, "event %d", i)
		}
	})
}

// Plain says which events hold nothing beyond their struct's fields.
func TestDecoderPlain(t *testing.T) {
	for data, want := range map[string]bool{
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Hel"}`:                    true,
		`{"type":"TOOL_CALL_ARGS","toolCallId":"c","delta":"{","timestamp":5}`:              true,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"a","subagentRunId":"s1"}`: false,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"a","rawEvent":{"x":1}}`:   false,
		`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`:                                 false,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m\u0031","delta":"a"}`:                 true,
		`{"type":"TEXT_MESSAGE_CONTENT","message\u0049d":"m1","delta":"a"}`:                 false,
	} {
		var d agui.Decoder
		_, err := d.Decode([]byte(data))
		require.NoError(t, err)
		require.Equal(t, want, d.Plain(), data)
	}
}

// FuzzDecodeText checks that DecodeText reads every event as Decode does,
// in one pass: a TEXT_MESSAGE_CONTENT it leaves unmade is one of that
// message id and delta, whose delta bytes can be written into a JSON
// string as they are; an event it leaves to Decode (Deep) is one Decode
// does not read by its fast path; any other event, or error, is Decode's.
func FuzzDecodeText(f *testing.F) {
	for data := range textContentCases {
		f.Add([]byte(data))
	}
	for _, ev := range goldenEvents(f) {
		f.Add(ev)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var d agui.Decoder
		got, id, delta, gotErr := d.DecodeText(data)
		want, err := agui.DecodeEvent(data)
		if got != nil || gotErr != nil {
			require.False(t, d.Deep())
			require.Equal(t, err, gotErr)
			require.Equal(t, want, got)
			return
		}
		if d.Deep() {
			again, againErr := d.Decode(data)
			require.Equal(t, err, againErr)
			require.Equal(t, want, again)
			require.False(t, d.Plain(), "an event of the fast path was left to Decode")
			return
		}
		require.True(t, jsonenc.Plain(delta), "%q", delta)
		require.NoError(t, err)
		e, isText := want.(*events.TextMessageContentEvent)
		require.True(t, isText, "%T", want)
		require.Equal(t, e.MessageID, id)
		require.Equal(t, e.Delta, string(delta))
		require.True(t, d.Plain())
	})
}

// textContentCases are events and what DecodeText makes of them: a
// TEXT_MESSAGE_CONTENT of the fast path whose id and delta need no escape
// is left unmade ("text"), any other event of the fast path is made
// ("event"), and one that takes encoding/json is left to Decode ("deep").
var textContentCases = map[string]string{
	`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Hel"}`:               "text",
	`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"é","timestamp":5}`:   "text",
	`{"type":"TEXT_MESSAGE_CONTENT","delta":"lo","messageId":"m1"}`:                "text",
	`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"a\nb"}`:              "event",
	`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"a` + "\u2028" + `"}`: "event",
	`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":""}`:                  "text",
	`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m\u0031","delta":"a"}`:            "event",
	`{"type":"TEXT_MESSAGE_CONTENT","delta":"a"}`:                                  "event",
	`{"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "a"}`:            "text",
	`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"a","extra":1}`:       "deep",
	`{"type":"TOOL_CALL_ARGS","toolCallId":"c","delta":"{"}`:                       "event",
	`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`:                            "deep",
}

func TestDecodeText(t *testing.T) {
	for data, want := range textContentCases {
		var d agui.Decoder
		ev, _, _, err := d.DecodeText([]byte(data))
		require.NoError(t, err, data)
		got := "text"
		if ev != nil {
			got = "event"
		} else if d.Deep() {
			got = "deep"
		}
		require.Equal(t, want, got, data)
	}
	var d agui.Decoder
	_, _, _, err := d.DecodeText([]byte(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"a"`))
	require.Error(t, err, "a cut object is malformed, as Decode says")
}
