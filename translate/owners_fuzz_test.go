package translate_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/translate"
)

// ownersPool are the tool names of FuzzAgentsOwnCalls: a client tool, a
// declared server tool, two of the agent's own.
var ownersPool = []string{"confirm_changes", "web_search", "write_document_local", "remember"}

// fuzzOwners knows confirm_changes as the client's and web_search as a
// declared server tool.
var fuzzOwners = translate.ToolOwners{
	Client: func(name string) bool { return name == "confirm_changes" },
	Server: func(name string) bool { return name == "web_search" },
}

// FuzzAgentsOwnCalls plays an AG-UI run of tool calls (of the client's
// tool, a declared server tool and the agent's own), some with results,
// through both bridges' translators as the chain does: the agent's run
// to AAP as aap2agui reads it, that AAP turn to AG-UI as agui2aap reads
// it. The two agree on what waits: the AAP turn stops for tool_use exactly
// when a call of the client's or a server tool has no result (in a run
// that finished); agui2aap
// then waits on exactly those calls (the client's results, the server
// tools' interrupts), never on one of the agent's own, and a turn that
// ended leaves nothing waiting.
func FuzzAgentsOwnCalls(f *testing.F) {
	f.Add([]byte{0x08, 0x10, 0x03})                         // the predictive run: the agent's call, the client's, the end
	f.Add([]byte{0x08, 0x02, 0x03})                         // the agent's own call alone, then a text
	f.Add([]byte{0x04, 0x01, 0x18, 0x11, 0x03})             // a server call and its result, the agent's and a result for it
	f.Add([]byte{0x00, 0x14, 0x28, 0x3c, 0x01, 0x02, 0x03}) // one of each, a result for the client's
	f.Add([]byte{0x08, 0x14})                               // the agent's call and a server call, no RUN_FINISHED
	f.Fuzz(func(t *testing.T, ops []byte) {
		evs := ownersRun(ops)
		g2a := translate.NewAGUIToAAP(translate.AGUIToAAPOptions{Mode: aap.StreamDelta, IsAgentTool: fuzzOwners.Agents})
		var out []aap.Event
		for _, ev := range evs {
			o, _ := g2a.Feed(ev)
			out = append(out, o...)
		}
		out = append(out, g2a.Finish()...)
		checkAAPStream(t, aap.StreamDelta, out)

		var waiting []string // the calls of the client's and server tools without a result
		names := map[string]string{}
		for _, ev := range out {
			switch e := ev.(type) {
			case *aap.ToolCall:
				names[e.ToolCallID] = e.Name
				if !fuzzOwners.Agents(e.Name) {
					waiting = append(waiting, e.ToolCallID)
				}
			case *aap.ToolResult:
				waiting = slices.DeleteFunc(waiting, func(id string) bool { return id == e.ToolCallID })
			}
		}
		stop := g2a.StopReason()
		if stop != aap.StopError && (stop == aap.StopToolUse) != (len(waiting) > 0) { // (error: the run did not finish)
			t.Fatalf("stop %s with %v waiting on the client (calls %v)", stop, waiting, names)
		}

		a2g := translate.NewAAPToAGUI(translate.AAPToAGUIOptions{
			ThreadID: "t", RunID: "r", NewID: translate.SequentialIDs("m"),
			IsClientTool: fuzzOwners.Client, IsServerTool: fuzzOwners.Server,
		})
		var back []events.Event
		for _, ev := range out {
			o, _ := a2g.Feed(ev)
			back = append(back, o...)
		}
		back = append(back, a2g.Finish()...)
		if err := agui.Verify(back); err != nil {
			t.Fatalf("%v\n%s", err, dumpAGUI(back))
		}
		client, server := fuzzOwners.Waiting(a2g.PendingCalls())
		var interrupted []string
		if fin, ok := back[len(back)-1].(*events.RunFinishedEvent); ok && fin.Outcome != nil {
			for _, in := range fin.Outcome.Interrupts {
				interrupted = append(interrupted, in.ToolCallID)
			}
		}
		var got []string
		for _, c := range append(client, server...) {
			got = append(got, c.ToolCallID)
		}
		slices.Sort(got)
		slices.Sort(waiting)
		if stop == aap.StopToolUse && !slices.Equal(got, waiting) {
			t.Fatalf("agui2aap waits on %v, aap2agui on %v (calls %v)", got, waiting, names)
		}
		for _, id := range interrupted {
			if fuzzOwners.Of(names[id]) != translate.OwnerServer {
				t.Fatalf("interrupt for %q, a call of %s, which is not a server tool", id, names[id])
			}
		}
		if stop != aap.StopToolUse && len(interrupted) > 0 {
			t.Fatalf("a turn that stopped %s left interrupts %v", stop, interrupted)
		}
	})
}

// ownersRun makes an AG-UI run of fuzz bytes: each byte is a call (low
// two bits 0) of the tool (bits 2-3) under the id (bits 4-5), a result for
// the id (1), a text (2), or the run's end (3: RUN_FINISHED; nothing after
// it is sent). A call is made once, and a result comes after its call
// (what else a stream may hold is FuzzAGUIToAAP's).
func ownersRun(ops []byte) []events.Event {
	base := events.NewBaseEvent
	out := []events.Event{&events.RunStartedEvent{BaseEvent: base(events.EventTypeRunStarted), ThreadIDValue: "t", RunIDValue: "r"}}
	called := map[string]bool{}
	for i, op := range ops {
		id := fmt.Sprintf("c%d", op>>4&3)
		switch op & 3 {
		case 0:
			if called[id] {
				continue
			}
			called[id] = true
			out = append(out,
				&events.ToolCallStartEvent{BaseEvent: base(events.EventTypeToolCallStart), ToolCallID: id, ToolCallName: ownersPool[op>>2&3]},
				&events.ToolCallArgsEvent{BaseEvent: base(events.EventTypeToolCallArgs), ToolCallID: id, Delta: `{"n":1}`},
				&events.ToolCallEndEvent{BaseEvent: base(events.EventTypeToolCallEnd), ToolCallID: id})
		case 1:
			if !called[id] {
				continue
			}
			out = append(out, &events.ToolCallResultEvent{BaseEvent: base(events.EventTypeToolCallResult), MessageID: fmt.Sprintf("r%d", i), ToolCallID: id, Content: "done"})
		case 2:
			m := fmt.Sprintf("t%d", i)
			out = append(out,
				&events.TextMessageStartEvent{BaseEvent: base(events.EventTypeTextMessageStart), MessageID: m},
				&events.TextMessageContentEvent{BaseEvent: base(events.EventTypeTextMessageContent), MessageID: m, Delta: "ok"},
				&events.TextMessageEndEvent{BaseEvent: base(events.EventTypeTextMessageEnd), MessageID: m})
		case 3:
			return append(out, &events.RunFinishedEvent{BaseEvent: base(events.EventTypeRunFinished), ThreadIDValue: "t", RunIDValue: "r"})
		}
	}
	return out
}
