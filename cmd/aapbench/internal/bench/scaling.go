package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Cost that grows with the work: every dimension of an input a client or
// an agent controls (messages in a history, tool calls in one message, the
// depth of a state, the events of a run, the threads of an owner, …) is
// grown ×10, from n to 10n, and one request carrying it is sent through a
// bridge in a process of its own. The bridge process's CPU time for that
// request (/proc, nothing of the client or the agent) at 10n over its CPU
// time at n is set beside the growth of the input's bytes: at most
// LinearBound counts as linear.

// The verdict's bounds on the CPU ratio of a dimension grown ×10.
const (
	// LinearBound is the most a ×10 may cost and count as linear (10, and
	// room for what moves from one measurement to the next).
	LinearBound = 12.0
	// FarBound is past any noise: linear is 10, quadratic 100. A row past
	// it fails BenchmarkScaling.
	FarBound = 40.0
)

// ScalingOptions configures Scaling. Zero fields take the defaults in
// brackets.
type ScalingOptions struct {
	// Command runs a bridge alone: given "-serve-bridge KIND -upstream
	// URL" it calls ServeBridge (required).
	Command []string
	Reps    int     // measurements of each size, the least kept [3]
	Scale   float64 // multiplies every dimension's sizes [1]
	// Only keeps the dimensions whose key ("aap2agui/seed-calls") it
	// matches; nil keeps all.
	Only  *regexp.Regexp
	Store string // the bridges' store: "memory" or "sqlite" [memory]
	// Profiles, when set, is a folder where each dimension's bridge
	// process at 10n writes its CPU profile (-cpuprofile: Command must be
	// aapbench), named after the dimension's key.
	Profiles string
	// Shared runs every dimension of a program through the same two
	// bridge processes (one per size), for a test of the cases: the
	// figures then carry what earlier dimensions left.
	Shared bool
	Out    io.Writer // the table [os.Stdout]
}

func (o *ScalingOptions) defaults() {
	if o.Reps <= 0 {
		o.Reps = 3
	}
	if o.Scale <= 0 {
		o.Scale = 1
	}
	if o.Store == "" {
		o.Store = "memory"
	}
	if o.Out == nil {
		o.Out = os.Stdout
	}
}

// ScalingRow is one dimension measured at two sizes.
type ScalingRow struct {
	Key       string // "aap2agui/seed-calls": the program and a short name
	Dimension string // what grows
	Program   string // "aap2agui" or "agui2aap"
	Via       string // the request that carries it
	// Bound names the limit the dimension has (a flag, a fixed bound);
	// "" when only the body's or the stream's size bounds it.
	Bound string
	N     [2]int           // the two sizes, n and 10n
	Bytes [2]int           // the input's bytes at each size
	CPU   [2]time.Duration // the bridge's CPU for the request at each size, the least of the repetitions
}

// BytesRatio is how much the input's bytes grew.
func (r ScalingRow) BytesRatio() float64 { return ratio(float64(r.Bytes[1]), float64(r.Bytes[0])) }

// CPURatio is how much the bridge's CPU time grew.
func (r ScalingRow) CPURatio() float64 { return ratio(float64(r.CPU[1]), float64(r.CPU[0])) }

func ratio(a, b float64) float64 {
	if b <= 0 {
		return math.Inf(1)
	}
	return a / b
}

// Verdict reads the CPU ratio: "linear" up to LinearBound, "super-linear?"
// up to FarBound (past linear, or noise: measure again on a quiet
// machine), "SUPER-LINEAR" past it, "unmeasured" when the smaller size
// cost nothing measurable.
func (r ScalingRow) Verdict() string {
	switch x := r.CPURatio(); {
	case math.IsInf(x, 1) || math.IsNaN(x):
		return "unmeasured"
	case x <= LinearBound:
		return "linear"
	case x <= FarBound:
		return "super-linear?"
	default:
		return "SUPER-LINEAR"
	}
}

// Far reports whether the row is past FarBound: clearly super-linear.
func (r ScalingRow) Far() bool { return r.Verdict() == "SUPER-LINEAR" }

// WriteScaling writes rows as a table: dimension, program and request,
// the two sizes, the ratios of bytes and of CPU, the CPU at 10n, the
// verdict and the dimension's bound.
func WriteScaling(w io.Writer, rows []ScalingRow) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "dimension\tprogram, request\tn\t10n\tbytes ×\tCPU ×\tCPU ms at 10n\tverdict\tbound\n")
	for _, r := range rows {
		bound := r.Bound
		if bound == "" {
			bound = "–"
		}
		fmt.Fprintf(tw, "%s\t%s, %s\t%d\t%d\t%.1f\t%.1f\t%.1f\t%s\t%s\n", r.Dimension, r.Program, r.Via, r.N[0], r.N[1],
			r.BytesRatio(), r.CPURatio(), float64(r.CPU[1])/1e6, r.Verdict(), bound)
	}
	return tw.Flush()
}

