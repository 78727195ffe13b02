package translate_test

import (
	"encoding/json"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/translate"
)

// chainCalls feeds an agent's run through both translators as the two
// bridges in a chain do (AGUIToAAP with previews, its AAP events into
// AAPToAGUI) and returns what the page gets.
func chainCalls(t *testing.T, opts translate.AGUIToAAPOptions, run ...events.Event) []events.Event {
	t.Helper()
	opts.PreviewCalls = true
	g2a := translate.NewAGUIToAAP(opts)
	var aapEvs []aap.Event
	for _, ev := range run {
		evs, err := g2a.Feed(ev)
		require.NoError(t, err)
		aapEvs = append(aapEvs, evs...)
	}
	aapEvs = append(aapEvs, g2a.Finish()...)
	a2g := translate.NewAAPToAGUI(translate.AAPToAGUIOptions{ThreadID: "th", RunID: "r1", NewID: translate.SequentialIDs("m")})
	return strmFeedAAP(t, a2g, aapEvs...)
}

// A call's arguments reach the page in the parts the agent streamed them
// in, under the page's message id, the call started and ended once; the
// run's messages hold the arguments whole.
func TestCallPreviewsStreamTheArguments(t *testing.T) {
	run := []events.Event{strmRunStarted(), strmTextStart("a1"), strmTextContent("a1", "Writing."), strmTextEnd("a1"),
		events.NewToolCallStartEvent("c1", "write_document", events.WithParentMessageID("a1")),
		strmToolArgs("c1", `{"document":`), strmToolArgs("c1", `"Once upon`), strmToolArgs("c1", ` a time"}`), strmToolEnd("c1"),
		strmFinished(nil, nil)}
	page := chainCalls(t, translate.AGUIToAAPOptions{}, run...)
	assert.Equal(t, []string{
		"RUN_STARTED", "TEXT_MESSAGE_START m1 role=assistant", `TEXT_MESSAGE_CONTENT m1 "Writing."`, "TEXT_MESSAGE_END m1",
		"TOOL_CALL_START c1 write_document parent=m1",
		`TOOL_CALL_ARGS c1 {"document":`, `TOOL_CALL_ARGS c1 "Once upon`, `TOOL_CALL_ARGS c1  a time"}`,
		"TOOL_CALL_END c1", "RUN_FINISHED",
	}, strmAGUILines(t, page))
}

// A plain AAP client, and a client granted the extension in another
// stream mode, get the call whole, as before: no agui event.
func TestCallPreviewsOnlyInDeltaModeWhenAsked(t *testing.T) {
	run := append([]events.Event{strmRunStarted()}, strmToolCallFull("c1", "t", `{"a":1}`)...)
	run = append(run, strmFinished(nil, nil))
	for _, c := range []struct {
		name string
		opts translate.AGUIToAAPOptions
	}{
		{"not asked", translate.AGUIToAAPOptions{}},
		{"message mode", translate.AGUIToAAPOptions{Mode: aap.StreamMessage, PreviewCalls: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			g2a := translate.NewAGUIToAAP(c.opts)
			for _, ev := range run {
				evs, err := g2a.Feed(ev)
				require.NoError(t, err)
				for _, e := range evs {
					assert.NotEqual(t, aap.EventAGUI, e.EventName())
				}
			}
		})
	}
}

// A call of an earlier turn that the agent streams again (as
// @ag-ui/langgraph does on resume) is neither previewed nor made again.
func TestCallPreviewsLeaveOutCallsOfHistory(t *testing.T) {
	prior := translate.PriorCallsOf([]aap.Message{&aap.AssistantMessage{Content: aap.BlockContent(&aap.ToolUseBlock{ToolCallID: "old", Name: "t", Input: json.RawMessage(`{}`)})}})
	run := append([]events.Event{strmRunStarted()}, strmToolCallFull("old", "t", `{"a":1}`)...)
	run = append(run, strmToolCallFull("new", "t", `{"b":2}`)...)
	run = append(run, strmFinished(nil, nil))
	page := chainCalls(t, translate.AGUIToAAPOptions{Prior: prior}, run...)
	assert.Equal(t, []string{"RUN_STARTED", "TOOL_CALL_START new t parent=m1", `TOOL_CALL_ARGS new {"b":2}`, "TOOL_CALL_END new", "RUN_FINISHED"},
		strmAGUILines(t, page))
}

