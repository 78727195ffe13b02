package translate_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/translate"
)

// backendToolSnapshot is the MESSAGES_SNAPSHOT of the AG-UI server
// starter's backend tool rendering
// (integrations/server-starter-all-features/python/examples/example_server/backend_tool_rendering.py
// in ag-ui-protocol/ag-ui): the input messages, then an assistant call of
// get_weather and the tool's result; the run has no other event.
func backendToolSnapshot(t *testing.T, sent []types.Message) []translate.HistoryEntry {
	t.Helper()
	msgs := append(sent[:len(sent):len(sent)],
		types.Message{ID: "a-1", Role: types.RoleAssistant, ToolCalls: []types.ToolCall{{
			ID: "call-1", Type: types.ToolCallTypeFunction,
			Function: types.FunctionCall{Name: "get_weather", Arguments: `{"city": "San Francisco"}`},
		}}},
		types.Message{ID: "t-1", Role: types.RoleTool, ToolCallID: "call-1", Content: `{"city": "San Francisco", "conditions": "sunny"}`})
	return snapshotEntries(t, &events.MessagesSnapshotEvent{Messages: msgs})
}

// sentOf is the history a run was sent, as entries.
func sentOf(t *testing.T, msgs []types.Message) []translate.HistoryEntry {
	t.Helper()
	return snapshotEntries(t, &events.MessagesSnapshotEvent{Messages: msgs})
}

// decodeEvents decodes AG-UI events from their JSON.
func decodeEvents(t *testing.T, data ...string) []events.Event {
	t.Helper()
	out := make([]events.Event, len(data))
	for i, d := range data {
		ev, err := agui.DecodeEvent([]byte(d))
		require.NoError(t, err)
		out[i] = ev
	}
	return out
}

func eventJSON(t *testing.T, evs []aap.Event) []string {
	t.Helper()
	out := make([]string, len(evs))
	for i, ev := range evs {
		b, err := ev.AppendData(nil)
		require.NoError(t, err)
		out[i] = string(ev.EventName()) + " " + string(b)
	}
	return out
}

// A run that answers with a snapshot alone: what the snapshot holds after
// what the run was sent is streamed, in every mode, as the same messages
// streamed would be (a tool the agent ran: tool_call, then tool_result),
// and the run's messages are those, under the snapshot's ids.
func TestFeedSnapshotAnswer(t *testing.T) {
	sent := []types.Message{{ID: "u-1", Role: types.RoleUser, Content: "What is the weather in San Francisco?"}}
	result := `{"city": "San Francisco", "conditions": "sunny"}`
	resultJSON, _ := json.Marshal(result)
	for mode, want := range map[aap.StreamMode][]string{
		aap.StreamDelta: {
			`turn_start {}`,
			`tool_call {"toolCallId":"call-1","name":"get_weather","input":{"city":"San Francisco"}}`,
			`tool_result {"toolCallId":"call-1","content":` + string(resultJSON) + `}`,
			`turn_stop {"stopReason":"end_turn"}`,
		},
		aap.StreamNone: {},
	} {
		t.Run(string(mode), func(t *testing.T) {
			tr := translate.NewAGUIToAAP(translate.AGUIToAAPOptions{Mode: mode})
			var out []aap.Event
			evs, err := tr.Feed(&events.RunStartedEvent{BaseEvent: &events.BaseEvent{EventType: events.EventTypeRunStarted}})
			require.NoError(t, err)
			out = append(out, evs...)
			evs, err = tr.FeedSnapshot(backendToolSnapshot(t, sent), sentOf(t, sent), nil)
			require.NoError(t, err)
			out = append(out, evs...)
			evs, err = tr.Feed(&events.RunFinishedEvent{BaseEvent: &events.BaseEvent{EventType: events.EventTypeRunFinished}})
			require.NoError(t, err)
			out = append(out, evs...)
			assert.Equal(t, want, eventJSON(t, out))
			assert.Equal(t, aap.StopEndTurn, tr.StopReason())
			assert.Equal(t, []string{"a-1", "t-1"}, tr.MessageIDs())
			resp, err := json.Marshal(tr.Response())
			require.NoError(t, err)
			assert.JSONEq(t, `{"stopReason":"end_turn","messages":[`+
				`{"role":"assistant","content":[{"type":"tool_use","toolCallId":"call-1","name":"get_weather","input":{"city":"San Francisco"}}]},`+
				`{"role":"tool","toolCallId":"call-1","content":`+string(resultJSON)+`}]}`, string(resp))
		})
	}
}

