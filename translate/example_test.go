package translate_test

import (
	"encoding/json"
	"fmt"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/translate"
)

// An AAP turn (as an AAP client yields it) becomes one AG-UI run.
func ExampleNewAAPToAGUI() {
	t := translate.NewAAPToAGUI(translate.AAPToAGUIOptions{
		ThreadID: "thread-1", RunID: "run-1",
		NewID: translate.SequentialIDs("msg-"),
	})
	turn := []aap.Event{
		&aap.TurnStart{},
		&aap.TextDelta{Delta: "Hello"},
		&aap.TextDelta{Delta: ", world"},
		&aap.TurnStop{StopReason: aap.StopEndTurn},
	}
	for _, ev := range turn {
		out, _ := t.Feed(ev)
		for _, e := range out {
			b, _ := agui.AppendEvent(nil, e)
			fmt.Println(string(b))
		}
	}
	// Output:
	// {"type":"RUN_STARTED","threadId":"thread-1","runId":"run-1"}
	// {"type":"TEXT_MESSAGE_START","messageId":"msg-1","role":"assistant"}
	// {"type":"TEXT_MESSAGE_CONTENT","messageId":"msg-1","delta":"Hello"}
	// {"type":"TEXT_MESSAGE_CONTENT","messageId":"msg-1","delta":", world"}
	// {"type":"TEXT_MESSAGE_END","messageId":"msg-1"}
	// {"type":"RUN_FINISHED","threadId":"thread-1","runId":"run-1","outcome":{"type":"success"}}
}

// An AG-UI run becomes an AAP turn; the translator also builds the turn's
// history messages, in any stream mode.
func ExampleNewAGUIToAAP() {
	t := translate.NewAGUIToAAP(translate.AGUIToAAPOptions{Mode: aap.StreamMessage})
	run := []string{
		`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`,
		`{"type":"TOOL_CALL_START","toolCallId":"call_1","toolCallName":"get_weather"}`,
		`{"type":"TOOL_CALL_ARGS","toolCallId":"call_1","delta":"{\"location\":"}`,
		`{"type":"TOOL_CALL_ARGS","toolCallId":"call_1","delta":"\"Paris\"}"}`,
		`{"type":"TOOL_CALL_END","toolCallId":"call_1"}`,
		`{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`,
	}
	for _, line := range run {
		ev, _ := agui.DecodeEvent([]byte(line))
		out, _ := t.Feed(ev)
		for _, e := range out {
			frame, _ := aap.AppendFrame(nil, e)
			fmt.Print(string(frame))
		}
	}
	resp, _ := json.Marshal(t.Response())
	fmt.Println(string(resp))
	// Output:
	// event: turn_start
	// data: {}
	//
	// event: tool_call
	// data: {"toolCallId":"call_1","name":"get_weather","input":{"location":"Paris"}}
	//
	// event: turn_stop
	// data: {"stopReason":"tool_use"}
	//
	// {"stopReason":"tool_use","messages":[{"role":"assistant","content":[{"type":"tool_use","toolCallId":"call_1","name":"get_weather","input":{"location":"Paris"}}]}]}
}

// AAP history becomes AG-UI messages with the ids the caller gives (here
// sequential); thinking becomes a reasoning message before the answer.
func ExampleMessagesToAGUI() {
	hist := []aap.Message{
		aap.UserText("think about it"),
		&aap.AssistantMessage{Content: aap.BlockContent(
			&aap.ThinkingBlock{Thinking: "Hmm."},
			&aap.TextBlock{Text: "Done."},
		)},
	}
	msgs, _ := translate.MessagesToAGUI(hist, translate.SequentialIDs("m"))
	for _, m := range msgs {
		fmt.Println(m.ID, m.Role, m.Content)
	}
	back, _ := translate.MessagesToAAP(msgs)
	b, _ := json.Marshal(back)
	fmt.Println(string(b))
	// Output:
	// m1 user think about it
	// m2-reasoning reasoning Hmm.
	// m2 assistant Done.
	// [{"role":"user","content":"think about it"},{"role":"assistant","content":[{"type":"thinking","thinking":"Hmm."},{"type":"text","text":"Done."}]}]
}

// A permission answer in an AAP turn becomes a resume entry for the
// interrupt that asked for it.
func ExampleTurnToAGUI() {
	call := &aap.ToolCall{ToolCallID: "call_7", Name: "web_search", Input: json.RawMessage(`{"query":"cats"}`)}
	open := []types.Interrupt{translate.PermissionInterrupt(call)}
	in, _ := translate.TurnToAGUI([]aap.Message{
		&aap.ToolPermissionMessage{ToolCallID: "call_7", Granted: false, Reason: "not now"},
	}, open, nil)
	b, _ := json.Marshal(in.Resume)
	fmt.Println(string(b))
	// Output:
	// [{"interruptId":"perm-call_7","status":"resolved","payload":{"approved":false,"reason":"not now"}}]
}

// Verify checks a stream against the AG-UI client's rules.
func ExampleVerify() {
	base := func(t events.EventType) *events.BaseEvent { return &events.BaseEvent{EventType: t} }
	err := agui.Verify([]events.Event{
		&events.RunStartedEvent{BaseEvent: base(events.EventTypeRunStarted), ThreadIDValue: "t", RunIDValue: "r"},
		&events.TextMessageStartEvent{BaseEvent: base(events.EventTypeTextMessageStart), MessageID: "m"},
		&events.RunFinishedEvent{BaseEvent: base(events.EventTypeRunFinished), ThreadIDValue: "t", RunIDValue: "r"},
	})
	fmt.Println(err)
	// Output:
	// event 3 (RUN_FINISHED): text message "m" still open at the end of the run
}

// An agent's snapshot of the whole thread, without the thinking an earlier
// run streamed, keeps it in history.
func ExampleMergeSnapshot() {
	history := []translate.HistoryEntry{
		{Message: aap.UserText("think about cats"), AGUIID: "u1"},
		{Message: &aap.AssistantMessage{Content: aap.BlockContent(
			&aap.ThinkingBlock{Thinking: "Cats like warm places."}, &aap.TextBlock{Text: "Done thinking."})}, AGUIID: "a1"},
	}
	snapshot := []translate.HistoryEntry{
		{Message: aap.UserText("think about cats"), AGUIID: "u1"},
		{Message: &aap.AssistantMessage{Content: aap.TextContent("Done thinking.")}, AGUIID: "a1"},
		{Message: aap.UserText("thanks"), AGUIID: "u2"},
	}
	for _, e := range translate.MergeSnapshot(snapshot, translate.SnapshotBase{History: history}) {
		b, _ := json.Marshal(e.Message)
		fmt.Println(e.AGUIID, string(b))
	}
	// Output:
	// u1 {"role":"user","content":"think about cats"}
	// a1 {"role":"assistant","content":[{"type":"thinking","thinking":"Cats like warm places."},{"type":"text","text":"Done thinking."}]}
	// u2 {"role":"user","content":"thanks"}
}