// scalingDim is one dimension: how to build a request of size n.
type scalingDim struct {
	key       string // short, unique within its program
	dimension string
	program   string // bridgeAAP2AGUI or bridgeAGUI2AAP (set by scalingDims)
	via       string
	bound     string
	n         int // the smaller size at Scale 1
	// reuse: the case's request changes nothing it needs (a listing), so
	// one case of each size serves every repetition.
	reuse bool
	setup func(ctx context.Context, r *scaleRun, n int) (scaleCase, error)
}

// scaleCase is one request of a dimension at one size, set up: its
// input's bytes, and the request to measure.
type scaleCase struct {
	bytes   int
	request func(ctx context.Context) error
}

// scalingDims are the dimensions of both programs.
func scalingDims() []scalingDim {
	a2g, g2a := aap2aguiDims(), agui2aapDims()
	for i := range a2g {
		a2g[i].program = bridgeAAP2AGUI
	}
	for i := range g2a {
		g2a[i].program = bridgeAGUI2AAP
	}
	return append(a2g, g2a...)
}

// scaleRun is one dimension's bridge process and the agents behind it.
type scaleRun struct {
	proc *bridgeProcess
	root string // the server's root: aap2agui's AAP base URL, agui2aap's (its agents under /agents/)
	ag   *scriptAGUI
	aa   *scriptAAP
	hc   *http.Client
	seq  int // for ids unique within the run
}

// Scaling measures every dimension (or o.Only's) and prints the table; it
// returns the rows.
func Scaling(ctx context.Context, o ScalingOptions) ([]ScalingRow, error) {
	o.defaults()
	if len(o.Command) == 0 {
		return nil, errors.New("scaling: no bridge command")
	}
	set, err := newSetUp("aapbench-scaling-")
	defer set.close()
	if err != nil {
		return nil, err
	}
	e := &scaleEnv{o: o, set: set, ag: newScriptAGUI(), aa: newScriptAAP(), shared: map[string][2]*scaleRun{}}
	e.agURL, e.aaURL = set.server(e.ag).URL, set.server(e.aa).URL
	fmt.Fprintf(o.Out, "aapbench scaling: %s, GOMAXPROCS %d, %s store, the least of %d, load average %s\n",
		runtime.Version(), runtime.GOMAXPROCS(0), o.Store, o.Reps, loadavg())
	var rows []ScalingRow
	for i, d := range scalingDims() {
		if o.Only != nil && !o.Only.MatchString(d.program+"/"+d.key) {
			continue
		}
		runs, err := e.runs(d, i)
		if err != nil {
			return rows, fmt.Errorf("%s/%s: %w", d.program, d.key, err)
		}
		row, err := measureDim(ctx, d, o, runs)
		if !o.Shared {
			stopRuns(runs)
		}
		if err != nil {
			return rows, fmt.Errorf("%s/%s: %w", d.program, d.key, err)
		}
		rows = append(rows, row)
	}
	if err := WriteScaling(o.Out, rows); err != nil {
		return rows, err
	}
	fmt.Fprintf(o.Out, "load average at the end %s\n", loadavg())
	return rows, nil
}

// scaleEnv is what the dimensions of one Scaling run share: the agents,
// and with Shared the bridge processes.
type scaleEnv struct {
	o            ScalingOptions
	set          *setUp
	ag           *scriptAGUI
	aa           *scriptAAP
	agURL, aaURL string
	shared       map[string][2]*scaleRun // by program, with Shared
}

// runs are the bridge processes of d (the i-th dimension) at both sizes:
// each size a process of its own, started for d, or with Shared the
// program's, started once and stopped with the set-up.
func (e *scaleEnv) runs(d scalingDim, i int) ([2]*scaleRun, error) {
	if r, ok := e.shared[d.program]; ok {
		return r, nil
	}
	upstream := e.agURL
	if d.program == bridgeAGUI2AAP {
		upstream = e.aaURL
	}
	var runs [2]*scaleRun
	for k := range runs {
		argv := e.o.Command
		if e.o.Store == "sqlite" {
			argv = bridge(argv, "sqlite:"+filepath.Join(e.set.dir, fmt.Sprintf("%d-%d.db", i, k)))
		}
		if e.o.Profiles != "" && k == 1 {
			argv = append(slices.Clone(argv), "-cpuprofile", filepath.Join(e.o.Profiles, d.program+"-"+d.key+".pprof"))
		}
		p, err := startBridgeProcess(argv, d.program, upstream)
		if err != nil {
			stopRuns(runs)
			return runs, err
		}
		runs[k] = &scaleRun{proc: p, root: p.root, ag: e.ag, aa: e.aa, hc: transport()}
	}
	if e.o.Shared {
		e.shared[d.program] = runs
		e.set.undo = append(e.set.undo, func() { stopRuns(runs) })
	}
	return runs, nil
}

