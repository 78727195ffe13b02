package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"

	"github.com/aapagui/aapagui/cmd/aapbench/internal/bench"
)

func ints(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%q is not a positive number", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func main() {
	var o bench.Options
	sizes := flag.String("n", "10000,100000", "deltas per throughput stream, comma-separated")
	streams := flag.String("streams", "1,100", "concurrent trickled streams of the latency runs, comma-separated")
	reps := flag.Int("reps", 0, "interleaved repetitions of each throughput run (medians are printed; default 5, with -baseline 7)")
	flag.DurationVar(&o.Trickle, "trickle", 0, "interval between trickled deltas (default 5ms)")
	flag.IntVar(&o.TrickleN, "trickle-n", 1000, "deltas per trickled stream")
	flag.IntVar(&o.Idle, "idle", 1000, "concurrent idle streams of the memory runs (-1 skips them)")
	flag.IntVar(&o.IdleHistory, "idle-history", 0, "messages of earlier conversation before each idle stream's prompt (aap2agui's memory store then holds them too)")
	flag.BoolVar(&o.SkipChain, "no-chain", false, "leave out the chain of both bridges")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	memProfile := flag.String("memprofile", "", "write an allocation profile of the whole run to this file")
	flag.StringVar(&o.IdleProfile, "idleprofile", "", "write heap and goroutine profiles, named with this prefix, while each path's idle streams are open")
	idleAlone := flag.Bool("idle-alone", true, "measure each bridge's idle streams in a process of its own (false: in this process, less the direct read)")
	serveBridge := flag.String("serve-bridge", "", "run only this bridge (aap2agui, agui2aap or relay) in front of -upstream and print its URL: what -idle-alone starts")
	upstream := flag.String("upstream", "", "the upstream of -serve-bridge")
	bridgeStore := flag.String("bridge-store", "", "the store of -serve-bridge (sqlite:<file>, postgres://…; empty: memory)")
	history := flag.Int("history", 0, "measure one turn of a conversation of this many messages instead (each bridge with a SQLite store, in a process of its own), against the floor of moving it once; with -reps")
	historyBytes := flag.Int("history-bytes", 2000, "bytes of text in each message of -history")
	conversation := flag.Int("conversation", 0, "hold one conversation of this many turns instead, each user message of -history-bytes echoed back, through both bridges (and the CopilotKit runtime with -copilotkit), turn by turn in one run; prints each one's CPU per turn over windows of -window turns")
	window := flag.Int("window", 50, "turns a row of -conversation sums")
	bridges := flag.String("bridges", "", "with -conversation: the aapbench binary whose bridges to measure (a baseline build's); empty: this one's")
	copilotKit := flag.String("copilotkit", "", "with -history, also measure the CopilotKit runtime relaying the same run to the agent: the path of interop/copilotkit-agent/relay.mjs (its npm packages installed), run with node")
	memory := memoryFlags()
	scaling := scalingFlags()
	baseline := flag.String("baseline", "", "compare this build's bridges with a baseline build's, interleaved: an aapbench binary, or a git revision to build one from (e.g. 5077368); prints each ratio with its spread, with -n and -reps (at least 5)")
	flag.Parse()
	if *serveBridge != "" {
		os.Exit(serveBridgeRun(*serveBridge, *upstream, *bridgeStore, *cpuProfile))
	}
	if *conversation > 0 {
		o := bench.ConversationOptions{Turns: *conversation, Bytes: *historyBytes, Window: *window}
		if *bridges != "" {
			o.Command = []string{*bridges}
		}
		os.Exit(conversationRun(o, *copilotKit))
	}
	if *history > 0 {
		os.Exit(historyRun(*history, *historyBytes, *reps, *copilotKit))
	}
	if memory.on {
		os.Exit(memory.run(o.Idle, *reps, *baseline))
	}
	if scaling.on {
		os.Exit(scaling.run(*reps))
	}
	if *baseline != "" {
		n := "100000"
		flag.Visit(func(f *flag.Flag) {
			if f.Name == "n" {
				n = *sizes
			}
		})
		os.Exit(compare(*baseline, n, *reps, !o.SkipChain))
	}
	if *idleAlone {
		self, err := os.Executable()
		if err != nil {
			fmt.Fprintln(os.Stderr, "aapbench:", err)
			os.Exit(1)
		}
		o.BridgeProcess = []string{self}
	}
	o.Reps = *reps
	var err error
	if o.Sizes, err = ints(*sizes); err == nil {
		o.Streams, err = ints(*streams)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "aapbench:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *memProfile != "" {
		runtime.MemProfileRate = 4096
	}
	if *cpuProfile != "" {
		startCPUProfile(*cpuProfile)
		defer pprof.StopCPUProfile()
	}
	err = bench.Run(ctx, o)
	if *memProfile != "" {
		if f, ferr := os.Create(*memProfile); ferr == nil {
			_ = pprof.Lookup("allocs").WriteTo(f, 0)
			f.Close()
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "aapbench:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

// serveBridgeRun runs -serve-bridge, profiling the bridge's CPU into
// cpuProfile when set (-scaling-profile), and returns the exit code.
func serveBridgeRun(kind, upstream, store, cpuProfile string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if cpuProfile != "" {
		startCPUProfile(cpuProfile)
		defer pprof.StopCPUProfile()
	}
	if err := bench.ServeBridge(ctx, kind, upstream, store, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "aapbench:", err)
		return 1
	}
	return 0
}

// memoryOptions are the flags of -memory.
type memoryOptions struct {
	on                        bool
	streams, stores, postgres string
	stalled                   int
	bound                     float64
}

// memoryFlags defines the flags of -memory.
func memoryFlags() *memoryOptions {
	m := &memoryOptions{}
	flag.BoolVar(&m.on, "memory", false, "measure what an open stream costs instead: each bridge on each of -stores, with -idle streams (comma-separated counts allowed with -memory-streams) and -stalled streams whose clients stop reading, each beside a net/http relay of the same streams in the same run, in processes of their own; with -baseline, the baseline build's bridges interleaved")
	flag.StringVar(&m.streams, "memory-streams", "", "with -memory: idle streams per process, comma-separated (default: -idle)")
	flag.StringVar(&m.stores, "stores", "memory,sqlite", "with -memory: the stores, comma-separated (memory, sqlite, postgres)")
	flag.StringVar(&m.postgres, "postgres", os.Getenv("AAPAGUI_TEST_POSTGRES"), "with -memory and -stores postgres: the DSN of a PostgreSQL database")
	flag.IntVar(&m.stalled, "stalled", 200, "with -memory: streams whose clients stop reading after their first delta (-1 skips them)")
	flag.Float64Var(&m.bound, "bound", 1.2, "with -memory: the ratio to the relay's bytes per stream past which a row is marked OVER and the exit code is 3")
	return m
}

// run runs -memory (idle: the -idle flag) and returns the exit code.
func (m *memoryOptions) run(idle, reps int, baseline string) int {
	mo := bench.MemoryOptions{Postgres: m.postgres, Stalled: m.stalled, Bound: m.bound, Reps: reps, Stores: strings.Split(m.stores, ",")}
	counts := m.streams
	if counts == "" {
		counts = strconv.Itoa(idle)
	}
	var err error
	if mo.Streams, err = ints(counts); err != nil {
		fmt.Fprintln(os.Stderr, "aapbench:", err)
		return 2
	}
	return memoryRun(mo, baseline)
}

// startCPUProfile starts profiling the CPU into the file path, or exits.
func startCPUProfile(path string) {
	f, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "aapbench:", err)
		os.Exit(1)
	}
}