// In message mode, each new assistant message is a thinking and a text
// event; a call with no result (the application's tool) stops the turn
// for tool_use.
func TestFeedSnapshotMessageMode(t *testing.T) {
	sent := []types.Message{{ID: "u-1", Role: types.RoleUser, Content: "go"}}
	snap := sentOf(t, append(sent[:1:1],
		types.Message{ID: "r-1", Role: types.RoleReasoning, Content: "Hm."},
		types.Message{ID: "a-1", Role: types.RoleAssistant, Content: "Picking.", ToolCalls: []types.ToolCall{{
			ID: "c1", Type: types.ToolCallTypeFunction, Function: types.FunctionCall{Name: "pick_color", Arguments: `{}`},
		}}}))
	tr := translate.NewAGUIToAAP(translate.AGUIToAAPOptions{Mode: aap.StreamMessage})
	out, err := tr.FeedSnapshot(snap, sentOf(t, sent), nil)
	require.NoError(t, err)
	out = append(slices.Clone(out), tr.Finish()...)
	assert.Equal(t, []string{
		`turn_start {}`,
		`thinking {"thinking":"Hm."}`,
		`text {"text":"Picking."}`,
		`tool_call {"toolCallId":"c1","name":"pick_color","input":{}}`,
		`turn_stop {"stopReason":"error"}`, // Finish: no RUN_FINISHED
	}, eventJSON(t, out))

	tr = translate.NewAGUIToAAP(translate.AGUIToAAPOptions{Mode: aap.StreamMessage})
	_, err = tr.FeedSnapshot(snap, sentOf(t, sent), nil)
	require.NoError(t, err)
	out, err = tr.Feed(&events.RunFinishedEvent{BaseEvent: &events.BaseEvent{EventType: events.EventTypeRunFinished}})
	require.NoError(t, err)
	assert.Equal(t, []string{`turn_stop {"stopReason":"tool_use"}`}, eventJSON(t, out))
}

// A call of the agent's own tool that a snapshot holds without a result
// (a predictive-state tool) waits on no one, as the same call streamed
// does: the turn ends with end_turn; a call of the application's tool in
// it still stops the turn for tool_use.
func TestFeedSnapshotAgentsOwnCall(t *testing.T) {
	sent := []types.Message{{ID: "u-1", Role: types.RoleUser, Content: "write"}}
	call := func(id, name string) types.ToolCall {
		return types.ToolCall{ID: id, Type: types.ToolCallTypeFunction, Function: types.FunctionCall{Name: name, Arguments: `{}`}}
	}
	own := func(name string) bool { return name == "write_document_local" }
	for _, c := range []struct {
		calls []types.ToolCall
		want  aap.StopReason
	}{
		{[]types.ToolCall{call("c1", "write_document_local")}, aap.StopEndTurn},
		{[]types.ToolCall{call("c1", "write_document_local"), call("c2", "confirm_changes")}, aap.StopToolUse},
	} {
		snap := sentOf(t, append(sent[:1:1], types.Message{ID: "a-1", Role: types.RoleAssistant, ToolCalls: c.calls}))
		tr := translate.NewAGUIToAAP(translate.AGUIToAAPOptions{Mode: aap.StreamDelta, IsAgentTool: own})
		_, err := tr.FeedSnapshot(snap, sentOf(t, sent), nil)
		require.NoError(t, err)
		_, err = tr.Feed(&events.RunFinishedEvent{BaseEvent: &events.BaseEvent{EventType: events.EventTypeRunFinished}})
		require.NoError(t, err)
		assert.Equal(t, c.want, tr.StopReason(), "%d calls", len(c.calls))
	}
}

