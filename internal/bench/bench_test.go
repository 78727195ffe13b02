package bench_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/aapagui/aapagui/internal/bench"
)

// TestRunSmall runs the whole harness on tiny streams: every path must
// carry its streams to the end without an error and appear in the table.
func TestRunSmall(t *testing.T) {
	var out bytes.Buffer
	err := bench.Run(t.Context(), bench.Options{
		Sizes: []int{50}, Reps: 1, Trickle: time.Millisecond, TrickleN: 3, Streams: []int{2}, Idle: 3, Out: &out,
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"50 deltas", "2 stream(s)", "3 idle streams", "direct AG-UI", "direct AAP", "aap2agui", "agui2aap", "chain agui2aap→aap2agui", "load average"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the table has no %q:\n%s", want, out.String())
		}
	}
}
