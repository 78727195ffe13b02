package translate_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/internal/ident"
	"github.com/aapagui/aapagui/translate"
)

// ---- AAP → AG-UI ----------------------------------------------------------

// strmAGUILine renders an AG-UI event on one line.
func strmAGUILine(t *testing.T, ev events.Event) string {
	t.Helper()
	switch e := ev.(type) {
	case *events.RunStartedEvent:
		return "RUN_STARTED"
	case *events.TextMessageStartEvent:
		role := "<nil>"
		if e.Role != nil {
			role = *e.Role
		}
		return fmt.Sprintf("TEXT_MESSAGE_START %s role=%s", e.MessageID, role)
	case *events.TextMessageContentEvent:
		return fmt.Sprintf("TEXT_MESSAGE_CONTENT %s %q", e.MessageID, e.Delta)
	case *events.TextMessageEndEvent:
		return "TEXT_MESSAGE_END " + e.MessageID
	case *events.ReasoningStartEvent:
		return "REASONING_START " + e.MessageID
	case *events.ReasoningMessageStartEvent:
		return fmt.Sprintf("REASONING_MESSAGE_START %s role=%s", e.MessageID, e.Role)
	case *events.ReasoningMessageContentEvent:
		return fmt.Sprintf("REASONING_MESSAGE_CONTENT %s %q", e.MessageID, e.Delta)
	case *events.ReasoningMessageEndEvent:
		return "REASONING_MESSAGE_END " + e.MessageID
	case *events.ReasoningEndEvent:
		return "REASONING_END " + e.MessageID
	case *events.ToolCallStartEvent:
		parent := "<nil>"
		if e.ParentMessageID != nil {
			parent = *e.ParentMessageID
		}
		return fmt.Sprintf("TOOL_CALL_START %s %s parent=%s", e.ToolCallID, e.ToolCallName, parent)
	case *events.ToolCallArgsEvent:
		return fmt.Sprintf("TOOL_CALL_ARGS %s %s", e.ToolCallID, e.Delta)
	case *events.ToolCallEndEvent:
		return "TOOL_CALL_END " + e.ToolCallID
	case *events.ToolCallResultEvent:
		role := "<nil>"
		if e.Role != nil {
			role = *e.Role
		}
		return fmt.Sprintf("TOOL_CALL_RESULT %s id=%s role=%s %q", e.ToolCallID, e.MessageID, role, e.Content)
	case *events.RunFinishedEvent:
		s := "RUN_FINISHED"
		if o := e.Outcome; o != nil {
			s += " outcome=" + string(o.Type)
			if len(o.Interrupts) > 0 {
				ids := make([]string, len(o.Interrupts))
				for i, in := range o.Interrupts {
					ids[i] = in.ID
				}
				s += "[" + strings.Join(ids, ",") + "]"
			}
		}
		if e.Result != nil {
			b, err := json.Marshal(e.Result)
			require.NoError(t, err)
			s += " result=" + string(b)
		}
		return s
	case *events.RunErrorEvent:
		code := "<nil>"
		if e.Code != nil {
			code = *e.Code
		}
		return fmt.Sprintf("RUN_ERROR code=%s %q", code, e.Message)
	}
	return string(ev.Type())
}

// strmFeedAAP feeds AAP events (requiring no error) and then Finish, and
// checks that the whole output passes agui.Verify.
func strmFeedAAP(t *testing.T, tr *translate.AAPToAGUI, src ...aap.Event) []events.Event {
	t.Helper()
	var out []events.Event
	for _, ev := range src {
		evs, err := tr.Feed(ev)
		require.NoError(t, err)
		out = append(out, evs...)
	}
	out = append(out, tr.Finish()...)
	require.NoError(t, agui.Verify(out), "AG-UI client rules")
	strmCheckSequential(t, out)
	return out
}

// strmCheckSequential checks that the translator never interleaves: while a
// text message, a reasoning block or a tool call is open, only its own
// events come (older @ag-ui/client verifiers allow nothing else, and an AAP
// turn is sequential anyway).
func strmCheckSequential(t *testing.T, evs []events.Event) {
	t.Helper()
	open := ""
	for i, ev := range evs {
		var key string
		var opens, closes bool
		switch e := ev.(type) {
		case *events.TextMessageStartEvent:
			key, opens = "text "+e.MessageID, true
		case *events.TextMessageContentEvent:
			key = "text " + e.MessageID
		case *events.TextMessageEndEvent:
			key, closes = "text "+e.MessageID, true
		case *events.ReasoningStartEvent:
			key, opens = "reasoning "+e.MessageID, true
		case *events.ReasoningMessageStartEvent:
			key = "reasoning " + e.MessageID
		case *events.ReasoningMessageContentEvent:
			key = "reasoning " + e.MessageID
		case *events.ReasoningMessageEndEvent:
			key = "reasoning " + e.MessageID
		case *events.ReasoningEndEvent:
			key, closes = "reasoning "+e.MessageID, true
		case *events.ToolCallStartEvent:
			key, opens = "tool call "+e.ToolCallID, true
		case *events.ToolCallArgsEvent:
			key = "tool call " + e.ToolCallID
		case *events.ToolCallEndEvent:
			key, closes = "tool call "+e.ToolCallID, true
		}
		if open != "" {
			require.Equal(t, open, key, "event %d (%s) while %s is open", i, ev.Type(), open)
		}
		switch {
		case opens:
			open = key
		case closes:
			open = ""
		}
	}
}

func strmAGUILines(t *testing.T, evs []events.Event) []string {
	t.Helper()
	lines := make([]string, len(evs))
	for i, ev := range evs {
		lines[i] = strmAGUILine(t, ev)
	}
	return lines
}

// strmClientTools makes an IsClientTool that knows the given names.
func strmClientTools(names ...string) func(string) bool {
	return func(name string) bool {
		for _, n := range names {
			if n == name {
				return true
			}
		}
		return false
	}
}

func strmCall(id, name, input string) *aap.ToolCall {
	var in json.RawMessage
	if input != "" {
		in = json.RawMessage(input)
	}
	return &aap.ToolCall{ToolCallID: id, Name: name, Input: in}
}

func strmResult(id, content string) *aap.ToolResult {
	return &aap.ToolResult{ToolCallID: id, Content: aap.TextContent(content)}
}

func strmStop(r aap.StopReason) *aap.TurnStop { return &aap.TurnStop{StopReason: r} }

