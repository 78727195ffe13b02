package agui_test

import (
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/agui"
)

func vfyStarted() events.Event { return events.NewRunStartedEvent("th", "r1") }

func vfyFinished() events.Event { return events.NewRunFinishedEvent("th", "r1") }

func vfyToolResult(messageID, toolCallID, content string) events.Event {
	return events.NewToolCallResultEvent(messageID, toolCallID, content)
}

func vfyStream(evs ...events.Event) []events.Event { return evs }

func TestVerifyValid(t *testing.T) {
	tests := []struct {
		name string
		evs  []events.Event
	}{
		{"started and finished", vfyStream(vfyStarted(), vfyFinished())},
		{"started and failed", vfyStream(vfyStarted(), events.NewRunErrorEvent("boom"))},
		{
			name: "everything opened is closed",
			evs: vfyStream(
				vfyStarted(),
				events.NewStepStartedEvent("plan"),
				events.NewReasoningStartEvent("r1"),
				events.NewReasoningMessageStartEvent("r1", "reasoning"),
				events.NewReasoningMessageContentEvent("r1", "t"),
				events.NewReasoningMessageEndEvent("r1"),
				events.NewReasoningEndEvent("r1"),
				events.NewTextMessageStartEvent("m1"),
				events.NewTextMessageContentEvent("m1", "hi"),
				events.NewTextMessageEndEvent("m1"),
				events.NewToolCallStartEvent("c1", "f"),
				events.NewToolCallArgsEvent("c1", "{}"),
				events.NewToolCallEndEvent("c1"),
				vfyToolResult("res-c1", "c1", "ok"),
				events.NewStepFinishedEvent("plan"),
				vfyFinished(),
			),
		},
		{
			name: "interleaved messages and calls",
			evs: vfyStream(
				vfyStarted(),
				events.NewTextMessageStartEvent("a"),
				events.NewToolCallStartEvent("c1", "f"),
				events.NewTextMessageStartEvent("b"),
				events.NewToolCallStartEvent("c2", "g"),
				events.NewTextMessageContentEvent("a", "1"),
				events.NewToolCallArgsEvent("c2", "{}"),
				events.NewTextMessageEndEvent("b"),
				events.NewToolCallEndEvent("c1"),
				events.NewTextMessageEndEvent("a"),
				events.NewToolCallEndEvent("c2"),
				vfyFinished(),
			),
		},
		{
			name: "an id may be used again once closed",
			evs: vfyStream(
				vfyStarted(),
				events.NewTextMessageStartEvent("m1"), events.NewTextMessageEndEvent("m1"),
				events.NewTextMessageStartEvent("m1"), events.NewTextMessageEndEvent("m1"),
				vfyFinished(),
			),
		},
		{
			name: "a result for a call of an earlier run",
			evs:  vfyStream(vfyStarted(), vfyToolResult("res-old", "old", "late"), vfyFinished()),
		},
		{
			name: "an interrupt outcome with interrupts",
			evs: vfyStream(vfyStarted(), events.NewRunFinishedEventWithOptions("th", "r1",
				events.WithInterruptOutcome([]types.Interrupt{{ID: "i1", Reason: "tool_call", ToolCallID: "c1"}}))),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.NoError(t, agui.Verify(tt.evs))
		})
	}
}

