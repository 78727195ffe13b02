package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"text/tabwriter"
	"time"
)

// Comparing two builds: the bridges of this build and of a baseline build
// (an aapbench binary of an earlier commit, which serves its bridges with
// -serve-bridge), each in processes of their own in front of the same
// agents, are read in turn, interleaved, so that both see the same
// machine. Each bridge process's CPU time is read from /proc, so the
// figures hold the bridge alone: not the agents, not the client.

// CompareOptions configures Compare. Zero fields take the defaults in
// brackets.
type CompareOptions struct {
	Current  []string  // the command of this build's bridges (required)
	Baseline []string  // the command of the baseline build's bridges (required)
	Sizes    []int     // deltas per stream [100000]
	Reps     int       // interleaved repetitions per build, at least 5 [7]
	Chain    bool      // also the chain agui2aap→aap2agui
	Out      io.Writer // [os.Stdout]
}

// build is one build's bridge processes.
type build struct {
	name  string
	procs map[string][]*bridgeProcess // by path name: the processes a stream passes
	urls  map[string]string           // by path name: what the client calls
}

// comparedPaths are the paths Compare reads: name, client protocol.
var comparedPaths = []struct {
	name   string
	client proto
}{{"aap2agui", protoAAP}, {"agui2aap", protoAGUI}, {"chain agui2aap→aap2agui", protoAGUI}}

func startBuild(name string, argv []string, e *env, chain bool) (*build, error) {
	b := &build{name: name, procs: map[string][]*bridgeProcess{}, urls: map[string]string{}}
	a2g, err := startBridgeProcess(argv, bridgeAAP2AGUI, e.aguiURL)
	if err != nil {
		return b, err
	}
	b.procs["aap2agui"], b.urls["aap2agui"] = []*bridgeProcess{a2g}, a2g.url
	g2a, err := startBridgeProcess(argv, bridgeAGUI2AAP, e.aapURL)
	if err != nil {
		return b, err
	}
	b.procs["agui2aap"], b.urls["agui2aap"] = []*bridgeProcess{g2a}, g2a.url
	if chain {
		front, err := startBridgeProcess(argv, bridgeAGUI2AAP, a2g.url)
		if err != nil {
			return b, err
		}
		b.procs[comparedPaths[2].name], b.urls[comparedPaths[2].name] = []*bridgeProcess{front, a2g}, front.url
	}
	return b, nil
}

func (b *build) stop() {
	seen := map[*bridgeProcess]bool{}
	for _, ps := range b.procs {
		for _, p := range ps {
			if !seen[p] {
				seen[p] = true
				p.stop()
			}
		}
	}
}

// cpuTime is the CPU time a process has used, summed over its threads
// (/proc/PID/task/*/schedstat, in nanoseconds: the clock-tick figures of
// /proc/PID/stat are too coarse for one stream).
func cpuTime(pid int) (time.Duration, error) {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(tasks) == 0 {
		return 0, fmt.Errorf("no /proc/%d/task/*/schedstat: CPU time per process needs Linux", pid)
	}
	var total int64
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue // a thread that ended
		}
		f := bytes.Fields(b)
		if len(f) == 0 {
			continue
		}
		ns, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil {
			return 0, err
		}
		total += ns
	}
	return time.Duration(total), nil
}

func procsCPU(ps []*bridgeProcess) (time.Duration, error) {
	var sum time.Duration
	for _, p := range ps {
		d, err := cpuTime(p.cmd.Process.Pid)
		if err != nil {
			return 0, err
		}
		sum += d
	}
	return sum, nil
}

// sample is one stream through one build's path.
type sample struct {
	rate float64 // events a second
	cpu  float64 // the path's bridge processes' CPU, ns per event
}

func (e *env) readThrough(ctx context.Context, b *build, path string, client proto, n int) (sample, error) {
	c0, err := procsCPU(b.procs[path])
	if err != nil {
		return sample{}, err
	}
	t0 := time.Now()
	var events int
	if client == protoAGUI {
		events, err = runAGUI(ctx, e.hc, b.urls[path], prompt{n: n}, int(thread.Add(1)), onEvent{})
	} else {
		events, err = runAAP(ctx, e.hc, b.urls[path], prompt{n: n}, onEvent{})
	}
	if err != nil {
		return sample{}, fmt.Errorf("%s build, %s: %w", b.name, path, err)
	}
	d := time.Since(t0)
	c1, err := procsCPU(b.procs[path])
	if err != nil {
		return sample{}, err
	}
	return sample{rate: float64(events) / d.Seconds(), cpu: float64(c1-c0) / float64(events)}, nil
}

