package translate_test

import (
	"fmt"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/translate"
)

// BenchmarkAGUIToAAPOwnCalls: a run of 1,000 tool calls, then its
// RUN_FINISHED, without knowing whose the tools are (nil IsAgentTool) and
// with an agent whose session has 10 or 1,000 client tools and 10 server
// tools, every call one of the agent's own (the lookup's worst case: no
// tool has its name). One op is one run; ns/call is per call.
func BenchmarkAGUIToAAPOwnCalls(b *testing.B) {
	const calls = 1000
	evs := make([]events.Event, 0, 3*calls+1)
	for i := range calls {
		id := fmt.Sprintf("call_%d", i)
		evs = append(evs,
			&events.ToolCallStartEvent{BaseEvent: events.NewBaseEvent(events.EventTypeToolCallStart), ToolCallID: id, ToolCallName: "write_document_local"},
			&events.ToolCallArgsEvent{BaseEvent: events.NewBaseEvent(events.EventTypeToolCallArgs), ToolCallID: id, Delta: `{"document":"x"}`},
			&events.ToolCallEndEvent{BaseEvent: events.NewBaseEvent(events.EventTypeToolCallEnd), ToolCallID: id})
	}
	evs = append(evs, &events.RunFinishedEvent{BaseEvent: events.NewBaseEvent(events.EventTypeRunFinished), ThreadIDValue: "t", RunIDValue: "r"})
	specs := func(n int, prefix string) []aap.ToolSpec {
		out := make([]aap.ToolSpec, n)
		for i := range out {
			out[i] = aap.ToolSpec{Name: fmt.Sprintf("%s_%d", prefix, i)}
		}
		return out
	}
	cases := []struct {
		name  string
		owned func(string) bool
	}{
		{"owners=unknown", nil},
		{"owners=10client", translate.ToolOwners{Client: translate.ToolNamed(specs(10, "client")), Server: translate.ToolNamed(specs(10, "server"))}.Agents},
		{"owners=1000client", translate.ToolOwners{Client: translate.ToolNamed(specs(1000, "client")), Server: translate.ToolNamed(specs(10, "server"))}.Agents},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				tr := translate.NewAGUIToAAP(translate.AGUIToAAPOptions{Mode: aap.StreamDelta, IsAgentTool: tc.owned})
				for _, ev := range evs {
					_, _ = tr.Feed(ev)
				}
				if got := tr.StopReason(); (got == aap.StopEndTurn) != (tc.owned != nil) {
					b.Fatalf("stop %s", got)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*calls), "ns/call")
		})
	}
}