func TestAAPToAGUI(t *testing.T) {
	tests := []struct {
		name string
		// clientTools, when not nil, are the only client tools; nil means
		// IsClientTool is nil (every tool is a client tool).
		clientTools []string
		in          []aap.Event
		want        []string
	}{
		{
			name: "events before turn_start: RUN_STARTED first anyway, once",
			in:   []aap.Event{&aap.TextDelta{Delta: "hi"}, &aap.TurnStart{}, strmStop(aap.StopEndTurn)},
			want: []string{
				"RUN_STARTED",
				"TEXT_MESSAGE_START m1 role=assistant", `TEXT_MESSAGE_CONTENT m1 "hi"`, "TEXT_MESSAGE_END m1",
				"RUN_FINISHED outcome=success",
			},
		},
		{
			name: "empty deltas and messages are never emitted",
			in: []aap.Event{
				&aap.TurnStart{}, &aap.TextDelta{}, &aap.ThinkingDelta{}, &aap.Text{}, &aap.Thinking{},
				&aap.TextDelta{Delta: "a"}, &aap.TextDelta{}, &aap.ThinkingDelta{}, strmStop(aap.StopEndTurn),
			},
			want: []string{
				"RUN_STARTED",
				"TEXT_MESSAGE_START m1 role=assistant", `TEXT_MESSAGE_CONTENT m1 "a"`, "TEXT_MESSAGE_END m1",
				"RUN_FINISHED outcome=success",
			},
		},
		{
			name: "text, thinking, text: each switch closes the previous message",
			in: []aap.Event{
				&aap.TurnStart{}, &aap.TextDelta{Delta: "a"}, &aap.ThinkingDelta{Delta: "t1"}, &aap.ThinkingDelta{Delta: "t2"},
				&aap.TextDelta{Delta: "b"}, &aap.ThinkingDelta{Delta: "t3"}, strmStop(aap.StopEndTurn),
			},
			want: []string{
				"RUN_STARTED",
				"TEXT_MESSAGE_START m1 role=assistant", `TEXT_MESSAGE_CONTENT m1 "a"`, "TEXT_MESSAGE_END m1",
				"REASONING_START m2", "REASONING_MESSAGE_START m2 role=reasoning",
				`REASONING_MESSAGE_CONTENT m2 "t1"`, `REASONING_MESSAGE_CONTENT m2 "t2"`,
				"REASONING_MESSAGE_END m2", "REASONING_END m2",
				"TEXT_MESSAGE_START m3 role=assistant", `TEXT_MESSAGE_CONTENT m3 "b"`, "TEXT_MESSAGE_END m3",
				"REASONING_START m4", "REASONING_MESSAGE_START m4 role=reasoning", `REASONING_MESSAGE_CONTENT m4 "t3"`,
				"REASONING_MESSAGE_END m4", "REASONING_END m4",
				"RUN_FINISHED outcome=success",
			},
		},
		{
			name: "whole thinking and text messages (message mode)",
			in: []aap.Event{
				&aap.TurnStart{}, &aap.Thinking{Thinking: "plan"}, &aap.Text{Text: "one"}, &aap.Text{Text: "two"}, strmStop(aap.StopEndTurn),
			},
			want: []string{
				"RUN_STARTED",
				"REASONING_START m1", "REASONING_MESSAGE_START m1 role=reasoning", `REASONING_MESSAGE_CONTENT m1 "plan"`,
				"REASONING_MESSAGE_END m1", "REASONING_END m1",
				"TEXT_MESSAGE_START m2 role=assistant", `TEXT_MESSAGE_CONTENT m2 "one"`, "TEXT_MESSAGE_END m2",
				"TEXT_MESSAGE_START m3 role=assistant", `TEXT_MESSAGE_CONTENT m3 "two"`, "TEXT_MESSAGE_END m3",
				"RUN_FINISHED outcome=success",
			},
		},
		{
			name: "a tool call after text has the text message as parent",
			in: []aap.Event{
				&aap.TurnStart{}, &aap.TextDelta{Delta: "Let me check."},
				strmCall("c1", "get", `{ "a": 1 }`), strmCall("c2", "now", ""), strmStop(aap.StopToolUse),
			},
			want: []string{
				"RUN_STARTED",
				"TEXT_MESSAGE_START m1 role=assistant", `TEXT_MESSAGE_CONTENT m1 "Let me check."`, "TEXT_MESSAGE_END m1",
				"TOOL_CALL_START c1 get parent=m1", `TOOL_CALL_ARGS c1 {"a":1}`, "TOOL_CALL_END c1",
				"TOOL_CALL_START c2 now parent=m1", "TOOL_CALL_ARGS c2 {}", "TOOL_CALL_END c2",
				"RUN_FINISHED",
			},
		},
		{
			name: "a tool call with no text gets a fresh assistant id",
			in:   []aap.Event{&aap.TurnStart{}, strmCall("c1", "get", `{}`), strmStop(aap.StopToolUse)},
			want: []string{
				"RUN_STARTED",
				"TOOL_CALL_START c1 get parent=m1", "TOOL_CALL_ARGS c1 {}", "TOOL_CALL_END c1",
				"RUN_FINISHED",
			},
		},
		{
			name: "a tool call after thinking closes the reasoning",
			in:   []aap.Event{&aap.TurnStart{}, &aap.ThinkingDelta{Delta: "t"}, strmCall("c1", "get", `{}`), strmStop(aap.StopToolUse)},
			want: []string{
				"RUN_STARTED",
				"REASONING_START m1", "REASONING_MESSAGE_START m1 role=reasoning", `REASONING_MESSAGE_CONTENT m1 "t"`,
				"REASONING_MESSAGE_END m1", "REASONING_END m1",
				"TOOL_CALL_START c1 get parent=m2", "TOOL_CALL_ARGS c1 {}", "TOOL_CALL_END c1",
				"RUN_FINISHED",
			},
		},
		{
			name:        "after a tool result new text opens a new message, and later calls hang off it",
			clientTools: []string{"show"},
			in: []aap.Event{
				&aap.TurnStart{}, &aap.TextDelta{Delta: "a"}, strmCall("s1", "search", `{"q":"x"}`), strmResult("s1", "found"),
				&aap.TextDelta{Delta: "b"}, strmCall("c1", "show", ""), strmStop(aap.StopToolUse),
			},
			want: []string{
				"RUN_STARTED",
				"TEXT_MESSAGE_START m1 role=assistant", `TEXT_MESSAGE_CONTENT m1 "a"`, "TEXT_MESSAGE_END m1",
				"TOOL_CALL_START s1 search parent=m1", `TOOL_CALL_ARGS s1 {"q":"x"}`, "TOOL_CALL_END s1",
				`TOOL_CALL_RESULT s1 id=result-s1 role=tool "found"`,
				"TEXT_MESSAGE_START m2 role=assistant", `TEXT_MESSAGE_CONTENT m2 "b"`, "TEXT_MESSAGE_END m2",
				"TOOL_CALL_START c1 show parent=m2", "TOOL_CALL_ARGS c1 {}", "TOOL_CALL_END c1",
				"RUN_FINISHED",
			},
		},
		{
			name: "after a tool result a call with no text gets a new assistant id",
			in: []aap.Event{
				&aap.TurnStart{}, strmCall("s1", "a", `{}`), strmResult("s1", "r"), strmCall("s2", "b", `{}`), strmResult("s2", "r"),
				strmStop(aap.StopEndTurn),
			},
			want: []string{
				"RUN_STARTED",
				"TOOL_CALL_START s1 a parent=m1", "TOOL_CALL_ARGS s1 {}", "TOOL_CALL_END s1", `TOOL_CALL_RESULT s1 id=result-s1 role=tool "r"`,
				"TOOL_CALL_START s2 b parent=m2", "TOOL_CALL_ARGS s2 {}", "TOOL_CALL_END s2", `TOOL_CALL_RESULT s2 id=result-s2 role=tool "r"`,
				"RUN_FINISHED outcome=success",
			},
		},
		{
			name: "text after a tool call is a new message",
			in: []aap.Event{
				&aap.TurnStart{}, &aap.TextDelta{Delta: "a"}, strmCall("c1", "f", `{}`), &aap.TextDelta{Delta: "b"},
				strmCall("c2", "f", `{}`), strmStop(aap.StopToolUse),
			},
			want: []string{
				"RUN_STARTED",
				"TEXT_MESSAGE_START m1 role=assistant", `TEXT_MESSAGE_CONTENT m1 "a"`, "TEXT_MESSAGE_END m1",
				"TOOL_CALL_START c1 f parent=m1", "TOOL_CALL_ARGS c1 {}", "TOOL_CALL_END c1",
				"TEXT_MESSAGE_START m2 role=assistant", `TEXT_MESSAGE_CONTENT m2 "b"`, "TEXT_MESSAGE_END m2",
				"TOOL_CALL_START c2 f parent=m2", "TOOL_CALL_ARGS c2 {}", "TOOL_CALL_END c2",
				"RUN_FINISHED",
			},
		},
		{
			name:        "tool_use with only client tools: RUN_FINISHED without outcome",
			clientTools: []string{"show", "ask"},
			in:          []aap.Event{&aap.TurnStart{}, strmCall("c1", "show", `{}`), strmCall("c2", "ask", `{}`), strmStop(aap.StopToolUse)},
			want: []string{
				"RUN_STARTED",
				"TOOL_CALL_START c1 show parent=m1", "TOOL_CALL_ARGS c1 {}", "TOOL_CALL_END c1",
				"TOOL_CALL_START c2 ask parent=m1", "TOOL_CALL_ARGS c2 {}", "TOOL_CALL_END c2",
				"RUN_FINISHED",
			},
		},
		{
			name:        "an untrusted server tool: interrupt outcome",
			clientTools: []string{},
			in:          []aap.Event{&aap.TurnStart{}, strmCall("s1", "delete_file", `{"path":"/tmp/x"}`), strmStop(aap.StopToolUse)},
			want: []string{
				"RUN_STARTED",
				"TOOL_CALL_START s1 delete_file parent=m1", `TOOL_CALL_ARGS s1 {"path":"/tmp/x"}`, "TOOL_CALL_END s1",
				"RUN_FINISHED outcome=interrupt[perm-s1]",
			},
		},
		{
			name:        "client and server tools mixed: one interrupt per pending server call",
			clientTools: []string{"show"},
			in: []aap.Event{
				&aap.TurnStart{}, strmCall("s1", "delete_file", `{}`), strmCall("c1", "show", `{}`), strmCall("s2", "send_mail", `{}`),
				strmStop(aap.StopToolUse),
			},
			want: []string{
				"RUN_STARTED",
				"TOOL_CALL_START s1 delete_file parent=m1", "TOOL_CALL_ARGS s1 {}", "TOOL_CALL_END s1",
				"TOOL_CALL_START c1 show parent=m1", "TOOL_CALL_ARGS c1 {}", "TOOL_CALL_END c1",
				"TOOL_CALL_START s2 send_mail parent=m1", "TOOL_CALL_ARGS s2 {}", "TOOL_CALL_END s2",
				"RUN_FINISHED outcome=interrupt[perm-s1,perm-s2]",
			},
		},
		{
			name:        "a server tool that already has its result is not interrupted",
			clientTools: []string{"show"},
			in: []aap.Event{
				&aap.TurnStart{}, strmCall("s1", "search", `{}`), strmResult("s1", "r"), strmCall("s2", "delete_file", `{}`),
				strmStop(aap.StopToolUse),
			},
			want: []string{
				"RUN_STARTED",
				"TOOL_CALL_START s1 search parent=m1", "TOOL_CALL_ARGS s1 {}", "TOOL_CALL_END s1", `TOOL_CALL_RESULT s1 id=result-s1 role=tool "r"`,
				"TOOL_CALL_START s2 delete_file parent=m2", "TOOL_CALL_ARGS s2 {}", "TOOL_CALL_END s2",
				"RUN_FINISHED outcome=interrupt[perm-s2]",
			},
		},
		{
			name:        "only answered server tools and a client tool: no outcome",
			clientTools: []string{"show"},
			in: []aap.Event{
				&aap.TurnStart{}, strmCall("s1", "search", `{}`), strmResult("s1", "r"), strmCall("c1", "show", `{}`),
				strmStop(aap.StopToolUse),
			},
			want: []string{
				"RUN_STARTED",
				"TOOL_CALL_START s1 search parent=m1", "TOOL_CALL_ARGS s1 {}", "TOOL_CALL_END s1", `TOOL_CALL_RESULT s1 id=result-s1 role=tool "r"`,
				"TOOL_CALL_START c1 show parent=m2", "TOOL_CALL_ARGS c1 {}", "TOOL_CALL_END c1",
				"RUN_FINISHED",
			},
		},
		{
			name: "max_tokens",
			in:   []aap.Event{&aap.TurnStart{}, &aap.TextDelta{Delta: "trunc"}, strmStop(aap.StopMaxTokens)},
			want: []string{
				"RUN_STARTED",
				"TEXT_MESSAGE_START m1 role=assistant", `TEXT_MESSAGE_CONTENT m1 "trunc"`, "TEXT_MESSAGE_END m1",
				`RUN_FINISHED outcome=success result={"stopReason":"max_tokens"}`,
			},
		},
		{
			name: "refusal",
			in:   []aap.Event{&aap.TurnStart{}, strmStop(aap.StopRefusal)},
			want: []string{"RUN_STARTED", `RUN_FINISHED outcome=success result={"stopReason":"refusal"}`},
		},
		{
			name: "error: RUN_ERROR AGENT_ERROR after closing what is open",
			in:   []aap.Event{&aap.TurnStart{}, &aap.TextDelta{Delta: "par"}, strmStop(aap.StopError)},
			want: []string{
				"RUN_STARTED",
				"TEXT_MESSAGE_START m1 role=assistant", `TEXT_MESSAGE_CONTENT m1 "par"`, "TEXT_MESSAGE_END m1",
				`RUN_ERROR code=AGENT_ERROR "The agent stopped with an error."`,
			},
		},
		{
			name: "no turn_stop: RUN_ERROR UPSTREAM_INCOMPLETE after closing what is open",
			in:   []aap.Event{&aap.TurnStart{}, &aap.ThinkingDelta{Delta: "hm"}},
			want: []string{
				"RUN_STARTED",
				"REASONING_START m1", "REASONING_MESSAGE_START m1 role=reasoning", `REASONING_MESSAGE_CONTENT m1 "hm"`,
				"REASONING_MESSAGE_END m1", "REASONING_END m1",
				`RUN_ERROR code=UPSTREAM_INCOMPLETE "The agent's stream ended before the turn was complete."`,
			},
		},
		{
			name: "nothing at all",
			in:   nil,
			want: []string{"RUN_STARTED", `RUN_ERROR code=UPSTREAM_INCOMPLETE "The agent's stream ended before the turn was complete."`},
		},
		{
			name: "an empty tool result becomes (empty result)",
			in: []aap.Event{
				&aap.TurnStart{}, strmCall("s1", "f", `{}`), strmResult("s1", ""),
				strmCall("s2", "f", `{}`), &aap.ToolResult{ToolCallID: "s2", Content: aap.BlockContent()},
				strmStop(aap.StopEndTurn),
			},
			want: []string{
				"RUN_STARTED",
				"TOOL_CALL_START s1 f parent=m1", "TOOL_CALL_ARGS s1 {}", "TOOL_CALL_END s1", `TOOL_CALL_RESULT s1 id=result-s1 role=tool "(empty result)"`,
				"TOOL_CALL_START s2 f parent=m2", "TOOL_CALL_ARGS s2 {}", "TOOL_CALL_END s2", `TOOL_CALL_RESULT s2 id=result-s2 role=tool "(empty result)"`,
				"RUN_FINISHED outcome=success",
			},
		},
		{
			name: "a tool result with an image is the JSON of its blocks",
			in: []aap.Event{
				&aap.TurnStart{}, strmCall("s1", "plot", `{}`),
				&aap.ToolResult{ToolCallID: "s1", Content: aap.BlockContent(&aap.ImageBlock{URL: "https://x/p.png"})},
				strmStop(aap.StopEndTurn),
			},
			want: []string{
				"RUN_STARTED",
				"TOOL_CALL_START s1 plot parent=m1", "TOOL_CALL_ARGS s1 {}", "TOOL_CALL_END s1",
				`TOOL_CALL_RESULT s1 id=result-s1 role=tool "[{\"type\":\"image\",\"url\":\"https://x/p.png\"}]"`,
				"RUN_FINISHED outcome=success",
			},
		},
		{
			name: "unknown and nil AAP events produce nothing",
			in:   []aap.Event{&aap.TurnStart{}, &aap.UnknownEvent{Name: "usage", Data: json.RawMessage(`{"tokens":3}`)}, nil, strmStop(aap.StopEndTurn)},
			want: []string{"RUN_STARTED", "RUN_FINISHED outcome=success"},
		},
		{
			name: "an unknown stop reason finishes with success",
			in:   []aap.Event{&aap.TurnStart{}, strmStop("paused")},
			want: []string{"RUN_STARTED", "RUN_FINISHED outcome=success"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := translate.AAPToAGUIOptions{ThreadID: "th", RunID: "r1", NewID: translate.SequentialIDs("m")}
			if tt.clientTools != nil {
				opts.IsClientTool = strmClientTools(tt.clientTools...)
			}
			tr := translate.NewAAPToAGUI(opts)
			got := strmFeedAAP(t, tr, tt.in...)
			assert.Equal(t, tt.want, strmAGUILines(t, got))
			assert.True(t, tr.Done())
		})
	}
}