// What the page's client takes no other event beside (a text, a second
// call) ends the previewed call first; a call previewed without arguments
// gets {}; what the agent streamed with spaces stays as it streamed, and
// the run's messages hold the call's arguments whole.
func TestCallPreviewsCloseBeforeOtherEvents(t *testing.T) {
	a2g := translate.NewAAPToAGUI(translate.AAPToAGUIOptions{ThreadID: "th", RunID: "r1", NewID: translate.SequentialIDs("m")})
	page := strmFeedAAP(t, a2g,
		&aap.TurnStart{},
		&aap.AGUIEvent{Data: json.RawMessage(`{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"t"}`)},
		&aap.AGUIEvent{Data: json.RawMessage(`{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{\"a\": "}`)},
		&aap.TextDelta{Delta: "meanwhile"},
		&aap.AGUIEvent{Data: json.RawMessage(`{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"1}"}`)},
		&aap.AGUIEvent{Data: json.RawMessage(`{"type":"TOOL_CALL_START","toolCallId":"c2","toolCallName":"u"}`)},
		strmCall("c1", "t", `{"a":1}`),
		&aap.AGUIEvent{Data: json.RawMessage(`{"type":"TOOL_CALL_START","toolCallId":"c3","toolCallName":"v"}`)},
		strmCall("c2", "u", `{}`),
		strmStop(aap.StopEndTurn),
	)
	assert.Equal(t, []string{
		"RUN_STARTED", "TOOL_CALL_START c1 t parent=m1", `TOOL_CALL_ARGS c1 {"a": `, "TOOL_CALL_END c1",
		"TEXT_MESSAGE_START m2 role=assistant", `TEXT_MESSAGE_CONTENT m2 "meanwhile"`, "TEXT_MESSAGE_END m2",
		"TOOL_CALL_START c2 u parent=m2", "TOOL_CALL_ARGS c2 {}", "TOOL_CALL_END c2",
		"TOOL_CALL_START c3 v parent=m2", "TOOL_CALL_ARGS c3 {}", "TOOL_CALL_END c3",
		"RUN_FINISHED outcome=success",
	}, strmAGUILines(t, page))
	msgs := a2g.Messages()
	require.Len(t, msgs, 2, "text after a call is a new message, as without previews")
	require.Len(t, msgs[0].ToolCalls, 1)
	require.Len(t, msgs[1].ToolCalls, 2)
	assert.Equal(t, `{"a":1}`, msgs[0].ToolCalls[0].Function.Arguments, "the call's arguments whole")
	assert.Equal(t, `{}`, msgs[1].ToolCalls[0].Function.Arguments)
	assert.Equal(t, `{}`, msgs[1].ToolCalls[1].Function.Arguments, "a preview the turn left open")
	assert.Len(t, a2g.PendingCalls(), 2, "only the calls the turn made wait")
}

// A preview that is not one (no id or name, a second start, arguments of
// a call never started) is the stream's error, and changes nothing.
func TestCallPreviewsRefuseWhatIsNotOne(t *testing.T) {
	for name, data := range map[string]string{
		"no name":        `{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":""}`,
		"never started":  `{"type":"TOOL_CALL_ARGS","toolCallId":"zz","delta":"x"}`,
		"started before": `{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"t"}`,
	} {
		t.Run(name, func(t *testing.T) {
			a2g := translate.NewAAPToAGUI(translate.AAPToAGUIOptions{ThreadID: "th", RunID: "r1", NewID: translate.SequentialIDs("m")})
			_, err := a2g.Feed(&aap.AGUIEvent{Data: json.RawMessage(`{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"t"}`)})
			require.NoError(t, err)
			before := len(a2g.Messages()[0].ToolCalls)
			_, err = a2g.Feed(&aap.AGUIEvent{Data: json.RawMessage(data)})
			var se *translate.StreamError
			require.ErrorAs(t, err, &se)
			assert.Len(t, a2g.Messages()[0].ToolCalls, before)
		})
	}
}
