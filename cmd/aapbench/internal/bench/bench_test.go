package bench_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aapagui/aapagui/cmd/aapbench/internal/bench"
)

// envServeBridge makes this test binary a bridge process (what
// cmd/aapbench -serve-bridge does): its arguments end with
// "-serve-bridge KIND -upstream URL".
const envServeBridge = "AAPBENCH_TEST_SERVE_BRIDGE"

func TestMain(m *testing.M) {
	if os.Getenv(envServeBridge) == "1" {
		fs := flag.NewFlagSet("bridge", flag.ExitOnError)
		kind := fs.String("serve-bridge", "", "")
		upstream := fs.String("upstream", "", "")
		st := fs.String("bridge-store", "", "")
		args := os.Args[len(os.Args)-4:]
		if n := len(os.Args); n >= 6 && os.Args[n-6] == "-bridge-store" {
			args = os.Args[n-6:]
		}
		_ = fs.Parse(args)
		if err := bench.ServeBridge(context.Background(), *kind, *upstream, *st, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

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
	for _, want := range []string{"50 deltas", "2 stream(s)", "3 idle streams", "direct AG-UI", "net/http relay (AG-UI)", "direct AAP", "aap2agui", "agui2aap", "chain agui2aap→aap2agui", "load average", "aapbench: " + runtime.Version() + ","} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the table has no %q:\n%s", want, out.String())
		}
	}
}