func TestAAPToAGUIPermissionInterrupts(t *testing.T) {
	tr := translate.NewAAPToAGUI(translate.AAPToAGUIOptions{
		ThreadID: "th", RunID: "r1", NewID: translate.SequentialIDs("m"), IsClientTool: strmClientTools("show"),
	})
	s1 := strmCall("s1", "delete_file", `{"path":"/tmp/x"}`)
	s2 := strmCall("s2", "send_mail", `{"to":"a@b.c"}`)
	out := strmFeedAAP(t, tr, &aap.TurnStart{}, s1, strmCall("c1", "show", `{}`), s2, strmStop(aap.StopToolUse))

	fin, ok := out[len(out)-1].(*events.RunFinishedEvent)
	require.True(t, ok)
	assert.Equal(t, "th", fin.ThreadIDValue)
	assert.Equal(t, "r1", fin.RunIDValue)
	assert.Nil(t, fin.Result)
	require.NotNil(t, fin.Outcome)
	assert.Equal(t, events.RunFinishedOutcomeTypeInterrupt, fin.Outcome.Type)
	require.Len(t, fin.Outcome.Interrupts, 2)
	for i, call := range []*aap.ToolCall{s1, s2} {
		in := fin.Outcome.Interrupts[i]
		assert.Equal(t, translate.PermissionInterrupt(call), in)
		assert.Equal(t, ident.Interrupt(call.ToolCallID), in.ID)
		assert.Equal(t, call.ToolCallID, in.ToolCallID)
		assert.Equal(t, "tool_call", in.Reason)
		assert.NotEmpty(t, in.Message)
		assert.Equal(t, []any{"approved"}, in.ResponseSchema["required"])
	}
	pending := tr.PendingCalls()
	require.Len(t, pending, 3)
	assert.Equal(t, []string{"s1", "c1", "s2"}, []string{pending[0].ToolCallID, pending[1].ToolCallID, pending[2].ToolCallID})
}

func TestAAPToAGUIPendingCalls(t *testing.T) {
	tr := translate.NewAAPToAGUI(translate.AAPToAGUIOptions{NewID: translate.SequentialIDs("m")})
	assert.Empty(t, tr.PendingCalls())
	for _, ev := range []aap.Event{strmCall("s1", "a", `{}`), strmCall("c1", "b", `{}`), strmResult("s1", "ok")} {
		_, err := tr.Feed(ev)
		require.NoError(t, err)
	}
	pending := tr.PendingCalls()
	require.Len(t, pending, 1)
	assert.Equal(t, "c1", pending[0].ToolCallID)
}

func TestAAPToAGUIRunIDs(t *testing.T) {
	for _, stop := range []aap.StopReason{aap.StopEndTurn, aap.StopError} {
		t.Run(string(stop), func(t *testing.T) {
			tr := translate.NewAAPToAGUI(translate.AAPToAGUIOptions{ThreadID: "thread-9", RunID: "run-9"})
			out := strmFeedAAP(t, tr, &aap.TurnStart{}, strmStop(stop))
			require.Len(t, out, 2)
			start := out[0].(*events.RunStartedEvent)
			assert.Equal(t, "thread-9", start.ThreadIDValue)
			assert.Equal(t, "run-9", start.RunIDValue)
			switch e := out[1].(type) {
			case *events.RunFinishedEvent:
				assert.Equal(t, "thread-9", e.ThreadIDValue)
				assert.Equal(t, "run-9", e.RunIDValue)
			case *events.RunErrorEvent:
				assert.Empty(t, e.RunIDValue, "RUN_ERROR has no runId in AG-UI's schema")
			default:
				t.Fatalf("terminal event %s", e.Type())
			}
		})
	}
}