// What the run streamed is never streamed again: a snapshot of the whole
// thread after the run streamed its answer (LangGraph, Agent Framework,
// CopilotKit's BuiltInAgent) adds nothing; one that holds more than was
// streamed adds only that, after it.
func TestFeedSnapshotNothingTwice(t *testing.T) {
	sent := []types.Message{{ID: "u-1", Role: types.RoleUser, Content: "weather?"}}
	streamed := decodeEvents(t,
		`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`,
		`{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"get_weather","parentMessageId":"a-1"}`,
		`{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{\"city\":\"Lima\"}"}`,
		`{"type":"TOOL_CALL_END","toolCallId":"c1"}`,
		`{"type":"TOOL_CALL_RESULT","toolCallId":"c1","messageId":"t-1","content":"sunny"}`,
		`{"type":"TEXT_MESSAGE_START","messageId":"a-2","role":"assistant"}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"a-2","delta":"It is sunny."}`,
	)
	whole := append(sent[:1:1],
		types.Message{ID: "a-1", Role: types.RoleAssistant, ToolCalls: []types.ToolCall{{
			ID: "c1", Type: types.ToolCallTypeFunction, Function: types.FunctionCall{Name: "get_weather", Arguments: `{"city":"Lima"}`},
		}}},
		// The agent names the result otherwise than it streamed it.
		types.Message{ID: "other-id", Role: types.RoleTool, ToolCallID: "c1", Content: "sunny"},
		types.Message{ID: "a-2", Role: types.RoleAssistant, Content: "It is sunny."})
	for _, tc := range []struct {
		name string
		snap []types.Message
		want []string
	}{
		{"the whole thread", whole, nil},
		{"one message more", append(whole[:len(whole):len(whole)], types.Message{ID: "a-3", Role: types.RoleAssistant, Content: "Anything else?"}),
			[]string{`text_delta {"delta":"It is sunny."}`, `text_delta {"delta":"\n\n"}`, `text_delta {"delta":"Anything else?"}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := translate.NewAGUIToAAP(translate.AGUIToAAPOptions{Mode: aap.StreamDelta})
			var out []aap.Event
			for _, ev := range streamed {
				evs, err := tr.Feed(ev)
				require.NoError(t, err)
				out = append(out, evs...)
			}
			n := len(out)
			evs, err := tr.FeedSnapshot(sentOf(t, tc.snap), sentOf(t, sent), nil)
			require.NoError(t, err)
			out = append(out, evs...)
			// The open message a-2 is closed only when something new is
			// streamed after it; its text streamed already (n-1).
			got := eventJSON(t, out[n-1:])
			if tc.want == nil {
				assert.Equal(t, []string{`text_delta {"delta":"It is sunny."}`}, got)
			} else {
				assert.Equal(t, tc.want, got)
			}
		})
	}
}

// The result of a call the turn denied is not streamed (AAP has no
// tool_result after a denial); the results of the others are.
func TestFeedSnapshotDenied(t *testing.T) {
	sent := []types.Message{
		{ID: "u-1", Role: types.RoleUser, Content: "delete a and b"},
		{ID: "a-1", Role: types.RoleAssistant, ToolCalls: []types.ToolCall{
			{ID: "c1", Type: types.ToolCallTypeFunction, Function: types.FunctionCall{Name: "delete_file", Arguments: `{"name":"a"}`}},
			{ID: "c2", Type: types.ToolCallTypeFunction, Function: types.FunctionCall{Name: "delete_file", Arguments: `{"name":"b"}`}},
		}},
	}
	snap := append(sent[:2:2],
		types.Message{ID: "t-1", Role: types.RoleTool, ToolCallID: "c1", Content: "Tool call denied: not a"},
		types.Message{ID: "t-2", Role: types.RoleTool, ToolCallID: "c2", Content: "Deleted b."})
	prior := translate.PriorCallsOf(entryMessages(sentOf(t, sent)))
	tr := translate.NewAGUIToAAP(translate.AGUIToAAPOptions{Mode: aap.StreamDelta, Prior: prior})
	out, err := tr.FeedSnapshot(sentOf(t, snap), sentOf(t, sent), []string{"c1"})
	require.NoError(t, err)
	assert.Equal(t, []string{`turn_start {}`, `tool_result {"toolCallId":"c2","content":"Deleted b."}`}, eventJSON(t, out))
}

// NewInSnapshot: a snapshot that holds nothing of what the run was sent
// (it compacts the thread) has nothing new; a message of history under an
// id of its own is not new.
func TestNewInSnapshot(t *testing.T) {
	sent := sentOf(t, []types.Message{
		{ID: "u-1", Role: types.RoleUser, Content: "one"},
		{ID: "a-1", Role: types.RoleAssistant, Content: "first"},
		{ID: "u-2", Role: types.RoleUser, Content: "two"},
	})
	ids := func(es []translate.HistoryEntry) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.AGUIID)
		}
		return out
	}
	compacted := sentOf(t, []types.Message{{ID: "s-1", Role: types.RoleUser, Content: "summary"}, {ID: "s-2", Role: types.RoleAssistant, Content: "noted"}})
	assert.Empty(t, translate.NewInSnapshot(compacted, sent, nil))

	reIDed := sentOf(t, []types.Message{
		{ID: "u-1", Role: types.RoleUser, Content: "one"},
		{ID: "x-1", Role: types.RoleAssistant, Content: "first"}, // a-1 under an id of its own
		{ID: "x-2", Role: types.RoleUser, Content: "two"},        // u-2 likewise
		{ID: "a-2", Role: types.RoleAssistant, Content: "second"},
	})
	assert.Equal(t, []string{"a-2"}, ids(translate.NewInSnapshot(reIDed, sent, nil)))

	run := sentOf(t, []types.Message{{ID: "a-2", Role: types.RoleAssistant, Content: "second"}})
	assert.Empty(t, translate.NewInSnapshot(reIDed, sent, run), "streamed by the run")
}