func TestVerifyRules(t *testing.T) {
	tests := []struct {
		name string
		evs  []events.Event
		want string
	}{
		{
			name: "RUN_STARTED first",
			evs:  vfyStream(events.NewTextMessageStartEvent("m1")),
			want: "event 1 (TEXT_MESSAGE_START): the first event must be RUN_STARTED",
		},
		{
			name: "a terminal event first",
			evs:  vfyStream(vfyFinished()),
			want: "event 1 (RUN_FINISHED): the first event must be RUN_STARTED",
		},
		{
			name: "a second RUN_STARTED",
			evs:  vfyStream(vfyStarted(), vfyStarted()),
			want: "event 2 (RUN_STARTED): a second RUN_STARTED",
		},
		{
			name: "nothing after RUN_FINISHED",
			evs:  vfyStream(vfyStarted(), vfyFinished(), events.NewStepStartedEvent("x")),
			want: "event 3 (STEP_STARTED): after the terminal event",
		},
		{
			name: "a single terminal event",
			evs:  vfyStream(vfyStarted(), vfyFinished(), events.NewRunErrorEvent("again")),
			want: "event 3 (RUN_ERROR): after the terminal event",
		},
		{
			name: "nothing after RUN_ERROR",
			evs:  vfyStream(vfyStarted(), events.NewRunErrorEvent("boom"), vfyFinished()),
			want: "event 3 (RUN_FINISHED): after the terminal event",
		},
		{
			name: "text message without an id",
			evs:  vfyStream(vfyStarted(), events.NewTextMessageStartEvent("")),
			want: "event 2 (TEXT_MESSAGE_START): text message without an id",
		},
		{
			name: "text message started twice",
			evs:  vfyStream(vfyStarted(), events.NewTextMessageStartEvent("m1"), events.NewTextMessageStartEvent("m1")),
			want: `event 3 (TEXT_MESSAGE_START): text message "m1" started while already open`,
		},
		{
			name: "text content before its start",
			evs:  vfyStream(vfyStarted(), events.NewTextMessageContentEvent("m1", "x")),
			want: `event 2 (TEXT_MESSAGE_CONTENT): text message "m1" is not open`,
		},
		{
			name: "text content after its end",
			evs: vfyStream(vfyStarted(), events.NewTextMessageStartEvent("m1"), events.NewTextMessageEndEvent("m1"),
				events.NewTextMessageContentEvent("m1", "x")),
			want: `event 4 (TEXT_MESSAGE_CONTENT): text message "m1" is not open`,
		},
		{
			name: "empty text delta",
			evs:  vfyStream(vfyStarted(), events.NewTextMessageStartEvent("m1"), events.NewTextMessageContentEvent("m1", "")),
			want: "event 3 (TEXT_MESSAGE_CONTENT): empty delta",
		},
		{
			name: "text end without start",
			evs:  vfyStream(vfyStarted(), events.NewTextMessageEndEvent("m1")),
			want: `event 2 (TEXT_MESSAGE_END): text message "m1" is not open`,
		},
		{
			name: "reasoning message without an id",
			evs:  vfyStream(vfyStarted(), events.NewReasoningMessageStartEvent("", "reasoning")),
			want: "event 2 (REASONING_MESSAGE_START): reasoning message without an id",
		},
		{
			name: "reasoning message started twice",
			evs: vfyStream(vfyStarted(), events.NewReasoningMessageStartEvent("r1", "reasoning"),
				events.NewReasoningMessageStartEvent("r1", "reasoning")),
			want: `event 3 (REASONING_MESSAGE_START): reasoning message "r1" started while already open`,
		},
		{
			name: "reasoning content before its start",
			evs:  vfyStream(vfyStarted(), events.NewReasoningMessageContentEvent("r1", "t")),
			want: `event 2 (REASONING_MESSAGE_CONTENT): reasoning message "r1" is not open`,
		},
		{
			name: "empty reasoning delta",
			evs: vfyStream(vfyStarted(), events.NewReasoningMessageStartEvent("r1", "reasoning"),
				events.NewReasoningMessageContentEvent("r1", "")),
			want: "event 3 (REASONING_MESSAGE_CONTENT): empty delta",
		},
		{
			name: "reasoning end without start",
			evs:  vfyStream(vfyStarted(), events.NewReasoningMessageEndEvent("r1")),
			want: `event 2 (REASONING_MESSAGE_END): reasoning message "r1" is not open`,
		},
		{
			name: "tool call without an id",
			evs:  vfyStream(vfyStarted(), events.NewToolCallStartEvent("", "f")),
			want: "event 2 (TOOL_CALL_START): tool call without an id",
		},
		{
			name: "tool call without a name",
			evs:  vfyStream(vfyStarted(), events.NewToolCallStartEvent("c1", "")),
			want: "event 2 (TOOL_CALL_START): tool call without a name",
		},
		{
			name: "tool call started twice",
			evs:  vfyStream(vfyStarted(), events.NewToolCallStartEvent("c1", "f"), events.NewToolCallStartEvent("c1", "f")),
			want: `event 3 (TOOL_CALL_START): tool call "c1" started while already open`,
		},
		{
			name: "tool arguments before the start",
			evs:  vfyStream(vfyStarted(), events.NewToolCallArgsEvent("c1", "{}")),
			want: `event 2 (TOOL_CALL_ARGS): tool call "c1" is not open`,
		},
		{
			name: "empty tool arguments delta",
			evs:  vfyStream(vfyStarted(), events.NewToolCallStartEvent("c1", "f"), events.NewToolCallArgsEvent("c1", "")),
			want: "event 3 (TOOL_CALL_ARGS): empty delta",
		},
		{
			name: "tool end without start",
			evs:  vfyStream(vfyStarted(), events.NewToolCallEndEvent("c1")),
			want: `event 2 (TOOL_CALL_END): tool call "c1" is not open`,
		},
		{
			name: "tool result before the call's end",
			evs:  vfyStream(vfyStarted(), events.NewToolCallStartEvent("c1", "f"), vfyToolResult("res-c1", "c1", "ok")),
			want: `event 3 (TOOL_CALL_RESULT): result for tool call "c1" before its end`,
		},
		{
			name: "tool result without content",
			evs:  vfyStream(vfyStarted(), vfyToolResult("res-c1", "c1", "")),
			want: "event 2 (TOOL_CALL_RESULT): result without messageId or content",
		},
		{
			name: "tool result without messageId",
			evs:  vfyStream(vfyStarted(), vfyToolResult("", "c1", "ok")),
			want: "event 2 (TOOL_CALL_RESULT): result without messageId or content",
		},
		{
			name: "text message open at RUN_FINISHED",
			evs:  vfyStream(vfyStarted(), events.NewTextMessageStartEvent("m1"), vfyFinished()),
			want: `event 3 (RUN_FINISHED): text message "m1" still open at the end of the run`,
		},
		{
			name: "reasoning message open at RUN_ERROR",
			evs:  vfyStream(vfyStarted(), events.NewReasoningMessageStartEvent("r1", "reasoning"), events.NewRunErrorEvent("x")),
			want: `event 3 (RUN_ERROR): reasoning message "r1" still open at the end of the run`,
		},
		{
			name: "tool call open at RUN_FINISHED",
			evs:  vfyStream(vfyStarted(), events.NewToolCallStartEvent("c1", "f"), vfyFinished()),
			want: `event 3 (RUN_FINISHED): tool call "c1" still open at the end of the run`,
		},
		{
			name: "interrupt outcome without interrupts",
			evs: vfyStream(vfyStarted(), events.NewRunFinishedEventWithOptions("th", "r1",
				events.WithOutcome(events.RunFinishedOutcome{Type: events.RunFinishedOutcomeTypeInterrupt}))),
			want: "event 2 (RUN_FINISHED): interrupt outcome without interrupts",
		},
		{
			name: "no terminal event",
			evs:  vfyStream(vfyStarted(), events.NewTextMessageStartEvent("m1"), events.NewTextMessageEndEvent("m1")),
			want: "the stream ended without RUN_FINISHED or RUN_ERROR (after 3 events)",
		},
		{
			name: "no events",
			evs:  nil,
			want: "the stream ended without RUN_FINISHED or RUN_ERROR (after 0 events)",
		},
		{
			name: "a nil event",
			evs:  vfyStream(vfyStarted(), nil),
			want: "event 2: nil event",
		},
		{
			name: "an event with a nil BaseEvent",
			evs:  vfyStream(vfyStarted(), &events.TextMessageEndEvent{MessageID: "m1"}),
			want: "event 2: nil event",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := agui.Verify(tt.evs)
			require.Error(t, err)
			assert.Equal(t, tt.want, err.Error())
		})
	}
}

func TestVerifierIncremental(t *testing.T) {
	var v agui.Verifier
	require.Error(t, v.Finish(), "the zero value has seen no terminal event")
	for _, ev := range vfyStream(vfyStarted(), events.NewTextMessageStartEvent("m1"), events.NewTextMessageContentEvent("m1", "x")) {
		require.NoError(t, v.Check(ev))
	}
	require.EqualError(t, v.Finish(), "the stream ended without RUN_FINISHED or RUN_ERROR (after 3 events)")
	require.NoError(t, v.Check(events.NewTextMessageEndEvent("m1")))
	require.NoError(t, v.Check(vfyFinished()))
	require.NoError(t, v.Finish())
	require.EqualError(t, v.Check(vfyFinished()), "event 6 (RUN_FINISHED): after the terminal event")
}

// No panics on any input: a typed nil event is reported, not dereferenced.
func TestVerifierTypedNilEvent(t *testing.T) {
	var v agui.Verifier
	require.NoError(t, v.Check(vfyStarted()))
	var err error
	require.NotPanics(t, func() { err = v.Check((*events.TextMessageEndEvent)(nil)) })
	require.EqualError(t, err, "event 2: nil event")
}