func TestAAPToAGUIFeedAfterTheEnd(t *testing.T) {
	for _, stop := range []aap.StopReason{aap.StopEndTurn, aap.StopError} {
		t.Run(string(stop), func(t *testing.T) {
			tr := translate.NewAAPToAGUI(translate.AAPToAGUIOptions{})
			_, err := tr.Feed(strmStop(stop))
			require.NoError(t, err)
			require.True(t, tr.Done())

			out, err := tr.Feed(&aap.TextDelta{Delta: "late"})
			require.ErrorIs(t, err, translate.ErrTerminated)
			assert.Empty(t, out)
			out, err = tr.Feed(strmStop(aap.StopEndTurn))
			require.ErrorIs(t, err, translate.ErrTerminated)
			assert.Empty(t, out)
			assert.Empty(t, tr.Finish())
		})
	}
	t.Run("after Finish", func(t *testing.T) {
		tr := translate.NewAAPToAGUI(translate.AAPToAGUIOptions{})
		require.Len(t, tr.Finish(), 2)
		assert.True(t, tr.Done())
		out, err := tr.Feed(&aap.TurnStart{})
		require.ErrorIs(t, err, translate.ErrTerminated)
		assert.Empty(t, out)
		assert.Empty(t, tr.Finish())
	})
}

func TestAAPToAGUIInvalidToolInput(t *testing.T) {
	tr := translate.NewAAPToAGUI(translate.AAPToAGUIOptions{NewID: translate.SequentialIDs("m")})
	var all []events.Event
	out, err := tr.Feed(&aap.TextDelta{Delta: "a"})
	require.NoError(t, err)
	all = append(all, out...)
	out, err = tr.Feed(strmCall("bad_1", "f", `[1,2]`))
	var se *translate.StreamError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "tool_call", se.Event)
	assert.Contains(t, se.Error(), "bad_1")
	all = append(all, out...)
	out, err = tr.Feed(strmStop(aap.StopEndTurn))
	require.NoError(t, err)
	all = append(all, out...)
	require.NoError(t, agui.Verify(all))
	assert.Equal(t, []string{
		"RUN_STARTED",
		"TEXT_MESSAGE_START m1 role=assistant", `TEXT_MESSAGE_CONTENT m1 "a"`, "TEXT_MESSAGE_END m1",
		"RUN_FINISHED outcome=success",
	}, strmAGUILines(t, all))
}

func TestAAPToAGUIMessages(t *testing.T) {
	tr := translate.NewAAPToAGUI(translate.AAPToAGUIOptions{NewID: translate.SequentialIDs("m")})
	assert.Empty(t, tr.Messages())
	out := strmFeedAAP(t, tr,
		&aap.TurnStart{},
		&aap.TextDelta{Delta: "Hel"}, &aap.TextDelta{Delta: "lo"},
		&aap.ThinkingDelta{Delta: "think"},
		&aap.TextDelta{Delta: "Checking."},
		strmCall("s1", "search", `{ "q" : "x" }`),
		strmResult("s1", "found"),
		strmCall("c1", "show", ""),
		&aap.Text{Text: "Done."},
		strmStop(aap.StopToolUse),
	)
	msgs := tr.Messages()
	require.JSONEq(t, `[
		{"id":"m1","role":"assistant","content":"Hello"},
		{"id":"m2","role":"reasoning","content":"think"},
		{"id":"m3","role":"assistant","content":"Checking.","toolCalls":[
			{"id":"s1","type":"function","function":{"name":"search","arguments":"{\"q\":\"x\"}"}}]},
		{"id":"result-s1","role":"tool","toolCallId":"s1","content":"found"},
		{"id":"m4","role":"assistant","toolCalls":[
			{"id":"c1","type":"function","function":{"name":"show","arguments":"{}"}}]},
		{"id":"m5","role":"assistant","content":"Done."}]`, msgJSON(t, msgs))

	// Every id the events used names one of the messages.
	ids := map[string]bool{}
	for _, m := range msgs {
		ids[m.ID] = true
	}
	for _, ev := range out {
		var id string
		switch e := ev.(type) {
		case *events.TextMessageStartEvent:
			id = e.MessageID
		case *events.ReasoningMessageStartEvent:
			id = e.MessageID
		case *events.ToolCallStartEvent:
			id = *e.ParentMessageID
		case *events.ToolCallResultEvent:
			id = e.MessageID
		default:
			continue
		}
		assert.True(t, ids[id], "%s uses id %q, which Messages does not have", ev.Type(), id)
	}

	// Messages is a snapshot: calling it changes nothing, and later calls
	// see the same.
	assert.Equal(t, msgs, tr.Messages())
}

func TestAAPToAGUIMessagesSoFar(t *testing.T) {
	tr := translate.NewAAPToAGUI(translate.AAPToAGUIOptions{NewID: translate.SequentialIDs("m")})
	_, err := tr.Feed(&aap.TextDelta{Delta: "par"})
	require.NoError(t, err)
	require.JSONEq(t, `[{"id":"m1","role":"assistant","content":"par"}]`, msgJSON(t, tr.Messages()))
	_, err = tr.Feed(&aap.TextDelta{Delta: "tial"})
	require.NoError(t, err)
	require.JSONEq(t, `[{"id":"m1","role":"assistant","content":"partial"}]`, msgJSON(t, tr.Messages()))
}

func TestAAPToAGUITimestamps(t *testing.T) {
	src := []aap.Event{
		&aap.TurnStart{}, &aap.ThinkingDelta{Delta: "t"}, &aap.TextDelta{Delta: "x"},
		strmCall("c1", "f", `{}`), strmResult("c1", "r"), strmStop(aap.StopEndTurn),
	}
	t.Run("Now stamps every event", func(t *testing.T) {
		at := time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.UTC)
		tr := translate.NewAAPToAGUI(translate.AAPToAGUIOptions{Now: func() time.Time { return at }})
		for _, ev := range strmFeedAAP(t, tr, src...) {
			require.NotNil(t, ev.Timestamp(), "%s", ev.Type())
			assert.Equal(t, at.UnixMilli(), *ev.Timestamp(), "%s", ev.Type())
		}
	})
	t.Run("no Now, no timestamps", func(t *testing.T) {
		tr := translate.NewAAPToAGUI(translate.AAPToAGUIOptions{})
		for _, ev := range strmFeedAAP(t, tr, src...) {
			assert.Nil(t, ev.Timestamp(), "%s", ev.Type())
		}
	})
}

func TestAAPToAGUIRandomIDs(t *testing.T) {
	tr := translate.NewAAPToAGUI(translate.AAPToAGUIOptions{})
	out := strmFeedAAP(t, tr, &aap.TextDelta{Delta: "a"}, &aap.ThinkingDelta{Delta: "b"}, strmStop(aap.StopEndTurn))
	a := out[1].(*events.TextMessageStartEvent).MessageID
	b := out[4].(*events.ReasoningStartEvent).MessageID
	assert.True(t, strings.HasPrefix(a, "msg-"), a)
	assert.NotEqual(t, a, b)
}

// The slice Feed returns is reused, the events in it are not.
func TestAAPToAGUIEventsOutliveTheSlice(t *testing.T) {
	tr := translate.NewAAPToAGUI(translate.AAPToAGUIOptions{NewID: translate.SequentialIDs("m")})
	first, err := tr.Feed(&aap.TextDelta{Delta: "one"})
	require.NoError(t, err)
	kept := append([]events.Event(nil), first...)
	_, err = tr.Feed(&aap.ThinkingDelta{Delta: "two"})
	require.NoError(t, err)
	assert.Equal(t, []string{"RUN_STARTED", "TEXT_MESSAGE_START m1 role=assistant", `TEXT_MESSAGE_CONTENT m1 "one"`},
		strmAGUILines(t, kept))
}

// ---- AG-UI → AAP ----------------------------------------------------------

func strmP(s string) *string { return &s }

func strmRunStarted() events.Event { return events.NewRunStartedEvent("th", "r1") }

func strmTextStart(id string) events.Event { return events.NewTextMessageStartEvent(id) }

func strmTextContent(id, d string) events.Event { return events.NewTextMessageContentEvent(id, d) }

func strmTextEnd(id string) events.Event { return events.NewTextMessageEndEvent(id) }

func strmToolStart(id, name string) events.Event { return events.NewToolCallStartEvent(id, name) }

func strmToolArgs(id, d string) events.Event { return events.NewToolCallArgsEvent(id, d) }

func strmToolEnd(id string) events.Event { return events.NewToolCallEndEvent(id) }

func strmToolResult(id, content string) events.Event {
	return events.NewToolCallResultEvent("res-"+id, id, content)
}

func strmToolCallFull(id, name, args string) []events.Event {
	return []events.Event{strmToolStart(id, name), strmToolArgs(id, args), strmToolEnd(id)}
}

func strmFinished(outcome *events.RunFinishedOutcome, result any) events.Event {
	ev := events.NewRunFinishedEvent("th", "r1")
	ev.Outcome, ev.Result = outcome, result
	return ev
}

func strmInterrupts(ins ...types.Interrupt) *events.RunFinishedOutcome {
	return &events.RunFinishedOutcome{Type: events.RunFinishedOutcomeTypeInterrupt, Interrupts: ins}
}

func strmTextChunk(id, delta *string) events.Event {
	return events.NewTextMessageChunkEvent(id, nil, delta)
}

func strmToolChunk(id, name, delta *string) events.Event {
	ev := events.NewToolCallChunkEvent()
	ev.ToolCallID, ev.ToolCallName, ev.Delta = id, name, delta
	return ev
}

