package translate

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/stretchr/testify/require"
)

// walkFor and walkBound are the plain walks of the open interrupts that
// the index answers for.
func walkFor(open []types.Interrupt, id string) (types.Interrupt, bool) {
	for _, in := range open {
		if in.ToolCallID == id && in.Reason == InterruptReasonToolCall {
			return in, true
		}
	}
	for _, in := range open {
		if in.ID == id {
			return in, true
		}
	}
	return types.Interrupt{}, false
}

func walkBound(open []types.Interrupt, id string) bool {
	for _, in := range open {
		if in.Reason == InterruptReasonToolCall && in.ToolCallID == id && id != "" {
			return true
		}
	}
	return false
}

// However many interrupts are open (a few, walked; more, indexed), with
// ids and toolCallIds shared between them, of every reason, the interrupt
// a call or an id finds is the one the walk finds.
func TestOpenInterruptsFindWhatTheWalkFinds(t *testing.T) {
	for seed := range uint64(30) {
		rnd := rand.New(rand.NewPCG(seed, 3))
		n := rnd.IntN(40)
		open := make([]types.Interrupt, n)
		name := func() string {
			if rnd.IntN(6) == 0 {
				return ""
			}
			return fmt.Sprintf("c%d", rnd.IntN(n+3))
		}
		for i := range open {
			open[i] = types.Interrupt{ID: name(), ToolCallID: name(), Reason: []string{InterruptReasonToolCall, "input_required", "mastra:tool_suspend"}[rnd.IntN(3)]}
		}
		idx := indexInterrupts(open)
		for q := range n + 5 {
			id := fmt.Sprintf("c%d", q)
			if q == n+4 {
				id = ""
			}
			want, wantOK := walkFor(open, id)
			got, ok := idx.forCall(id)
			require.Equal(t, wantOK, ok, "seed %d: forCall(%q)", seed, id)
			require.Equal(t, want, got, "seed %d: forCall(%q)", seed, id)
			require.Equal(t, walkBound(open, id), idx.boundCall(id), "seed %d: boundCall(%q)", seed, id)
		}
	}
}
