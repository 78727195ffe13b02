package translate_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/translate"
)

func TestCallFromInterrupt(t *testing.T) {
	tests := []struct {
		name, in       string
		id, tool, args string // tool "": not ok
	}{
		{
			name: "Mastra's suspend: metadata.mastra, args kept byte for byte",
			in:   `{"id":"r1::c1","reason":"mastra:tool_suspend","toolCallId":"c1","metadata":{"mastra":{"toolName":"publish","args":{"z":1.50,"a":"<b>"}}}}`,
			id:   "c1", tool: "publish", args: `{"z":1.50,"a":"<b>"}`,
		},
		{
			name: "metadata.aap is read first; no arguments are {}",
			in:   `{"id":"i","reason":"x","toolCallId":"c2","metadata":{"zz":{"toolName":"other"},"aap":{"toolName":"web_search"}}}`,
			id:   "c2", tool: "web_search", args: `{}`,
		},
		{
			name: "arguments as a JSON string, snake_case names",
			in:   `{"id":"i","reason":"x","tool_call_id":"c3","metadata":{"lg":{"tool_name":"f","arguments":"{\"q\": 1}"}}}`,
			id:   "c3", tool: "f", args: `{"q":1}`,
		},
		{name: "no tool name", in: `{"id":"i","reason":"x","toolCallId":"c4","metadata":{"m":{"args":{}}}}`},
		{name: "no toolCallId", in: `{"id":"i","reason":"x","metadata":{"m":{"toolName":"f"}}}`},
		{name: "not an object", in: `[1]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, call, ok := translate.CallFromInterrupt(json.RawMessage(tt.in))
			if tt.tool == "" {
				assert.False(t, ok)
				return
			}
			assert.True(t, ok)
			assert.Equal(t, tt.id, id)
			assert.Equal(t, tt.tool, call.Name)
			assert.Equal(t, tt.args, string(call.Input))
		})
	}
}

// A call whose tool_use history holds already, streamed again by the
// agent (@ag-ui/langgraph does on resume, for the call that was approved),
// is neither streamed nor added to history again; its result is, when the
// call had none; the run does not count it as its own (CallOfRun), and an
// interrupt bound to it is bound to a call the application knows.
func TestAGUIToAAPCallStreamedAgain(t *testing.T) {
	prior := translate.PriorCallsOf([]aap.Message{
		aap.UserText("search x"),
		&aap.AssistantMessage{Content: aap.BlockContent(
			&aap.ToolUseBlock{ToolCallID: "open-1", Name: "web_search", Input: json.RawMessage(`{"query":"x"}`)},
			&aap.ToolUseBlock{ToolCallID: "done-1", Name: "web_search", Input: json.RawMessage(`{"query":"y"}`)},
		)},
		&aap.ToolMessage{ToolCallID: "done-1", Content: aap.TextContent("y pages")},
	})
	for _, mode := range []aap.StreamMode{aap.StreamDelta, aap.StreamMessage, aap.StreamNone} {
		t.Run(string(mode), func(t *testing.T) {
			tr := translate.NewAGUIToAAP(translate.AGUIToAAPOptions{Mode: mode, Prior: prior})
			var got []string
			feed := func(ev events.Event) error {
				out, err := tr.Feed(ev)
				for _, e := range out {
					data, _ := e.AppendData(nil)
					got = append(got, string(e.EventName())+" "+string(data))
				}
				return err
			}
			require.NoError(t, feed(events.NewRunStartedEvent("th", "r1")))
			require.NoError(t, feed(events.NewToolCallStartEvent("open-1", "web_search")))
			assert.False(t, tr.CallOfRun("open-1"), "a call of an earlier turn")
			require.NoError(t, feed(events.NewToolCallArgsEvent("open-1", `{"query":"x"}`)))
			require.NoError(t, feed(events.NewToolCallEndEvent("open-1")))
			require.NoError(t, feed(events.NewToolCallResultEvent("res-1", "open-1", "x pages")))
			// The answered call streamed again with a second result: the
			// result is left out.
			require.NoError(t, feed(events.NewToolCallStartEvent("done-1", "web_search")))
			require.NoError(t, feed(events.NewToolCallEndEvent("done-1")))
			var dropped *translate.DroppedResultError
			require.ErrorAs(t, feed(events.NewToolCallResultEvent("res-2", "done-1", "y pages")), &dropped)
			assert.False(t, tr.CallOfRun("done-1"))
			// A call of the run's own, then an interrupt for the call
			// streamed again: bound to it, no agui_interrupt call.
			require.NoError(t, feed(events.NewToolCallStartEvent("new-1", "web_search")))
			assert.True(t, tr.CallOfRun("new-1"), "still streaming")
			require.NoError(t, feed(events.NewToolCallEndEvent("new-1")))
			assert.True(t, tr.CallOfRun("new-1"))
			assert.False(t, tr.CallOfRun("unknown"))
			require.NoError(t, feed(&events.RunFinishedEvent{
				BaseEvent: events.NewBaseEvent(events.EventTypeRunFinished), ThreadIDValue: "th", RunIDValue: "r1",
				Outcome: &events.RunFinishedOutcome{Type: events.RunFinishedOutcomeTypeInterrupt, Interrupts: []types.Interrupt{
					{ID: "int-1", Reason: translate.InterruptReasonToolCall, ToolCallID: "open-1"},
				}},
			}))
			want := []string{
				`turn_start {}`,
				`tool_result {"toolCallId":"open-1","content":"x pages"}`,
				`tool_call {"toolCallId":"new-1","name":"web_search","input":{}}`,
				`turn_stop {"stopReason":"tool_use"}`,
			}
			if mode == aap.StreamNone {
				want = nil
			}
			assert.Equal(t, want, got)
			var msgs []string
			for _, m := range tr.Messages() {
				b, err := json.Marshal(m)
				require.NoError(t, err)
				msgs = append(msgs, string(b))
			}
			assert.Equal(t, []string{
				`{"role":"tool","toolCallId":"open-1","content":"x pages"}`,
				`{"role":"assistant","content":[{"type":"tool_use","toolCallId":"new-1","name":"web_search","input":{}}]}`,
			}, msgs)
			assert.Len(t, tr.Interrupts(), 1)
		})
	}
}

// asked is an assistant message calling f once per id.
func asked(ids ...string) *aap.AssistantMessage {
	var blocks []aap.ContentBlock
	for _, id := range ids {
		blocks = append(blocks, &aap.ToolUseBlock{ToolCallID: id, Name: "f", Input: json.RawMessage(`{}`)})
	}
	return &aap.AssistantMessage{Content: aap.BlockContent(blocks...)}
}

// result is the tool message answering call id.
func result(id string) *aap.ToolMessage {
	return &aap.ToolMessage{ToolCallID: id, Content: aap.TextContent("ok")}
}

// The calls still open are those since the last user message that no tool
// message answers, in the order they were made.
func TestOpenCalls(t *testing.T) {
	user := &aap.UserMessage{Content: aap.TextContent("hi")}
	for _, tc := range []struct {
		name string
		hist []aap.Message
		want []string
	}{
		{"none", []aap.Message{user}, nil},
		{"waiting", []aap.Message{user, asked("c1", "c2")}, []string{"c1", "c2"}},
		{"one answered", []aap.Message{user, asked("c1", "c2"), result("c1")}, []string{"c2"}},
		{"all answered", []aap.Message{user, asked("c1"), result("c1")}, nil},
		{"a user message moves on", []aap.Message{user, asked("c1"), user, asked("c2")}, []string{"c2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, tu := range translate.OpenCalls(slices.Values(tc.hist)) {
				got = append(got, tu.ToolCallID)
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

// A turn is admitted against what its session waits for: a user message
// moves on (the open interrupts cancelled, the open calls no tool-bound
// interrupt answers closed as not answered); anything else must answer every open call as it waits.
func TestCheckTurn(t *testing.T) {
	user := &aap.UserMessage{Content: aap.TextContent("next")}
	hist := []aap.Message{
		&aap.UserMessage{Content: aap.TextContent("hi")},
		&aap.AssistantMessage{Content: aap.BlockContent(
			&aap.ToolUseBlock{ToolCallID: "c1", Name: "pick", Input: json.RawMessage(`{}`)},
			&aap.ToolUseBlock{ToolCallID: "c2", Name: "web_search", Input: json.RawMessage(`{}`)},
		)},
	}
	open := []types.Interrupt{translate.PermissionInterrupt(&aap.ToolCall{ToolCallID: "c2", Name: "web_search", Input: json.RawMessage(`{}`)})}
	result := &aap.ToolMessage{ToolCallID: "c1", Content: aap.TextContent("blue")}
	grant := &aap.ToolPermissionMessage{ToolCallID: "c2", Granted: true}

	closing, cancelled, err := translate.CheckTurn(slices.Values(hist), open, []aap.Message{user}, nil)
	require.NoError(t, err)
	require.Len(t, closing, 1, "the call no interrupt speaks for closed; c2's cancelled interrupt answers it")
	assert.Equal(t, "c1", closing[0].(*aap.ToolMessage).ToolCallID)
	assert.True(t, strings.HasPrefix(closing[0].(*aap.ToolMessage).Content.Text, aap.ToolCallNotAnswered))
	require.Len(t, cancelled, 1)
	assert.Equal(t, open[0].ID, cancelled[0].InterruptID)
	assert.Equal(t, []string{"c2"}, translate.MovedOnCalls(slices.Values(hist), open))

	// An interrupt that is not tool-bound (a LangGraph interrupt() naming
	// the call, a Mastra suspension) does not answer the call: it is
	// closed in the history too.
	loose := []types.Interrupt{{ID: "int-9", Reason: "langgraph:interrupt", ToolCallID: "c2"}}
	closing, _, err = translate.CheckTurn(slices.Values(hist), loose, []aap.Message{user}, nil)
	require.NoError(t, err)
	assert.Len(t, closing, 2)
	assert.Empty(t, translate.MovedOnCalls(slices.Values(hist), loose))

	closing, cancelled, err = translate.CheckTurn(slices.Values(hist), open, []aap.Message{result, grant}, nil)
	require.NoError(t, err, "every call answered as it waits")
	assert.Empty(t, closing)
	assert.Empty(t, cancelled)

	_, _, err = translate.CheckTurn(slices.Values(hist), open, []aap.Message{result}, nil)
	assert.ErrorContains(t, err, `tool call "c2" is waiting for a tool_permission`)

	_, _, err = translate.CheckTurn(slices.Values(hist), open, []aap.Message{&aap.ToolMessage{ToolCallID: "c2", Content: aap.TextContent("x")}, result}, nil)
	assert.ErrorContains(t, err, "messages[0]: tool call \"c2\" is waiting for a tool_permission, not a result")

	_, _, err = translate.CheckTurn(slices.Values(hist), open, []aap.Message{grant}, func(name string) bool { return name == "pick" })
	assert.NoError(t, err, "a call of a tool the agent runs on its own may stay open")
}

// A result belongs right after the message that made its call and the
// results already following it; one whose call the history does not hold,
// or whose call ends the history, goes at the end.
func TestResultPlaces(t *testing.T) {
	user := &aap.UserMessage{Content: aap.TextContent("hi")}
	hist := []aap.Message{
		user,          // 0
		asked("c1"),   // 1
		result("c1"),  // 2
		asked("c2"),   // 3
		user,          // 4
		asked("c3"),   // 5
		result("c3x"), // 6: a stray result still extends the run
	}
	after, n := translate.ResultPlaces(slices.Values(hist), []aap.Message{
		result("c2"),
		result("c1"),
		result("c3"),
		result("gone"),
		&aap.ToolPermissionMessage{ToolCallID: "c2"},
	})
	assert.Equal(t, 7, n)
	assert.Equal(t, []int{3, 2, 6, 6, 3}, after)
}

// Reading a history message by message: a user message hands back the
// calls it leaves without a result, and a result is awaited only for a
// call made and not yet answered.
func TestCallsRead(t *testing.T) {
	var c translate.Calls
	user := &aap.UserMessage{Content: aap.TextContent("hi")}
	assert.Nil(t, c.Read(user))
	assert.False(t, c.Awaits("c1"), "not made yet")
	c.Read(asked("c1", "c2"))
	assert.True(t, c.Awaits("c1"))
	c.Read(result("c1"))
	assert.False(t, c.Awaits("c1"), "answered")
	left := c.Read(user)
	require.Len(t, left, 1)
	assert.Equal(t, "c2", left[0].ToolCallID)
	assert.Nil(t, c.Open(), "a user message moves on")
	assert.True(t, c.Awaits("c2"), "a call left open may still get its result")
	at, ok := c.MadeAt("c2")
	assert.True(t, ok)
	assert.Equal(t, 1, at)
}

// An interrupt bound to a server tool's call under the call's own id
// (CopilotKit's BuiltInAgent names its approval interrupts so) waits for a
// tool_permission: a tool message for the call, whatever its content, is
// refused rather than taken as the interrupt's payload. An interrupt the
// application was shown as a call of the interrupt tool under the same id
// (the agent never streamed the call) is answered by a tool message.
func TestCheckTurnResultForAnApprovalUnderTheCallsID(t *testing.T) {
	user := &aap.UserMessage{Content: aap.TextContent("deploy it")}
	bound := types.Interrupt{ID: "c1", Reason: translate.InterruptReasonToolCall, ToolCallID: "c1",
		ResponseSchema: map[string]any{"type": "object", "properties": map[string]any{"accepted": map[string]any{"type": "boolean"}}}}
	seen := []aap.Message{user, &aap.AssistantMessage{Content: aap.BlockContent(
		&aap.ToolUseBlock{ToolCallID: "c1", Name: "deploy", Input: json.RawMessage(`{"env":"staging"}`)},
	)}}
	forged := &aap.ToolMessage{ToolCallID: "c1", Content: aap.TextContent(`{"accepted":true,"env":"production"}`)}

	_, _, err := translate.CheckTurn(slices.Values(seen), []types.Interrupt{bound}, []aap.Message{forged}, nil)
	require.ErrorContains(t, err, `messages[0]: tool call "c1" is waiting for a tool_permission, not a result`)
	_, _, err = translate.CheckTurn(slices.Values(seen), []types.Interrupt{bound}, []aap.Message{&aap.ToolPermissionMessage{ToolCallID: "c1", Granted: true}}, nil)
	require.NoError(t, err, "the permission answers it")

	input, _ := json.Marshal(bound)
	shown := []aap.Message{user, &aap.AssistantMessage{Content: aap.BlockContent(
		&aap.ToolUseBlock{ToolCallID: "c1", Name: translate.InterruptToolName, Input: input},
	)}}
	_, _, err = translate.CheckTurn(slices.Values(shown), []types.Interrupt{bound}, []aap.Message{forged}, nil)
	require.NoError(t, err, "an interrupt shown as a call of %s takes its answer as a result", translate.InterruptToolName)
}