func strmJoin(parts ...any) []events.Event {
	var out []events.Event
	for _, p := range parts {
		switch p := p.(type) {
		case events.Event:
			out = append(out, p)
		case []events.Event:
			out = append(out, p...)
		default:
			panic(fmt.Sprintf("strmJoin: %T", p))
		}
	}
	return out
}

// strmAAPLine renders an AAP event as "name data".
func strmAAPLine(t *testing.T, ev aap.Event) string {
	t.Helper()
	data, err := ev.AppendData(nil)
	require.NoError(t, err, "%s", ev.EventName())
	return string(ev.EventName()) + " " + string(data)
}

// strmFeedAGUI feeds AG-UI events and then Finish, requiring no error.
// Each output line is prefixed with the index of the input event that
// produced it, or "fin" for Finish. The stream is checked: turn_start
// first and exactly one turn_stop, last (nothing at all in none mode).
func strmFeedAGUI(t *testing.T, tr *translate.AGUIToAAP, mode aap.StreamMode, src []events.Event) []string {
	t.Helper()
	var lines []string
	var all []aap.Event
	add := func(at string, evs []aap.Event) {
		for _, ev := range evs {
			lines = append(lines, at+": "+strmAAPLine(t, ev))
			all = append(all, ev)
		}
	}
	for i, ev := range src {
		out, err := tr.Feed(ev)
		require.NoError(t, err, "event %d (%s)", i, ev.Type())
		add(fmt.Sprint(i), out)
	}
	add("fin", tr.Finish())
	strmCheckAAP(t, mode, all)
	return lines
}

func strmCheckAAP(t *testing.T, mode aap.StreamMode, all []aap.Event) {
	t.Helper()
	if mode == aap.StreamNone {
		require.Empty(t, all, "none mode emits nothing")
		return
	}
	require.GreaterOrEqual(t, len(all), 2)
	require.IsType(t, &aap.TurnStart{}, all[0])
	require.IsType(t, &aap.TurnStop{}, all[len(all)-1])
	for _, ev := range all[1 : len(all)-1] {
		require.NotEqual(t, aap.EventTurnStart, ev.EventName())
		require.NotEqual(t, aap.EventTurnStop, ev.EventName())
	}
}

func TestAGUIToAAPModes(t *testing.T) {
	src := strmJoin(
		strmRunStarted(),
		events.NewReasoningStartEvent("r1"),
		events.NewReasoningMessageStartEvent("r1", "reasoning"),
		events.NewReasoningMessageContentEvent("r1", "hmm"),
		events.NewReasoningMessageEndEvent("r1"),
		events.NewReasoningEndEvent("r1"),
		strmTextStart("m1"), strmTextContent("m1", "Hel"), strmTextContent("m1", "lo"), strmTextEnd("m1"),
		strmToolStart("c1", "get"), strmToolArgs("c1", `{"a":`), strmToolArgs("c1", ` 1}`), strmToolEnd("c1"),
		strmToolResult("c1", "ok"),
		strmTextStart("m2"), strmTextContent("m2", "done"), strmTextEnd("m2"),
		strmFinished(nil, nil),
	)
	wantMessages := `[
		{"role":"assistant","content":[{"type":"thinking","thinking":"hmm"},{"type":"text","text":"Hello"},
			{"type":"tool_use","toolCallId":"c1","name":"get","input":{"a":1}}]},
		{"role":"tool","toolCallId":"c1","content":"ok"},
		{"role":"assistant","content":"done"}]`
	tests := []struct {
		mode aap.StreamMode
		want []string
	}{
		{aap.StreamDelta, []string{
			"0: turn_start {}",
			`3: thinking_delta {"delta":"hmm"}`,
			`7: text_delta {"delta":"Hel"}`,
			`8: text_delta {"delta":"lo"}`,
			`13: tool_call {"toolCallId":"c1","name":"get","input":{"a":1}}`,
			`14: tool_result {"toolCallId":"c1","content":"ok"}`,
			`16: text_delta {"delta":"done"}`,
			`18: turn_stop {"stopReason":"end_turn"}`,
		}},
		{aap.StreamMessage, []string{
			"0: turn_start {}",
			`4: thinking {"thinking":"hmm"}`,
			`9: text {"text":"Hello"}`,
			`13: tool_call {"toolCallId":"c1","name":"get","input":{"a":1}}`,
			`14: tool_result {"toolCallId":"c1","content":"ok"}`,
			`17: text {"text":"done"}`,
			`18: turn_stop {"stopReason":"end_turn"}`,
		}},
		{aap.StreamNone, nil},
	}
	for _, tt := range tests {
		t.Run(string(tt.mode), func(t *testing.T) {
			tr := translate.NewAGUIToAAP(translate.AGUIToAAPOptions{Mode: tt.mode})
			got := strmFeedAGUI(t, tr, tt.mode, src)
			assert.Equal(t, tt.want, got)
			assert.True(t, tr.Done())
			assert.Equal(t, aap.StopEndTurn, tr.StopReason())
			assert.False(t, tr.Incomplete())
			assert.Nil(t, tr.RunError())
			assert.Nil(t, tr.Interrupts())
			require.JSONEq(t, wantMessages, msgJSON(t, tr.Messages()))
			require.JSONEq(t, `{"stopReason":"end_turn","messages":`+wantMessages+`}`, msgJSON(t, tr.Response()))
		})
	}
	t.Run("zero mode is delta", func(t *testing.T) {
		tr := translate.NewAGUIToAAP(translate.AGUIToAAPOptions{})
		got := strmFeedAGUI(t, tr, aap.StreamDelta, src)
		assert.Equal(t, tests[0].want, got)
	})
}

