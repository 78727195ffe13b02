package bench_test

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aapagui/aapagui/cmd/aapbench/internal/bench"
)

// TestScalingVerdict reads CPU ratios as the table does: up to 12 is
// linear, up to 40 is past linear or noise, past 40 is clearly
// super-linear (and fails BenchmarkScaling); a smaller size that cost
// nothing is unmeasured, not super-linear.
func TestScalingVerdict(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		small, big time.Duration
		want       string
		far        bool
	}{
		{10 * ms, 10 * ms, "linear", false},
		{10 * ms, 100 * ms, "linear", false},
		{10 * ms, 120 * ms, "linear", false},
		{10 * ms, 121 * ms, "super-linear?", false},
		{10 * ms, 400 * ms, "super-linear?", false},
		{10 * ms, 401 * ms, "SUPER-LINEAR", true},
		{10 * ms, time.Second, "SUPER-LINEAR", true},
		{0, 10 * ms, "unmeasured", false},
	} {
		r := bench.ScalingRow{CPU: [2]time.Duration{c.small, c.big}}
		if got := r.Verdict(); got != c.want || r.Far() != c.far {
			t.Errorf("%v then %v: %q (far %v), want %q (far %v)", c.small, c.big, got, r.Far(), c.want, c.far)
		}
	}
}

// TestWriteScaling: a row gives its dimension, program and request, both
// sizes, the ratios of bytes and CPU to one decimal, the CPU at 10n in
// milliseconds, the verdict and the bound ("–" for none).
func TestWriteScaling(t *testing.T) {
	rows := []bench.ScalingRow{
		{Dimension: "messages in a history", Program: "aap2agui", Via: "POST /sessions", Bound: "--max-body (8 MiB)",
			N: [2]int{400, 4000}, Bytes: [2]int{1000, 10050}, CPU: [2]time.Duration{2 * time.Millisecond, 21 * time.Millisecond}},
		{Dimension: "tool calls in one message", Program: "agui2aap", Via: "a RunAgentInput",
			N: [2]int{200, 2000}, Bytes: [2]int{500, 5000}, CPU: [2]time.Duration{time.Millisecond, 90 * time.Millisecond}},
	}
	var out bytes.Buffer
	if err := bench.WriteScaling(&out, rows); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("want a header and two rows:\n%s", out.String())
	}
	for i, want := range []string{
		`^dimension +program, request +n +10n +bytes × +CPU × +CPU ms at 10n +verdict +bound$`,
		`^messages in a history +aap2agui, POST /sessions +400 +4000 +10\.1 +10\.5 +21\.0 +linear +--max-body \(8 MiB\)$`,
		`^tool calls in one message +agui2aap, a RunAgentInput +200 +2000 +10\.0 +90\.0 +90\.0 +SUPER-LINEAR +–$`,
	} {
		if !regexp.MustCompile(want).MatchString(lines[i]) {
			t.Errorf("line %d: %q does not match %s", i, lines[i], want)
		}
	}
}

// TestScalingSmall runs every dimension at a few items: each case's
// requests must do what the case says (a turn stops as it should, a run
// finishes without RUN_ERROR, the agent gets every resume entry, a
// listing lists), and every dimension has its row. It checks no timing
// (and the processes are shared, so the figures mix the dimensions).
func TestScalingSmall(t *testing.T) {
	t.Setenv(envServeBridge, "1")
	var out bytes.Buffer
	rows, err := bench.Scaling(t.Context(), bench.ScalingOptions{Command: []string{os.Args[0]}, Reps: 1, Scale: 0.01, Shared: true, Out: &out})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	keys := map[string]bool{}
	for _, r := range rows {
		if keys[r.Key] {
			t.Errorf("two rows of %s", r.Key)
		}
		keys[r.Key] = true
		if r.N[1] != 10*r.N[0] || r.Bytes[0] <= 0 || r.Bytes[1] <= r.Bytes[0] || r.CPU[0] <= 0 || r.CPU[1] <= 0 {
			t.Errorf("%s: sizes %v, bytes %v, CPU %v", r.Key, r.N, r.Bytes, r.CPU)
		}
	}
	for _, k := range []string{"aap2agui/seed-calls", "aap2agui/resume", "aap2agui/patch-events", "aap2agui/sessions-all",
		"agui2aap/calls", "agui2aap/parts", "agui2aap/resume", "agui2aap/threads-other", "agui2aap/page"} {
		if !keys[k] {
			t.Errorf("no row %s:\n%s", k, out.String())
		}
	}
	if !strings.Contains(out.String(), "load average at the end") {
		t.Errorf("no load average:\n%s", out.String())
	}
}

// BenchmarkScaling runs the scaling family once (CI: -benchtime=1x) and
// reports each dimension's CPU ratio for ×10 (and the bytes' beside the
// table in the log). A ratio past bench.FarBound fails it: at 10× the
// input, linear is 10 and quadratic 100, and no noise of a busy machine
// takes a linear dimension past 40. Smaller ratios are left to the table.
func BenchmarkScaling(b *testing.B) {
	b.Setenv(envServeBridge, "1")
	var out bytes.Buffer
	for b.Loop() {
		rows, err := bench.Scaling(b.Context(), bench.ScalingOptions{Command: []string{os.Args[0]}, Out: &out})
		if err != nil {
			b.Fatalf("%v\n%s", err, out.String())
		}
		worst := 0.0
		for _, r := range rows {
			worst = max(worst, r.CPURatio())
			b.ReportMetric(r.CPURatio(), strings.ReplaceAll(r.Key, "/", ":")+"-cpu×")
			if r.Far() {
				b.Errorf("%s: the bridge's CPU grows %.0f× for 10× the %s (%.1f× the bytes): past %.0f×, super-linear",
					r.Key, r.CPURatio(), r.Dimension, r.BytesRatio(), bench.FarBound)
			}
		}
		b.ReportMetric(worst, "worst-cpu×")
	}
	b.Log("\n" + out.String())
}