// Compare reads streams of each size through both builds' bridges, Reps
// times, alternating which build goes first, and prints for each path the
// medians of both builds and the ratio of this build to the baseline with
// its spread: the median of the paired ratios (each repetition's two
// streams ran back to back) and their range.
func Compare(ctx context.Context, o CompareOptions) error {
	if len(o.Current) == 0 || len(o.Baseline) == 0 {
		return errors.New("compare: both builds' commands are required")
	}
	if len(o.Sizes) == 0 {
		o.Sizes = []int{100_000}
	}
	if o.Reps == 0 {
		o.Reps = 7
	}
	if o.Reps < 5 {
		return fmt.Errorf("compare: %d repetitions are too few for a spread; use at least 5", o.Reps)
	}
	if o.Out == nil {
		o.Out = os.Stdout
	}
	e, err := newEnv()
	if err != nil {
		return err
	}
	defer e.close()
	builds := make([]*build, 2)
	for i, argv := range [][]string{o.Current, o.Baseline} {
		builds[i], err = startBuild([]string{"current", "baseline"}[i], argv, e, o.Chain)
		defer builds[i].stop()
		if err != nil {
			return err
		}
	}
	fmt.Fprintf(o.Out, "aapbench compare: current %q against baseline %q, %d interleaved repetitions, load average %s\n",
		o.Current[0], o.Baseline[0], o.Reps, loadavg())
	w := tabwriter.NewWriter(o.Out, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, n := range o.Sizes {
		if err := e.compareSize(ctx, builds, n, o, w); err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "load average at the end %s\n", loadavg())
	return nil
}

func (e *env) compareSize(ctx context.Context, builds []*build, n int, o CompareOptions, w *tabwriter.Writer) error {
	fmt.Fprintf(w, "\n%d deltas\tevents/s current\tbaseline\tratio (range)\tCPU ns/event current\tbaseline\tratio (range)\t\n", n)
	for _, p := range comparedPaths {
		if _, ok := builds[0].urls[p.name]; !ok {
			continue
		}
		// One stream through each first, unmeasured: connections, pools
		// and the heap settle.
		for _, b := range builds {
			if _, err := e.readThrough(ctx, b, p.name, p.client, n); err != nil {
				return err
			}
		}
		var cur, base []sample
		for rep := range o.Reps {
			order := []int{0, 1}
			if rep%2 == 1 {
				order = []int{1, 0}
			}
			for _, i := range order {
				s, err := e.readThrough(ctx, builds[i], p.name, p.client, n)
				if err != nil {
					return err
				}
				if i == 0 {
					cur = append(cur, s)
				} else {
					base = append(base, s)
				}
			}
		}
		rate := func(s sample) float64 { return s.rate }
		cpu := func(s sample) float64 { return s.cpu }
		fmt.Fprintf(w, "%s\t%.0f\t%.0f\t%s\t%.0f\t%.0f\t%s\t\n", p.name,
			median(pick(cur, rate)), median(pick(base, rate)), spread(cur, base, rate),
			median(pick(cur, cpu)), median(pick(base, cpu)), spread(cur, base, cpu))
	}
	return nil
}

// pick is f of each of xs.
func pick[T any](xs []T, f func(T) float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

// spread is the median of the paired ratios cur/base and their range, as
// "1.04× (0.98–1.09)".
func spread(cur, base []sample, f func(sample) float64) string {
	ratios := make([]float64, len(cur))
	lo, hi := 0.0, 0.0
	for i := range cur {
		r := f(cur[i]) / f(base[i])
		ratios[i] = r
		if i == 0 || r < lo {
			lo = r
		}
		if i == 0 || r > hi {
			hi = r
		}
	}
	return fmt.Sprintf("%.2f× (%.2f–%.2f)", median(ratios), lo, hi)
}