func TestAGUIToAAP(t *testing.T) {
	sameID := types.Interrupt{ID: "perm-c1", Reason: "tool_call", ToolCallID: "c1"}
	askCity := types.Interrupt{ID: "int-1", Reason: "input_required", Message: "Which city?"}
	unseen := types.Interrupt{ID: "int-2", Reason: "tool_call", ToolCallID: "c-elsewhere"}
	tests := []struct {
		name     string
		mode     aap.StreamMode
		in       []events.Event
		want     []string
		wantStop aap.StopReason
	}{
		{
			name: "RUN_STARTED missing: turn_start still first",
			mode: aap.StreamDelta,
			in:   strmJoin(strmTextContent("m1", "hi"), strmFinished(nil, nil)),
			want: []string{
				"0: turn_start {}", `0: text_delta {"delta":"hi"}`, `1: turn_stop {"stopReason":"end_turn"}`,
			},
			wantStop: aap.StopEndTurn,
		},
		{
			name: "TEXT_MESSAGE_CONTENT without START is tolerated",
			mode: aap.StreamMessage,
			in:   strmJoin(strmRunStarted(), strmTextContent("m1", "a"), strmTextContent("m1", "b"), strmTextEnd("m1"), strmFinished(nil, nil)),
			want: []string{
				"0: turn_start {}", `3: text {"text":"ab"}`, `4: turn_stop {"stopReason":"end_turn"}`,
			},
			wantStop: aap.StopEndTurn,
		},
		{
			name: "empty deltas and empty messages produce nothing",
			mode: aap.StreamMessage,
			in: strmJoin(strmRunStarted(), strmTextStart("m1"), strmTextContent("m1", ""), strmTextEnd("m1"),
				events.NewReasoningMessageStartEvent("r1", "reasoning"), events.NewReasoningMessageEndEvent("r1"),
				strmTextEnd("never-started"), strmFinished(nil, nil)),
			want:     []string{"0: turn_start {}", `7: turn_stop {"stopReason":"end_turn"}`},
			wantStop: aap.StopEndTurn,
		},
		{
			name: "interleaved text messages in message mode, in the order they end",
			mode: aap.StreamMessage,
			in: strmJoin(strmRunStarted(), strmTextStart("a"), strmTextStart("b"),
				strmTextContent("a", "1"), strmTextContent("b", "2"), strmTextContent("a", "1"),
				strmTextEnd("b"), strmTextEnd("a"), strmFinished(nil, nil)),
			want: []string{
				"0: turn_start {}", `6: text {"text":"2"}`, `7: text {"text":"11"}`, `8: turn_stop {"stopReason":"end_turn"}`,
			},
			wantStop: aap.StopEndTurn,
		},
		{
			name: "deprecated THINKING_* events, message mode",
			mode: aap.StreamMessage,
			in: strmJoin(strmRunStarted(), events.NewThinkingStartEvent(), events.NewThinkingTextMessageStartEvent(),
				events.NewThinkingTextMessageContentEvent("x"), events.NewThinkingTextMessageContentEvent("y"),
				events.NewThinkingTextMessageEndEvent(), events.NewThinkingEndEvent(), strmFinished(nil, nil)),
			want: []string{
				"0: turn_start {}", `5: thinking {"thinking":"xy"}`, `7: turn_stop {"stopReason":"end_turn"}`,
			},
			wantStop: aap.StopEndTurn,
		},
		{
			name: "deprecated THINKING_* events, delta mode",
			mode: aap.StreamDelta,
			in: strmJoin(strmRunStarted(), events.NewThinkingTextMessageStartEvent(),
				events.NewThinkingTextMessageContentEvent("x"), events.NewThinkingTextMessageEndEvent(), strmFinished(nil, nil)),
			want: []string{
				"0: turn_start {}", `2: thinking_delta {"delta":"x"}`, `4: turn_stop {"stopReason":"end_turn"}`,
			},
			wantStop: aap.StopEndTurn,
		},
		{
			name: "text chunks are closed by the next non-chunk event",
			mode: aap.StreamMessage,
			in: strmJoin(strmRunStarted(), strmTextChunk(strmP("m1"), strmP("a")), strmTextChunk(nil, strmP("b")),
				events.NewStepStartedEvent("s"), strmFinished(nil, nil)),
			want: []string{
				"0: turn_start {}", `3: text {"text":"ab"}`, `4: turn_stop {"stopReason":"end_turn"}`,
			},
			wantStop: aap.StopEndTurn,
		},
		{
			name: "text chunks stream as deltas in delta mode",
			mode: aap.StreamDelta,
			in:   strmJoin(strmRunStarted(), strmTextChunk(strmP("m1"), strmP("a")), strmTextChunk(nil, strmP("b")), strmFinished(nil, nil)),
			want: []string{
				"0: turn_start {}", `1: text_delta {"delta":"a"}`, `2: text_delta {"delta":"b"}`, `3: turn_stop {"stopReason":"end_turn"}`,
			},
			wantStop: aap.StopEndTurn,
		},
		{
			name: "a text chunk with a new id ends the previous one; RUN_FINISHED ends the last",
			mode: aap.StreamMessage,
			in: strmJoin(strmRunStarted(), strmTextChunk(strmP("m1"), strmP("a")), strmTextChunk(strmP("m2"), strmP("b")),
				strmTextChunk(nil, nil), strmFinished(nil, nil)),
			want: []string{
				"0: turn_start {}", `2: text {"text":"a"}`, `4: text {"text":"b"}`, `4: turn_stop {"stopReason":"end_turn"}`,
			},
			wantStop: aap.StopEndTurn,
		},
		{
			name: "a text chunk without any id",
			mode: aap.StreamMessage,
			in:   strmJoin(strmRunStarted(), strmTextChunk(nil, strmP("anon")), strmFinished(nil, nil)),
			want: []string{
				"0: turn_start {}", `2: text {"text":"anon"}`, `2: turn_stop {"stopReason":"end_turn"}`,
			},
			wantStop: aap.StopEndTurn,
		},
		{
			name: "reasoning chunks are closed by RUN_FINISHED",
			mode: aap.StreamMessage,
			in: strmJoin(strmRunStarted(), events.NewReasoningMessageChunkEvent(strmP("r1"), strmP("deep ")),
				events.NewReasoningMessageChunkEvent(nil, strmP("thought")), strmFinished(nil, nil)),
			want: []string{
				"0: turn_start {}", `3: thinking {"thinking":"deep thought"}`, `3: turn_stop {"stopReason":"end_turn"}`,
			},
			wantStop: aap.StopEndTurn,
		},
		{
			name: "tool chunks: a new id ends the previous call, RUN_FINISHED the last",
			mode: aap.StreamMessage,
			in: strmJoin(strmRunStarted(),
				strmToolChunk(strmP("c1"), strmP("f"), strmP(`{"a"`)), strmToolChunk(nil, nil, strmP(`:1}`)),
				strmToolChunk(strmP("c2"), strmP("g"), nil),
				strmFinished(nil, nil)),
			want: []string{
				"0: turn_start {}",
				`3: tool_call {"toolCallId":"c1","name":"f","input":{"a":1}}`,
				`4: tool_call {"toolCallId":"c2","name":"g","input":{}}`,
				`4: turn_stop {"stopReason":"tool_use"}`,
			},
			wantStop: aap.StopToolUse,
		},
		{
			name: "chunks of different kinds close each other",
			mode: aap.StreamMessage,
			in: strmJoin(strmRunStarted(),
				strmTextChunk(strmP("m1"), strmP("a")),
				strmToolChunk(strmP("c1"), strmP("f"), strmP(`{}`)),
				events.NewReasoningMessageChunkEvent(strmP("r1"), strmP("t")),
				strmTextChunk(strmP("m2"), strmP("b")),
				strmToolResult("c1", "r"),
				strmFinished(nil, nil)),
			want: []string{
				"0: turn_start {}",
				`2: text {"text":"a"}`,
				`3: tool_call {"toolCallId":"c1","name":"f","input":{}}`,
				`4: thinking {"thinking":"t"}`,
				`5: text {"text":"b"}`,
				`5: tool_result {"toolCallId":"c1","content":"r"}`,
				`6: turn_stop {"stopReason":"end_turn"}`,
			},
			wantStop: aap.StopEndTurn,
		},
		{
			name: "a tool chunk is closed by the next non-chunk event",
			mode: aap.StreamDelta,
			in: strmJoin(strmRunStarted(), strmToolChunk(strmP("c1"), strmP("f"), strmP(`{"x":true}`)),
				events.NewStepFinishedEvent("s"), strmFinished(nil, nil)),
			want: []string{
				"0: turn_start {}",
				`2: tool_call {"toolCallId":"c1","name":"f","input":{"x":true}}`,
				`3: turn_stop {"stopReason":"tool_use"}`,
			},
			wantStop: aap.StopToolUse,
		},
		{
			name: "TOOL_CALL_RESULT for a call still open closes it first",
			mode: aap.StreamDelta,
			in: strmJoin(strmRunStarted(), strmToolStart("c1", "f"), strmToolArgs("c1", `{"k":"v"}`),
				strmToolResult("c1", "r"), strmFinished(nil, nil)),
			want: []string{
				"0: turn_start {}",
				`3: tool_call {"toolCallId":"c1","name":"f","input":{"k":"v"}}`,
				`3: tool_result {"toolCallId":"c1","content":"r"}`,
				`4: turn_stop {"stopReason":"end_turn"}`,
			},
			wantStop: aap.StopEndTurn,
		},
		{
			name: "a result for a call of an earlier run is a tool_result and does not count as an answer",
			mode: aap.StreamDelta,
			in: strmJoin(strmRunStarted(), strmToolResult("old", "late result"), strmToolCallFull("c2", "f", `{}`),
				strmFinished(nil, nil)),
			want: []string{
				"0: turn_start {}",
				`1: tool_result {"toolCallId":"old","content":"late result"}`,
				`4: tool_call {"toolCallId":"c2","name":"f","input":{}}`,
				`5: turn_stop {"stopReason":"tool_use"}`,
			},
			wantStop: aap.StopToolUse,
		},
		{
			name: "a second result for the same call counts once",
			mode: aap.StreamDelta,
			in: strmJoin(strmRunStarted(), strmToolCallFull("c1", "f", `{}`), strmToolResult("c1", "a"), strmToolResult("c1", "b"),
				strmToolCallFull("c2", "f", `{}`), strmFinished(nil, nil)),
			want: []string{
				"0: turn_start {}",
				`3: tool_call {"toolCallId":"c1","name":"f","input":{}}`,
				`4: tool_result {"toolCallId":"c1","content":"a"}`,
				`5: tool_result {"toolCallId":"c1","content":"b"}`,
				`8: tool_call {"toolCallId":"c2","name":"f","input":{}}`,
				`9: turn_stop {"stopReason":"tool_use"}`,
			},
			wantStop: aap.StopToolUse,
		},
		{
			name: "unanswered calls stop with tool_use even under a success outcome",
			mode: aap.StreamDelta,
			in: strmJoin(strmRunStarted(), strmToolCallFull("c1", "f", `{}`),
				strmFinished(&events.RunFinishedOutcome{Type: events.RunFinishedOutcomeTypeSuccess}, nil)),
			want: []string{
				"0: turn_start {}",
				`3: tool_call {"toolCallId":"c1","name":"f","input":{}}`,
				`4: turn_stop {"stopReason":"tool_use"}`,
			},
			wantStop: aap.StopToolUse,
		},
		{
			name: "interrupt bound to a call of the run: tool_use, no extra tool_call",
			mode: aap.StreamDelta,
			in:   strmJoin(strmRunStarted(), strmToolCallFull("c1", "delete", `{}`), strmFinished(strmInterrupts(sameID), nil)),
			want: []string{
				"0: turn_start {}",
				`3: tool_call {"toolCallId":"c1","name":"delete","input":{}}`,
				`4: turn_stop {"stopReason":"tool_use"}`,
			},
			wantStop: aap.StopToolUse,
		},
		{
			name: "interrupt bound to a call still open: the call is closed, no extra tool_call",
			mode: aap.StreamDelta,
			in:   strmJoin(strmRunStarted(), strmToolStart("c1", "delete"), strmFinished(strmInterrupts(sameID), nil)),
			want: []string{
				"0: turn_start {}",
				`2: tool_call {"toolCallId":"c1","name":"delete","input":{}}`,
				`2: turn_stop {"stopReason":"tool_use"}`,
			},
			wantStop: aap.StopToolUse,
		},
		{
			name: "interrupt with another reason: a call of the interrupt tool",
			mode: aap.StreamMessage,
			in:   strmJoin(strmRunStarted(), strmFinished(strmInterrupts(askCity), nil)),
			want: []string{
				"0: turn_start {}",
				`1: tool_call {"toolCallId":"int-1","name":"agui_interrupt","input":{"id":"int-1","reason":"input_required","message":"Which city?"}}`,
				`1: turn_stop {"stopReason":"tool_use"}`,
			},
			wantStop: aap.StopToolUse,
		},
		{
			name: "interrupt for a call this run did not show: a call of the interrupt tool",
			mode: aap.StreamDelta,
			in:   strmJoin(strmRunStarted(), strmToolCallFull("c1", "f", `{}`), strmFinished(strmInterrupts(sameID, unseen), nil)),
			want: []string{
				"0: turn_start {}",
				`3: tool_call {"toolCallId":"c1","name":"f","input":{}}`,
				`4: tool_call {"toolCallId":"int-2","name":"agui_interrupt","input":{"id":"int-2","reason":"tool_call","toolCallId":"c-elsewhere"}}`,
				`4: turn_stop {"stopReason":"tool_use"}`,
			},
			wantStop: aap.StopToolUse,
		},
		{
			name: "result.stopReason max_tokens wins over unanswered calls",
			mode: aap.StreamDelta,
			in: strmJoin(strmRunStarted(), strmToolCallFull("c1", "f", `{}`),
				strmFinished(nil, map[string]any{"stopReason": "max_tokens"})),
			want: []string{
				"0: turn_start {}",
				`3: tool_call {"toolCallId":"c1","name":"f","input":{}}`,
				`4: turn_stop {"stopReason":"max_tokens"}`,
			},
			wantStop: aap.StopMaxTokens,
		},
		{
			name:     "result.stopReason refusal as a StopResult",
			mode:     aap.StreamDelta,
			in:       strmJoin(strmRunStarted(), strmFinished(nil, translate.StopResult{StopReason: aap.StopRefusal})),
			want:     []string{"0: turn_start {}", `1: turn_stop {"stopReason":"refusal"}`},
			wantStop: aap.StopRefusal,
		},
		{
			name:     "a result without a valid stopReason is ignored",
			mode:     aap.StreamDelta,
			in:       strmJoin(strmRunStarted(), strmFinished(nil, map[string]any{"stopReason": "bored", "answer": 42})),
			want:     []string{"0: turn_start {}", `1: turn_stop {"stopReason":"end_turn"}`},
			wantStop: aap.StopEndTurn,
		},
		{
			name: "events with no AAP meaning produce nothing",
			mode: aap.StreamDelta,
			in: strmJoin(strmRunStarted(),
				events.NewStepStartedEvent("plan"), events.NewStepFinishedEvent("plan"),
				events.NewStateSnapshotEvent(map[string]any{"a": 1}), events.NewStateDeltaEvent(nil),
				events.NewMessagesSnapshotEvent(nil), events.NewCustomEvent("x"), events.NewRawEvent(map[string]any{}),
				events.NewActivitySnapshotEvent("a1", "PLAN", map[string]any{}),
				events.NewReasoningStartEvent("r"), events.NewReasoningEndEvent("r"),
				events.NewReasoningEncryptedValueEvent("message", "r", "xyz"),
				&agui.UnknownEvent{BaseEvent: events.NewBaseEvent("SOMETHING_NEW"), Raw: json.RawMessage(`{"type":"SOMETHING_NEW"}`)},
				strmFinished(nil, nil)),
			want:     []string{"0: turn_start {}", `13: turn_stop {"stopReason":"end_turn"}`},
			wantStop: aap.StopEndTurn,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := translate.NewAGUIToAAP(translate.AGUIToAAPOptions{Mode: tt.mode})
			got := strmFeedAGUI(t, tr, tt.mode, tt.in)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.wantStop, tr.StopReason())
			assert.False(t, tr.Incomplete())
		})
	}
}

