package translate_test

import (
	"encoding/json"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/translate"
)

// onInterrupt is the CUSTOM event @ag-ui/langgraph sends for interrupt()
// by default, as the decoder reads it.
func onInterrupt(t *testing.T, data string) events.Event {
	t.Helper()
	var d agui.Decoder
	ev, err := d.Decode([]byte(data))
	require.NoError(t, err)
	return ev
}

const publishOnInterrupt = `{"type":"CUSTOM","name":"on_interrupt","value":"{\"message\":\"Publish?\",\"responseSchema\":{\"type\":\"object\",\"properties\":{\"approved\":{\"type\":\"boolean\"}}}}",` +
	`"rawEvent":{"id":"7e4aabad7a8cf5e840d38deecbbe0423","value":{"message":"Publish?","responseSchema":{"type":"object","properties":{"approved":{"type":"boolean"}}}}}}`

func TestInterruptFromOnInterrupt(t *testing.T) {
	in, ok := translate.InterruptFromOnInterrupt(onInterrupt(t, publishOnInterrupt).(*events.CustomEvent))
	require.True(t, ok)
	b, err := json.Marshal(in)
	require.NoError(t, err)
	assert.JSONEq(t, `{"id":"7e4aabad7a8cf5e840d38deecbbe0423","reason":"langgraph:interrupt","message":"Publish?",`+
		`"responseSchema":{"type":"object","properties":{"approved":{"type":"boolean"}}},`+
		`"metadata":{"langgraph":{"raw":{"message":"Publish?","responseSchema":{"type":"object","properties":{"approved":{"type":"boolean"}}}}}}}`, string(b))
	assert.True(t, translate.AsksApproval(in))

	in, ok = translate.InterruptFromOnInterrupt(onInterrupt(t,
		`{"type":"CUSTOM","name":"on_interrupt","value":"{\"reason\":\"tool_call\",\"tool_call_id\":\"c1\"}","rawEvent":{"id":"i2","value":{"reason":"tool_call","tool_call_id":"c1"}}}`).(*events.CustomEvent))
	require.True(t, ok)
	assert.Equal(t, types.Interrupt{ID: "i2", Reason: "tool_call", ToolCallID: "c1", Metadata: in.Metadata}, in)

	in, ok = translate.InterruptFromOnInterrupt(onInterrupt(t, `{"type":"CUSTOM","name":"on_interrupt","value":"Which city?","rawEvent":{"id":"i3"}}`).(*events.CustomEvent))
	require.True(t, ok)
	assert.Equal(t, "Which city?", in.Message)

	for _, data := range []string{
		`{"type":"CUSTOM","name":"on_interrupt","value":"Which city?"}`, // no id: no resume could name it
		`{"type":"CUSTOM","name":"PredictState","value":[],"rawEvent":{"id":"x"}}`,
	} {
		_, ok := translate.InterruptFromOnInterrupt(onInterrupt(t, data).(*events.CustomEvent))
		assert.False(t, ok, data)
	}
}

// A run that reports interrupt() only as on_interrupt events, and finishes
// without an interrupt outcome (@ag-ui/langgraph's default), stops for
// them as for an interrupt outcome; a run that has the outcome too is read
// from the outcome alone.
func TestAGUIToAAPOnInterrupt(t *testing.T) {
	run := func(finish string) (*translate.AGUIToAAP, []string) {
		tr := translate.NewAGUIToAAP(translate.AGUIToAAPOptions{Mode: aap.StreamMessage})
		var got []string
		for _, data := range []string{`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`, publishOnInterrupt, finish} {
			out, err := tr.FeedJSON(onInterrupt(t, data), []byte(data))
			require.NoError(t, err)
			for _, e := range out {
				b, _ := e.AppendData(nil)
				got = append(got, string(e.EventName())+" "+string(b))
			}
		}
		return tr, got
	}
	tr, got := run(`{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`)
	require.Len(t, got, 3)
	assert.Contains(t, got[1], `"toolCallId":"7e4aabad7a8cf5e840d38deecbbe0423","name":"agui_interrupt","input":{"id":"7e4aabad7a8cf5e840d38deecbbe0423","reason":"langgraph:interrupt","message":"Publish?"`)
	assert.Equal(t, `turn_stop {"stopReason":"tool_use"}`, got[2])
	require.Len(t, tr.Interrupts(), 1)
	assert.Equal(t, "7e4aabad7a8cf5e840d38deecbbe0423", tr.Interrupts()[0].ID)

	tr, got = run(`{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"interrupt","interrupts":[{"id":"from-outcome","reason":"confirmation"}]}}`)
	require.Len(t, got, 3)
	assert.Contains(t, got[1], `"toolCallId":"from-outcome"`)
	require.Len(t, tr.Interrupts(), 1)

	tr, got = run(`{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"success"}}`)
	assert.Equal(t, []string{`turn_start {}`, `turn_stop {"stopReason":"end_turn"}`}, got, "a run that says it succeeded")
	assert.Empty(t, tr.Interrupts())
}