// stopRuns stops the bridge processes of runs.
func stopRuns(runs [2]*scaleRun) {
	for _, r := range runs {
		if r != nil {
			r.hc.CloseIdleConnections()
			r.proc.stop()
		}
	}
}

// measureDim measures d's request at both sizes through runs, o.Reps
// times each, the sizes alternating which goes first.
func measureDim(ctx context.Context, d scalingDim, o ScalingOptions, runs [2]*scaleRun) (ScalingRow, error) {
	n := max(1, int(math.Round(float64(d.n)*o.Scale)))
	row := ScalingRow{Key: d.program + "/" + d.key, Dimension: d.dimension, Program: d.program, Via: d.via, Bound: d.bound, N: [2]int{n, 10 * n}}
	var kept [2]*scaleCase
	for rep := range o.Reps {
		for k := range 2 {
			size := k
			if rep%2 == 1 {
				size = 1 - k
			}
			r, c := runs[size], kept[size]
			if c == nil {
				cs, err := d.setup(ctx, r, row.N[size])
				if err != nil {
					return row, fmt.Errorf("setting up n=%d: %w", row.N[size], err)
				}
				if c = &cs; d.reuse {
					kept[size] = c
				}
			}
			cpu, err := r.measure(ctx, *c)
			if err != nil {
				return row, fmt.Errorf("n=%d: %w", row.N[size], err)
			}
			row.Bytes[size] = c.bytes
			if rep == 0 || cpu < row.CPU[size] {
				row.CPU[size] = cpu
			}
		}
	}
	return row, nil
}

// measure runs c's request and returns the bridge process's CPU time for
// it: from before the request, after a collection of what came before, to
// when the process has gone quiet after the response's end (a write it
// finishes after answering is the request's too).
func (r *scaleRun) measure(ctx context.Context, c scaleCase) (time.Duration, error) {
	if err := request(ctx, r.hc, http.MethodPost, r.proc.root+gcPath, nil, io.Discard); err != nil {
		return 0, err
	}
	c0, err := cpuTime(r.proc.cmd.Process.Pid)
	if err != nil {
		return 0, err
	}
	if err := c.request(ctx); err != nil {
		return 0, err
	}
	c1, err := r.quiet()
	return c1 - c0, err
}

// quiet waits, up to 200 ms, until the bridge process's CPU time holds
// still over a millisecond (less than 50 µs more), and returns it.
func (r *scaleRun) quiet() (time.Duration, error) {
	last, err := cpuTime(r.proc.cmd.Process.Pid)
	for range 200 {
		if err != nil {
			return 0, err
		}
		time.Sleep(time.Millisecond)
		var c time.Duration
		if c, err = cpuTime(r.proc.cmd.Process.Pid); err == nil && c-last < 50*time.Microsecond {
			return c, nil
		}
		last = c
	}
	return last, err
}

// next is a number unique within the run, for ids.
func (r *scaleRun) next() int {
	r.seq++
	return r.seq
}

// send sends body to the bridge at path (under its root) and returns the
// response's body; a status that is not 2xx is an error.
func (r *scaleRun) send(ctx context.Context, method, path string, body []byte) ([]byte, error) {
	var out bytes.Buffer
	err := request(ctx, r.hc, method, r.root+path, body, &out)
	return out.Bytes(), err
}

// expect checks a response: it must hold every one of want and none of
// unwanted; the error quotes the response's start.
func expect(resp []byte, want []string, unwanted ...string) error {
	for _, w := range want {
		if !strings.Contains(string(resp), w) {
			return fmt.Errorf("the response holds no %q: %s", w, head(resp))
		}
	}
	if i := slices.IndexFunc(unwanted, func(u string) bool { return strings.Contains(string(resp), u) }); i >= 0 {
		return fmt.Errorf("the response holds %q: %s", unwanted[i], head(resp))
	}
	return nil
}

// head is the first 600 bytes of b, and where b holds an error event or
// body, 600 bytes from there.
func head(b []byte) string {
	s := string(b)
	for _, mark := range []string{"RUN_ERROR", `"stopReason":"error"`, `"error":`} {
		if i := strings.Index(s, mark); i >= 0 {
			s = s[max(0, i-100):]
			break
		}
	}
	if len(s) > 600 {
		return s[:600] + "…"
	}
	return s
}