func TestAGUIToAAPInterrupts(t *testing.T) {
	ins := []types.Interrupt{
		{ID: "perm-c1", Reason: "tool_call", ToolCallID: "c1"},
		{ID: "int-1", Reason: "confirmation", Message: "Sure?", ResponseSchema: map[string]any{"type": "object"}},
	}
	tr := translate.NewAGUIToAAP(translate.AGUIToAAPOptions{Mode: aap.StreamNone})
	strmFeedAGUI(t, tr, aap.StreamNone, strmJoin(strmRunStarted(), strmToolCallFull("c1", "rm", `{"p":1}`), strmFinished(strmInterrupts(ins...), nil)))
	assert.Equal(t, ins, tr.Interrupts())
	assert.Equal(t, aap.StopToolUse, tr.StopReason())

	wantInput, err := json.Marshal(ins[1])
	require.NoError(t, err)
	require.JSONEq(t, `{"stopReason":"tool_use","messages":[{"role":"assistant","content":[
		{"type":"tool_use","toolCallId":"c1","name":"rm","input":{"p":1}},
		{"type":"tool_use","toolCallId":"int-1","name":"`+translate.InterruptToolName+`","input":`+string(wantInput)+`}]}]}`,
		msgJSON(t, tr.Response()))
}

func TestAGUIToAAPRunError(t *testing.T) {
	runErr := events.NewRunErrorEvent("model overloaded", events.WithErrorCode("OVERLOADED"))
	tr := translate.NewAGUIToAAP(translate.AGUIToAAPOptions{Mode: aap.StreamMessage})
	got := strmFeedAGUI(t, tr, aap.StreamMessage, strmJoin(
		strmRunStarted(), strmTextStart("m1"), strmTextContent("m1", "partial"), strmToolStart("c1", "f"), strmToolArgs("c1", `{"a":1}`), runErr,
	))
	assert.Equal(t, []string{
		"0: turn_start {}",
		`5: text {"text":"partial"}`,
		`5: tool_call {"toolCallId":"c1","name":"f","input":{"a":1}}`,
		`5: turn_stop {"stopReason":"error"}`,
	}, got)
	assert.Same(t, runErr, tr.RunError())
	assert.Equal(t, aap.StopError, tr.StopReason())
	assert.False(t, tr.Incomplete())
	require.JSONEq(t, `[{"role":"assistant","content":[{"type":"text","text":"partial"},
		{"type":"tool_use","toolCallId":"c1","name":"f","input":{"a":1}}]}]`, msgJSON(t, tr.Messages()))
}

func TestAGUIToAAPIncomplete(t *testing.T) {
	for _, mode := range []aap.StreamMode{aap.StreamDelta, aap.StreamMessage, aap.StreamNone} {
		t.Run(string(mode), func(t *testing.T) {
			tr := translate.NewAGUIToAAP(translate.AGUIToAAPOptions{Mode: mode})
			src := strmJoin(strmRunStarted(), strmTextStart("m1"), strmTextContent("m1", "cut"),
				strmToolStart("c1", "f"), strmToolArgs("c1", `{"a":`))
			got := strmFeedAGUI(t, tr, mode, src)
			switch mode {
			case aap.StreamMessage:
				assert.Equal(t, []string{
					"0: turn_start {}",
					`fin: text {"text":"cut"}`,
					`fin: tool_call {"toolCallId":"c1","name":"f","input":{"_raw_arguments":"{\"a\":"}}`,
					`fin: turn_stop {"stopReason":"error"}`,
				}, got)
			case aap.StreamDelta:
				assert.Equal(t, []string{
					"0: turn_start {}",
					`2: text_delta {"delta":"cut"}`,
					`fin: tool_call {"toolCallId":"c1","name":"f","input":{"_raw_arguments":"{\"a\":"}}`,
					`fin: turn_stop {"stopReason":"error"}`,
				}, got)
			}
			assert.True(t, tr.Incomplete())
			assert.True(t, tr.Done())
			assert.Nil(t, tr.RunError())
			assert.Equal(t, aap.StopError, tr.StopReason())
			require.JSONEq(t, `{"stopReason":"error","messages":[{"role":"assistant","content":[{"type":"text","text":"cut"},
				{"type":"tool_use","toolCallId":"c1","name":"f","input":{"_raw_arguments":"{\"a\":"}}]}]}`, msgJSON(t, tr.Response()))
		})
	}
	t.Run("nothing at all", func(t *testing.T) {
		tr := translate.NewAGUIToAAP(translate.AGUIToAAPOptions{})
		got := strmFeedAGUI(t, tr, aap.StreamDelta, nil)
		assert.Equal(t, []string{"fin: turn_start {}", `fin: turn_stop {"stopReason":"error"}`}, got)
		assert.True(t, tr.Incomplete())
		require.JSONEq(t, `{"stopReason":"error","messages":[]}`, msgJSON(t, tr.Response()))
	})
}

func TestAGUIToAAPFeedAfterTheEnd(t *testing.T) {
	terminals := map[string]events.Event{
		"RUN_FINISHED": strmFinished(nil, nil),
		"RUN_ERROR":    events.NewRunErrorEvent("boom"),
	}
	for name, terminal := range terminals {
		t.Run(name, func(t *testing.T) {
			tr := translate.NewAGUIToAAP(translate.AGUIToAAPOptions{})
			_, err := tr.Feed(terminal)
			require.NoError(t, err)
			require.True(t, tr.Done())
			stop := tr.StopReason()
			for _, late := range []events.Event{strmTextContent("m", "late"), strmFinished(nil, nil), events.NewRunErrorEvent("x")} {
				out, err := tr.Feed(late)
				require.ErrorIs(t, err, translate.ErrTerminated)
				assert.Empty(t, out)
			}
			assert.Empty(t, tr.Finish())
			assert.Equal(t, stop, tr.StopReason())
			assert.False(t, tr.Incomplete())
		})
	}
}