// TestIdleBridgesAlone: with BridgeProcess, each bridge's idle streams go
// through a process of its own, whose memory and goroutines per stream
// are reported (the four goroutines net/http keeps per bridged stream),
// with their stacks; the same for the relay;
// with IdleHistory, after a conversation both bridges accept.
func TestIdleBridgesAlone(t *testing.T) {
	t.Setenv(envServeBridge, "1")
	dir := t.TempDir()
	var out bytes.Buffer
	err := bench.Run(t.Context(), bench.Options{
		Sizes: []int{20}, Reps: 1, Trickle: time.Millisecond, TrickleN: 2, Streams: []int{1}, Idle: 20, SkipChain: true, Out: &out,
		BridgeProcess: []string{os.Args[0]}, IdleHistory: 6, IdleProfile: filepath.Join(dir, "p-"),
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "20 idle streams, 6 earlier messages") {
		t.Fatalf("no title naming the earlier messages:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "bridge KB/stream (its process alone)") {
		t.Fatalf("no column for the bridge's own process:\n%s", out.String())
	}
	// Each path's profiles, taken while its streams were open, under a
	// name that is one file.
	for _, name := range []string{"direct-AG-UI", "net-http-relay--AG-UI-", "aap2agui", "direct-AAP", "agui2aap"} {
		for _, kind := range []string{".heap", ".goroutine"} {
			if fi, err := os.Stat(filepath.Join(dir, "p-"+name+kind)); err != nil || fi.Size() == 0 {
				t.Errorf("profile %s%s: %v", name, kind, err)
			}
		}
	}
	for _, name := range []string{"net/http relay (AG-UI)", "aap2agui", "agui2aap"} {
		row := regexp.MustCompile(`(?m)^ *` + regexp.QuoteMeta(name) + ` +– +([0-9.]+) +0 +([0-9.]+) +([0-9.]+) *$`).FindStringSubmatch(out.String())
		if row == nil {
			t.Fatalf("no idle row for %s measured alone:\n%s", name, out.String())
		}
		if row[1] == "0.0" || strings.HasPrefix(row[1], "-") {
			t.Errorf("%s: %s KB per idle stream", name, row[1])
		}
		// Four per stream, plus the process's few of its own (its
		// connection for /meta) spread over the streams.
		if g, err := strconv.ParseFloat(row[2], 64); err != nil || g < 4 || g >= 5 {
			t.Errorf("%s: %s goroutines per idle stream in its process, want 4 and a little", name, row[2])
		}
		// The stacks are part of the memory: every stream holds the
		// stacks of its goroutines.
		kb, _ := strconv.ParseFloat(row[1], 64)
		if st, err := strconv.ParseFloat(row[3], 64); err != nil || st <= 0 || st > kb {
			t.Errorf("%s: %s KB of stacks per idle stream of %s KB", name, row[3], row[1])
		}
	}
}

// TestBridgedDeltaAllocations holds the harness's allocation figure to the
// target: a text delta costs at most one allocation through either bridge
// and through the chain (its figure is per bridge). Allocation counts do
// not depend on the machine's speed or load. The stream is long enough
// that a turn's fixed cost (its request, store writes and log line) is a
// small part of the figure.
func TestBridgedDeltaAllocations(t *testing.T) {
	var out bytes.Buffer
	const n = 20000
	err := bench.Run(t.Context(), bench.Options{
		Sizes: []int{n}, Reps: 1, Trickle: time.Millisecond, TrickleN: 2, Streams: []int{1}, Idle: -1, Out: &out,
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, name := range []string{"aap2agui", "agui2aap", "chain agui2aap→aap2agui"} {
		row := regexp.MustCompile(`(?m)^ *` + regexp.QuoteMeta(name) + ` +[0-9]+ +[0-9.]+× +-?[0-9]+ +(-?[0-9.]+) *$`).FindStringSubmatch(out.String())
		if row == nil {
			t.Fatalf("no throughput row for %s:\n%s", name, out.String())
		}
		a, err := strconv.ParseFloat(row[1], 64)
		if err != nil || a > 1 {
			t.Errorf("%s: %s allocations per delta, want at most 1:\n%s", name, row[1], out.String())
		}
		t.Logf("%s: %.2f allocations per delta", name, a)
	}
}

// TestCompareSmall compares two builds (both this test binary, as bridge
// processes) on tiny streams: every path is read through both, and each
// line gives both builds' figures and a ratio with its range; fewer than
// five repetitions are refused.
func TestCompareSmall(t *testing.T) {
	t.Setenv(envServeBridge, "1")
	self := []string{os.Args[0]}
	var out bytes.Buffer
	err := bench.Compare(t.Context(), bench.CompareOptions{Current: self, Baseline: self, Sizes: []int{200}, Reps: 5, Chain: true, Out: &out})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, path := range []string{"aap2agui", "agui2aap", "chain agui2aap→aap2agui"} {
		var line string
		for _, l := range strings.Split(out.String(), "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), path+"  ") {
				line = l
			}
		}
		if strings.Count(line, "×") != 2 || !strings.Contains(line, "–") {
			t.Errorf("no line of %s with two ratios and their ranges:\n%s", path, out.String())
		}
	}
	if !strings.Contains(out.String(), "load average at the end") {
		t.Errorf("no load average:\n%s", out.String())
	}
	err = bench.Compare(t.Context(), bench.CompareOptions{Current: self, Baseline: self, Reps: 3})
	if err == nil || !strings.Contains(err.Error(), "at least 5") {
		t.Errorf("3 repetitions: %v, want a refusal", err)
	}
}

// TestHistorySmall runs the history mode on a short conversation: every
// row is measured (a turn and a history read through aap2agui, a run and
// a hydration through agui2aap, which must give the conversation back
// whole, and both floors).
func TestHistorySmall(t *testing.T) {
	t.Setenv(envServeBridge, "1")
	var out bytes.Buffer
	err := bench.History(t.Context(), bench.HistoryOptions{Command: []string{os.Args[0]}, Messages: 20, Bytes: 300, Reps: 2, Out: &out})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, row := range []string{"aap2agui turn", "aap2agui GET history", "agui2aap run", "agui2aap hydration", "floor: stored rows read, laid out", "floor: net/http relay of the RunAgentInput", "load average at the end"} {
		if !strings.Contains(out.String(), row) {
			t.Errorf("no row %q:\n%s", row, out.String())
		}
	}
}

// TestConversationSmall holds a short conversation through both bridges:
// every turn is answered on each path (an AG-UI run without its answer
// fails the mode), and each window has its row.
func TestConversationSmall(t *testing.T) {
	t.Setenv(envServeBridge, "1")
	var out bytes.Buffer
	err := bench.Conversation(t.Context(), bench.ConversationOptions{Command: []string{os.Args[0]}, Turns: 6, Bytes: 300, Window: 3, Out: &out})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, row := range []string{"aap2agui CPU/turn", "agui2aap CPU/run", "1–3", "0.004 MB", "load average at the end"} {
		if !strings.Contains(out.String(), row) {
			t.Errorf("no %q:\n%s", row, out.String())
		}
	}
}