func TestAGUIToAAPStreamErrors(t *testing.T) {
	tests := []struct {
		name      string
		before    []events.Event
		bad       events.Event
		wantEvent string
		wantIn    string
	}{
		{"TOOL_CALL_ARGS for an unknown id", nil, strmToolArgs("ghost", `{}`), "TOOL_CALL_ARGS", `"ghost"`},
		{"TOOL_CALL_END for an unknown id", nil, strmToolEnd("ghost"), "TOOL_CALL_END", `"ghost"`},
		{"TOOL_CALL_START twice", []events.Event{strmToolStart("c1", "f")}, strmToolStart("c1", "f"), "TOOL_CALL_START", "started twice"},
		{"TOOL_CALL_START without a name", nil, strmToolStart("c1", ""), "TOOL_CALL_START", "toolCallName"},
		{"TOOL_CALL_ARGS after the call ended", strmToolCallFull("c1", "f", `{}`), strmToolArgs("c1", `{}`), "TOOL_CALL_ARGS", "after the call ended"},
		{"first TOOL_CALL_CHUNK without an id", nil, strmToolChunk(nil, strmP("f"), strmP(`{}`)), "TOOL_CALL_CHUNK", "without toolCallId"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := translate.NewAGUIToAAP(translate.AGUIToAAPOptions{Mode: aap.StreamMessage})
			var all []aap.Event
			for _, ev := range append([]events.Event{strmRunStarted()}, tt.before...) {
				out, err := tr.Feed(ev)
				require.NoError(t, err)
				all = append(all, out...)
			}
			out, err := tr.Feed(tt.bad)
			var se *translate.StreamError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tt.wantEvent, se.Event)
			assert.Contains(t, se.Error(), tt.wantIn)
			all = append(all, out...)

			// The stream goes on and still ends with exactly one turn_stop.
			out, err = tr.Feed(strmFinished(nil, nil))
			require.NoError(t, err)
			all = append(all, out...)
			all = append(all, tr.Finish()...)
			strmCheckAAP(t, aap.StreamMessage, all)
		})
	}
}

func TestAGUIToAAPMessages(t *testing.T) {
	tests := []struct {
		name string
		in   []events.Event
		want string
	}{
		{
			name: "a single text is string content",
			in:   strmJoin(strmTextStart("m1"), strmTextContent("m1", "hi"), strmTextEnd("m1")),
			want: `[{"role":"assistant","content":"hi"}]`,
		},
		{
			name: "two texts are two blocks",
			in: strmJoin(strmTextStart("m1"), strmTextContent("m1", "a"), strmTextEnd("m1"),
				strmTextStart("m2"), strmTextContent("m2", "b"), strmTextEnd("m2")),
			want: `[{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]`,
		},
		{
			name: "thinking only",
			in: strmJoin(events.NewReasoningMessageStartEvent("r", "reasoning"), events.NewReasoningMessageContentEvent("r", "t"),
				events.NewReasoningMessageEndEvent("r")),
			want: `[{"role":"assistant","content":[{"type":"thinking","thinking":"t"}]}]`,
		},
		{
			name: "tool results split assistant messages",
			in: strmJoin(strmTextStart("m1"), strmTextContent("m1", "a"), strmTextEnd("m1"),
				strmToolCallFull("c1", "f", `{}`), strmToolCallFull("c2", "g", `{}`),
				strmToolResult("c1", "r1"), strmToolResult("c2", "r2"),
				strmToolCallFull("c3", "h", `{}`)),
			want: `[
				{"role":"assistant","content":[{"type":"text","text":"a"},
					{"type":"tool_use","toolCallId":"c1","name":"f","input":{}},
					{"type":"tool_use","toolCallId":"c2","name":"g","input":{}}]},
				{"role":"tool","toolCallId":"c1","content":"r1"},
				{"role":"tool","toolCallId":"c2","content":"r2"},
				{"role":"assistant","content":[{"type":"tool_use","toolCallId":"c3","name":"h","input":{}}]}]`,
		},
		{
			name: "invalid arguments are kept under _raw_arguments",
			in:   strmToolCallFull("c1", "f", `[1,2]`),
			want: `[{"role":"assistant","content":[{"type":"tool_use","toolCallId":"c1","name":"f","input":{"_raw_arguments":"[1,2]"}}]}]`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := translate.NewAGUIToAAP(translate.AGUIToAAPOptions{Mode: aap.StreamNone})
			strmFeedAGUI(t, tr, aap.StreamNone, append(append([]events.Event{strmRunStarted()}, tt.in...), strmFinished(nil, nil)))
			require.JSONEq(t, tt.want, msgJSON(t, tr.Messages()))
		})
	}
	t.Run("no messages", func(t *testing.T) {
		tr := translate.NewAGUIToAAP(translate.AGUIToAAPOptions{})
		strmFeedAGUI(t, tr, aap.StreamDelta, strmJoin(strmRunStarted(), strmFinished(nil, nil)))
		assert.Empty(t, tr.Messages())
		require.JSONEq(t, `{"stopReason":"end_turn","messages":[]}`, msgJSON(t, tr.Response()))
	})
}

// Messages may be called while the run is going on ("the turn so far"); it
// must not change what the finished turn holds.
func TestAGUIToAAPMessagesMidRunChangesNothing(t *testing.T) {
	src := strmJoin(strmRunStarted(), strmTextStart("m1"), strmTextContent("m1", "a"), strmTextEnd("m1"),
		strmToolCallFull("c1", "f", `{}`), strmFinished(nil, nil))

	plain := translate.NewAGUIToAAP(translate.AGUIToAAPOptions{})
	strmFeedAGUI(t, plain, aap.StreamDelta, src)

	observed := translate.NewAGUIToAAP(translate.AGUIToAAPOptions{})
	for i, ev := range src {
		_, err := observed.Feed(ev)
		require.NoError(t, err)
		if i == 3 { // after the text ended, before the tool call
			require.JSONEq(t, `[{"role":"assistant","content":"a"}]`, msgJSON(t, observed.Messages()))
		}
	}
	require.JSONEq(t, msgJSON(t, plain.Messages()), msgJSON(t, observed.Messages()))
}

// EndMessage, between two runs strung into one turn, makes what the next
// run says a message of its own in history; the delta stream still puts
// the blank line between the two texts, and closes a text left open.
func TestAGUIToAAPEndMessage(t *testing.T) {
	feed := func(tr *translate.AGUIToAAP, evs ...events.Event) string {
		var out []string
		for _, ev := range evs {
			got, err := tr.Feed(ev)
			require.NoError(t, err)
			for _, e := range got {
				out = append(out, string(e.EventName()))
			}
		}
		return strings.Join(out, " ")
	}
	deltas := func(evs []aap.Event) (s string) {
		for _, e := range evs {
			if d, ok := e.(*aap.TextDelta); ok {
				s += d.Delta
			}
		}
		return s
	}
	for _, mode := range []aap.StreamMode{aap.StreamDelta, aap.StreamMessage} {
		t.Run(string(mode), func(t *testing.T) {
			tr := translate.NewAGUIToAAP(translate.AGUIToAAPOptions{Mode: mode})
			feed(tr, strmRunStarted(), strmTextStart("m1"), strmTextContent("m1", "a"))
			closing := tr.EndMessage()
			if mode == aap.StreamDelta {
				assert.Empty(t, closing, "a delta stream has nothing to close")
			} else {
				require.Len(t, closing, 1, "the open text goes out whole")
				assert.Equal(t, aap.EventText, closing[0].EventName())
			}
			var all []aap.Event
			for _, ev := range []events.Event{strmTextStart("m2"), strmTextContent("m2", "b"), strmTextEnd("m2"), strmFinished(nil, nil)} {
				got, err := tr.Feed(ev)
				require.NoError(t, err)
				all = append(all, got...)
			}
			require.JSONEq(t, `[{"role":"assistant","content":"a"},{"role":"assistant","content":"b"}]`, msgJSON(t, tr.Messages()))
			assert.Equal(t, []string{"m1", "m2"}, tr.MessageIDs())
			if mode == aap.StreamDelta {
				assert.Equal(t, "\n\nb", deltas(all))
			}
		})
	}
	t.Run("after a tool result no separator", func(t *testing.T) {
		tr := translate.NewAGUIToAAP(translate.AGUIToAAPOptions{Mode: aap.StreamDelta})
		feed(tr, strmJoin(strmRunStarted(), strmToolCallFull("c1", "f", `{}`), strmToolResult("c1", "r"))...)
		assert.Empty(t, tr.EndMessage())
		var all []aap.Event
		for _, ev := range []events.Event{strmTextStart("m2"), strmTextContent("m2", "b"), strmTextEnd("m2")} {
			got, err := tr.Feed(ev)
			require.NoError(t, err)
			all = append(all, got...)
		}
		assert.Equal(t, "b", deltas(all))
	})
}

// No panics on any input: an event without its base, or no event at all,
// is refused with an error.
func TestAGUIToAAPEventWithoutBase(t *testing.T) {
	for name, ev := range map[string]events.Event{
		"nil event":     nil,
		"nil BaseEvent": &events.TextMessageContentEvent{MessageID: "m1", Delta: "x"},
		"typed nil":     (*events.RunFinishedEvent)(nil),
	} {
		t.Run(name, func(t *testing.T) {
			tr := translate.NewAGUIToAAP(translate.AGUIToAAPOptions{})
			var err error
			require.NotPanics(t, func() { _, err = tr.Feed(ev) })
			require.Error(t, err)
			all := tr.Finish()
			require.NotEmpty(t, all)
			assert.Equal(t, aap.EventTurnStop, all[len(all)-1].EventName())
		})
	}
}
