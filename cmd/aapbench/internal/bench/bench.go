package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/rs/zerolog"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/bridge/agui2aap"
	"github.com/aapagui/aapagui/store"
)

// Options configures Run. Zero fields take the defaults in brackets.
type Options struct {
	Sizes    []int         // stream lengths of the throughput runs [10000, 100000]
	Reps     int           // interleaved repetitions; figures are medians [5]
	Trickle  time.Duration // interval of the trickled deltas [5ms]
	TrickleN int           // deltas per trickled stream [1000]
	Streams  []int         // concurrent streams of the latency runs [1, 100]
	Idle     int           // concurrent idle streams of the memory runs [1000]; < 0 skips
	// IdleHistory is how many messages of earlier conversation each idle
	// stream's turn has [0]: what a stream holds should not grow with it.
	IdleHistory int
	SkipChain   bool      // leave the chain out
	Out         io.Writer // where the table goes [os.Stdout]
	// IdleProfile, when set, is the prefix of the heap and goroutine
	// profiles written while each path's idle streams are open.
	IdleProfile string
	// BridgeProcess, when set, is the command (with its first arguments)
	// that runs a bridge alone: given "-serve-bridge KIND -upstream URL"
	// it calls ServeBridge. The idle runs then put each bridge in such a
	// process and measure that process alone, rather than this one less
	// the direct read.
	BridgeProcess []string
}

func (o *Options) defaults() {
	if len(o.Sizes) == 0 {
		o.Sizes = []int{10_000, 100_000}
	}
	if o.Reps <= 0 {
		o.Reps = 5
	}
	if o.Trickle <= 0 {
		o.Trickle = 5 * time.Millisecond
	}
	if o.TrickleN <= 0 {
		o.TrickleN = 1000
	}
	if len(o.Streams) == 0 {
		o.Streams = []int{1, 100}
	}
	if o.Idle == 0 {
		o.Idle = 1000
	}
	if o.Out == nil {
		o.Out = os.Stdout
	}
}

// The bridges of the harness.
const (
	bridgeAAP2AGUI = "aap2agui"
	bridgeAGUI2AAP = "agui2aap"
	// relayProxy is not a bridge but the least a hop on net/http does
	// (see relay), in front of the AG-UI agent: the floor under both
	// bridges' figures.
	relayProxy = "relay"
	// agui2aapAgentPath is the AG-UI endpoint of agui2aap's one agent.
	agui2aapAgentPath = "/agents/bench"
)

// newBridge is the bridge named kind in front of upstream, with the store
// st (nil: a memory store). The bridges call their upstreams with their default HTTP client,
// so that the figures are what a deployment gets.
func newBridge(kind, upstream string, st store.Store, hc *http.Client) (http.Handler, error) {
	if st == nil {
		st = store.NewMemory()
	}
	if hc == nil {
		hc = upstreamClient()
	}
	switch kind {
	case bridgeAAP2AGUI:
		return aap2agui.New(aap2agui.Config{Upstream: upstream, Store: st,
			Agent: aap.AgentInfo{Name: "bench", Version: "1", Capabilities: &aap.Capabilities{Stream: &aap.StreamCapabilities{Delta: &aap.Empty{}}, History: &aap.HistoryCapabilities{Full: &aap.Empty{}}}}, Serving: aap2agui.Serving{Logger: zerolog.Nop(), HTTPClient: hc},
		})
	case bridgeAGUI2AAP:
		// The server tools of the scaling runs' AAP agent: the bench
		// agent declares none, so that they change nothing for it.
		tools := []agui2aap.ServerTool{{Name: scaleServerTool}, {Name: scaleTrustedTool, Trust: true}}
		return agui2aap.New(agui2aap.Config{Upstream: upstream, Store: st, ServerTools: tools, Serving: agui2aap.Serving{Logger: zerolog.New(os.Stderr).Level(zerolog.WarnLevel), HTTPClient: hc}})
	case relayProxy:
		return &relay{upstream: strings.TrimSuffix(upstream, "/"), hc: hc}, nil
	}
	return nil, fmt.Errorf("no bridge %q (aap2agui, agui2aap or relay)", kind)
}

// upstreamClient is the client a bridge calls its upstream with, as the
// bridges make it when given none (bridge/internal/upstream.NewClient: a
// pool sized for a proxy, 1 KiB connection buffers, no compression asked
// for), and the relay's.
func upstreamClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns, t.MaxIdleConnsPerHost, t.IdleConnTimeout = 256, 64, 90*time.Second
	t.WriteBufferSize, t.ReadBufferSize = 1<<10, 1<<10
	t.DisableCompression = true
	return &http.Client{Transport: t}
}

// env is the servers of one harness run.
type env struct {
	rel      *release
	aguiURL  string // the AG-UI agent
	aapURL   string // the AAP agent
	relayURL string // the relay in front of the AG-UI agent (AG-UI)
	a2gURL   string // aap2agui in front of the AG-UI agent (AAP)
	g2aURL   string // agui2aap in front of the AAP agent (AG-UI)
	chainURL string // agui2aap in front of aap2agui in front of the AG-UI agent (AG-UI)
	hc       *http.Client
	closers  []func()
}

func serve(h http.Handler) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	// Closing lets the streams still in flight end first (their agents
	// are released before), for up to 10 s, so that a bridge's store is
	// not closed under its last writes.
	return "http://" + ln.Addr().String(), func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if srv.Shutdown(ctx) != nil {
			srv.Close()
		}
	}, nil
}

// transport is the HTTP client of the harness's clients: pooled with room
// for every concurrent stream.
func transport() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConns: 20000, MaxIdleConnsPerHost: 20000, IdleConnTimeout: 90 * time.Second}}
}

func newEnv() (*env, error) {
	e := &env{rel: newRelease(), hc: transport()}
	add := func(h http.Handler) (string, error) {
		u, c, err := serve(h)
		if err == nil {
			e.closers = append(e.closers, c)
		}
		return u, err
	}
	var err error
	if e.aguiURL, err = add(&AGUIAgent{rel: e.rel}); err != nil {
		return nil, err
	}
	if e.aapURL, err = add(newAAPAgent(e.rel)); err != nil {
		return nil, err
	}
	newA2G := func(up string) (string, error) {
		h, err := newBridge(bridgeAAP2AGUI, up, nil, nil)
		if err != nil {
			return "", err
		}
		return add(h)
	}
	newG2A := func(up string) (string, error) {
		h, err := newBridge(bridgeAGUI2AAP, up, nil, nil)
		if err != nil {
			return "", err
		}
		u, err := add(h)
		return u + agui2aapAgentPath, err
	}
	rl, err := newBridge(relayProxy, e.aguiURL, nil, nil)
	if err != nil {
		return nil, err
	}
	if e.relayURL, err = add(rl); err != nil {
		return nil, err
	}
	if e.a2gURL, err = newA2G(e.aguiURL); err != nil {
		return nil, err
	}
	if e.g2aURL, err = newG2A(e.aapURL); err != nil {
		return nil, err
	}
	if e.chainURL, err = newG2A(e.a2gURL); err != nil {
		return nil, err
	}
	return e, nil
}

func (e *env) close() {
	for _, c := range e.closers {
		c()
	}
}

// path is one way of reading a stream of deltas.
type path struct {
	name    string
	client  proto  // the protocol of the client
	agent   proto  // the protocol of the agent
	url     string // what the client calls
	bridges int    // how many hops (bridges, or the proxy) the stream passes
	kind    string // the one hop's kind, for a process of its own
}

// suite is one run of the benchmark: its environment, the paths it
// measures and its options.
type suite struct {
	e  *env
	ps []path
	o  Options
}

func (e *env) paths(chain bool) []path {
	ps := []path{
		{"direct AG-UI", protoAGUI, protoAGUI, e.aguiURL, 0, ""},
		{"net/http relay (AG-UI)", protoAGUI, protoAGUI, e.relayURL, 1, relayProxy},
		{"aap2agui", protoAAP, protoAGUI, e.a2gURL, 1, bridgeAAP2AGUI},
		{"direct AAP", protoAAP, protoAAP, e.aapURL, 0, ""},
		{"agui2aap", protoAGUI, protoAAP, e.g2aURL, 1, bridgeAGUI2AAP},
	}
	if chain {
		ps = append(ps, path{"chain agui2aap→aap2agui", protoAGUI, protoAGUI, e.chainURL, 2, ""})
	}
	return ps
}

var thread atomic.Int64

func (e *env) read(ctx context.Context, p path, pr prompt, on onEvent) (int, error) {
	if p.client == protoAGUI {
		return runAGUI(ctx, e.hc, p.url, pr, int(thread.Add(1)), on)
	}
	return runAAP(ctx, e.hc, p.url, pr, on)
}

// usage is what the process spent.
type usage struct {
	cpu    time.Duration
	allocs uint64
}

func now() usage {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	ms := new(runtime.MemStats) // (5 KB: not on the asking goroutine's stack)
	runtime.ReadMemStats(ms)
	return usage{cpu: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), allocs: ms.Mallocs}
}

func (u usage) sub(v usage) usage { return usage{u.cpu - v.cpu, u.allocs - v.allocs} }

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	return s[len(s)/2]
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := bytes.Fields(b)
	if len(f) < 3 {
		return "unknown"
	}
	return string(bytes.Join(f[:3], []byte(" ")))
}

// Run measures and prints the table. It refuses at once a run that needs
// more open files than the process may have: out of descriptors, its
// servers could accept no connection and the run would wait forever.
func Run(ctx context.Context, o Options) error {
	o.defaults()
	if err := checkFileLimit(o, raiseFileLimit()); err != nil {
		return err
	}
	e, err := newEnv()
	if err != nil {
		return err
	}
	defer e.close()
	w := tabwriter.NewWriter(o.Out, 0, 0, 2, ' ', tabwriter.AlignRight)
	// The Go version with the figures: CI and the figures the docs give
	// use the patched toolchain (GOTOOLCHAIN=go1.27.3), not go.mod's minimum.
	fmt.Fprintf(o.Out, "aapbench: %s, GOMAXPROCS %d, load average %s\n", runtime.Version(), runtime.GOMAXPROCS(0), loadavg())

	su := &suite{e: e, ps: e.paths(!o.SkipChain), o: o}
	// The idle runs first: the later runs leave connections in the pools
	// of the bridges in this process, and 10,000 idle streams need nearly
	// every descriptor the machine allows a process.
	var idleTable bytes.Buffer
	if o.Idle > 0 {
		iw := tabwriter.NewWriter(&idleTable, 0, 0, 2, ' ', tabwriter.AlignRight)
		if err := su.idle(ctx, iw); err != nil {
			return err
		}
	}
	for _, n := range o.Sizes {
		if err := su.throughput(ctx, n, w); err != nil {
			return err
		}
	}
	for _, c := range o.Streams {
		if err := su.latency(ctx, c, w); err != nil {
			return err
		}
	}
	if _, err := o.Out.Write(idleTable.Bytes()); err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "load average at the end %s\n", loadavg())
	return nil
}

// throughput reads one stream of n deltas through every path, reps times
// interleaved, and prints medians: events per second, the ratio to the
// direct read of the agent's protocol, and the bridges' CPU time and
// allocations per event.
func (s *suite) throughput(ctx context.Context, n int, w *tabwriter.Writer) error {
	e, ps, reps := s.e, s.ps, s.o.Reps
	pr := prompt{n: n}
	// The agents' cost alone, and the recorded streams for the clients'.
	var recorded [2][]byte
	var err error
	if recorded[protoAGUI], err = rawAGUI(ctx, e.hc, e.aguiURL, pr, true); err != nil {
		return err
	}
	if recorded[protoAAP], err = rawAAP(ctx, e.hc, e.aapURL, pr, true); err != nil {
		return err
	}
	var agentUse, clientUse [2][]usage
	rates := make([][]float64, len(ps))
	uses := make([][]usage, len(ps))
	for range reps {
		for k := range 2 {
			runtime.GC()
			u0 := now()
			if k == int(protoAGUI) {
				_, err = rawAGUI(ctx, e.hc, e.aguiURL, pr, false)
			} else {
				_, err = rawAAP(ctx, e.hc, e.aapURL, pr, false)
			}
			if err != nil {
				return err
			}
			agentUse[k] = append(agentUse[k], now().sub(u0))
			runtime.GC()
			u0 = now()
			if k == int(protoAGUI) {
				_, err = readAGUI(bytes.NewReader(recorded[k]), onEvent{})
			} else {
				_, err = readAAP(bytes.NewReader(recorded[k]), onEvent{})
			}
			if err != nil {
				return err
			}
			clientUse[k] = append(clientUse[k], now().sub(u0))
		}
		for i, p := range ps {
			runtime.GC()
			u0 := now()
			t0 := time.Now()
			events, err := e.read(ctx, p, pr, onEvent{})
			if err != nil {
				return fmt.Errorf("%s, %d deltas: %w", p.name, n, err)
			}
			d := time.Since(t0)
			uses[i] = append(uses[i], now().sub(u0))
			rates[i] = append(rates[i], float64(events)/d.Seconds())
		}
	}
	med := func(us []usage) (cpu, allocs float64) {
		c := make([]float64, len(us))
		a := make([]float64, len(us))
		for i, u := range us {
			c[i], a[i] = float64(u.cpu), float64(u.allocs)
		}
		return median(c), median(a)
	}
	fmt.Fprintf(w, "\n%d deltas (median of %d, interleaved)\tevents/s\t÷ direct\tbridge CPU ns/event\tbridge allocs/event\t\n", n, reps)
	direct := map[proto]float64{}
	for i, p := range ps {
		r := median(rates[i])
		if p.bridges == 0 {
			direct[p.client] = r
		}
		if p.bridges == 0 {
			fmt.Fprintf(w, "%s\t%.0f\t1×\t–\t–\t\n", p.name, r)
			continue
		}
		cpu, allocs := med(uses[i])
		ac, aa := med(agentUse[p.agent])
		cc, ca := med(clientUse[p.client])
		fmt.Fprintf(w, "%s\t%.0f\t%.1f×\t%.0f\t%.2f\t\n", p.name, r, direct[p.agent]/r,
			(cpu-ac-cc)/float64(n)/float64(p.bridges), (allocs-aa-ca)/float64(n)/float64(p.bridges))
	}
	return w.Flush()
}

// latency runs c concurrent trickled streams of n deltas through every
// path, one path after the other, and prints the p50 and p99 of the time
// from the agent's write to the client's decode, and what the bridges add
// to the direct read of the agent's protocol.
func (s *suite) latency(ctx context.Context, c int, w *tabwriter.Writer) error {
	e, ps, n, every := s.e, s.ps, s.o.TrickleN, s.o.Trickle
	pr := prompt{n: n, interval: every}
	type result struct{ p50, p99, cpu float64 }
	res := make([]result, len(ps))
	for i, p := range ps {
		var mu sync.Mutex
		var lat []float64
		var wg sync.WaitGroup
		var firstErr error
		u0 := now()
		for k := range c {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Streams start spread over one interval, as independent
				// conversations would: ticks of c streams all at once
				// would measure the queue behind them, not the bridge.
				time.Sleep(every * time.Duration(k) / time.Duration(c))
				local := make([]float64, 0, n)
				_, err := e.read(ctx, p, pr, onEvent{delta: func(s string) {
					if v, err := strconv.ParseInt(s, 10, 64); err == nil {
						local = append(local, float64(stamp()-v))
					}
				}})
				mu.Lock()
				defer mu.Unlock()
				lat = append(lat, local...)
				if err != nil && firstErr == nil {
					firstErr = err
				}
			}()
		}
		wg.Wait()
		cpu := float64(now().sub(u0).cpu) / float64(c*n)
		if firstErr != nil {
			return fmt.Errorf("%s, %d trickled streams: %w", p.name, c, firstErr)
		}
		sort.Float64s(lat)
		if len(lat) == 0 {
			return errors.New(p.name + ": no latencies")
		}
		res[i] = result{lat[len(lat)/2], lat[len(lat)*99/100], cpu}
	}
	fmt.Fprintf(w, "\n%d stream(s), a delta every %v\tp50 µs\tp99 µs\tadded p50 µs\tadded p99 µs\tprocess CPU µs/event\t\n", c, every)
	direct := map[proto]result{}
	for i, p := range ps {
		r := res[i]
		if p.bridges == 0 {
			direct[p.client] = r
			fmt.Fprintf(w, "%s\t%.0f\t%.0f\t–\t–\t%.1f\t\n", p.name, r.p50/1e3, r.p99/1e3, r.cpu/1e3)
			continue
		}
		d := direct[p.agent]
		fmt.Fprintf(w, "%s\t%.0f\t%.0f\t%.0f\t%.0f\t%.1f\t\n", p.name, r.p50/1e3, r.p99/1e3, (r.p50-d.p50)/1e3, (r.p99-d.p99)/1e3, r.cpu/1e3)
	}
	return w.Flush()
}

// idle opens c streams through each path that hold after their first
// delta, and prints the memory the process holds per open stream (Go heap
// and stacks, after a collection), and for the bridges what that adds to
// the direct read of the agent's protocol.
func (s *suite) idle(ctx context.Context, w *tabwriter.Writer) error {
	alone := len(s.o.BridgeProcess) > 0
	bridgeColumn := "bridge KB/stream"
	if alone {
		bridgeColumn += " (its process alone)"
	}
	title := fmt.Sprintf("%d idle streams", s.o.Idle)
	if s.o.IdleHistory > 0 {
		title += fmt.Sprintf(", %d earlier messages", s.o.IdleHistory)
	}
	fmt.Fprintf(w, "\n%s\tKB/stream\t%s\terrors\tgoroutines/stream\tof which stacks KB/stream\t\n", title, bridgeColumn)
	direct := map[proto]float64{}
	var failed int64
	var firstErr atomic.Value
	for _, p := range s.ps {
		if p.bridges > 1 {
			continue // three hops per stream: past this machine's file limit at 10k
		}
		r, err := s.idlePath(ctx, p, &firstErr)
		if err != nil {
			return err
		}
		failed += r.errs
		switch {
		case p.bridges == 0:
			direct[p.client] = r.per
			fmt.Fprintf(w, "%s\t%.1f\t–\t%d\t%.1f\t%.1f\t\n", p.name, r.per, r.errs, r.gs, r.stacks)
		case r.alone:
			fmt.Fprintf(w, "%s\t–\t%.1f\t%d\t%.1f\t%.1f\t\n", p.name, r.per, r.errs, r.gs, r.stacks)
		default:
			fmt.Fprintf(w, "%s\t%.1f\t%.1f\t%d\t%.1f\t%.1f\t\n", p.name, r.per, r.per-direct[p.agent], r.errs, r.gs, r.stacks)
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("%d idle streams failed, the first: %v", failed, firstErr.Load())
	}
	return nil
}

// idleRow is what idlePath measured on one path: memory per stream (KB),
// goroutines per stream, of which stacks (KB), the streams that failed,
// and whether the bridge was measured in a process of its own.
type idleRow struct {
	per, gs, stacks float64
	sent            float64 // KB per stream the agent sent (a stalled measure)
	errs            int64
	alone           bool
}

// idlePath opens the idle streams through p and measures them; the first
// stream's error (of all paths) goes into firstErr.
func (s *suite) idlePath(ctx context.Context, p path, firstErr *atomic.Value) (idleRow, error) {
	e, c := s.e, s.o.Idle
	// measure gives the memory and goroutines of what is measured: this
	// process, or the bridge's own.
	measure := func() (processMem, error) { runtime.GC(); return memNow(), nil }
	var proc *bridgeProcess
	if len(s.o.BridgeProcess) > 0 && p.bridges == 1 {
		upstream := e.aguiURL
		if p.agent == protoAAP {
			upstream = e.aapURL
		}
		var err error
		if proc, err = startBridgeProcess(s.o.BridgeProcess, p.kind, upstream); err != nil {
			return idleRow{}, err
		}
		p.url = proc.url
		measure = func() (processMem, error) { return proc.mem(ctx, e.hc) }
	}
	m0, err := measure()
	if err != nil {
		return idleRow{}, err
	}
	streams, failed, first := openIdle(ctx, e, p, prompt{n: 1, hold: true, history: s.o.IdleHistory}, c)
	if first != nil {
		firstErr.CompareAndSwap(nil, fmt.Errorf("%s: %w", p.name, first))
	}
	m1, err := measure()
	if err != nil {
		return idleRow{}, err
	}
	r := idleRow{
		per:    float64(m1.InUse-m0.InUse) / float64(c) / 1024,
		gs:     float64(m1.Goroutines-m0.Goroutines) / float64(c),
		stacks: float64(m1.Stacks-m0.Stacks) / float64(c) / 1024,
		alone:  proc != nil,
	}
	if s.o.IdleProfile != "" {
		prefix := s.o.IdleProfile + fileName(p.name)
		if proc != nil {
			proc.writeProfiles(ctx, e.hc, prefix)
		} else {
			writeProfiles(prefix)
		}
	}
	e.rel.all()
	streams.close()
	e.hc.CloseIdleConnections()
	if proc != nil {
		proc.stop()
	}
	r.errs = failed
	return r, nil
}

// fileName is name with each character that is not a letter, a digit or
// "-" as "-": "net/http relay (AG-UI)" names no directory.
func fileName(name string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r >= '0' && r <= '9' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' {
			return r
		}
		return '-'
	}, name)
}

func writeProfiles(prefix string) {
	for _, name := range []string{"heap", "goroutine"} {
		if f, err := os.Create(prefix + "." + name); err == nil {
			_ = pprof.Lookup(name).WriteTo(f, 0)
			f.Close()
		}
	}
}

// memNow is this process's memory: the memory of live objects (called
// after a collection) and of goroutine stacks, the stacks among it, and its
// goroutines. Live bytes rather than heap spans in use: spans half filled
// by an earlier path's streams would hide a later path's growth.
//
// The streams are idle once what their first events set going has ended
// (a run log's batch being stored, say): it waits, up to a second, for the
// number of goroutines to hold still for 50 ms before it measures.
func memNow() processMem {
	settle()
	runtime.GC()
	ms := new(runtime.MemStats) // (5 KB: not on the asking goroutine's stack)
	runtime.ReadMemStats(ms)
	return processMem{InUse: int64(ms.HeapAlloc + ms.StackInuse), Stacks: int64(ms.StackInuse), Goroutines: runtime.NumGoroutine()}
}

// settle waits, up to a second, until the process's goroutines have held
// still for 50 ms.
func settle() {
	n, since := runtime.NumGoroutine(), time.Now()
	for deadline := since.Add(time.Second); time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		if m := runtime.NumGoroutine(); m != n {
			n, since = m, time.Now()
		} else if time.Since(since) >= 50*time.Millisecond {
			return
		}
	}
}

// raiseFileLimit lifts the soft limit on open files to the hard one: each
// idle stream through a bridge holds four descriptors in this process. It
// returns the limit in force (0: unknown).
func raiseFileLimit() uint64 {
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl) != nil {
		return 0
	}
	if rl.Cur < rl.Max {
		want := rl.Max
		rl.Cur = rl.Max
		if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl) == nil {
			return want
		}
		_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl)
	}
	return rl.Cur
}

// filesNeeded is about how many descriptors this process holds at the
// peak of a run: an idle stream holds two (the client's connection and the
// upstream's) on the direct paths and four through a bridge in this
// process; a trickled stream through the chain holds six; and some spare
// (9,900 idle streams with the bridges alone fit under 20,000, as
// docs/TESTING.md says).
func filesNeeded(o Options) int {
	perIdle := 4
	if len(o.BridgeProcess) > 0 {
		perIdle = 2 // the bridge holds its own in its process
	}
	return max(perIdle*max(o.Idle, 0), 6*slices.Max(o.Streams)) + 100
}

// checkFileLimit refuses a run that needs more open files than limit (0:
// unknown, not checked).
func checkFileLimit(o Options, limit uint64) error {
	need := filesNeeded(o)
	if limit == 0 || uint64(need) <= limit {
		return nil
	}
	return fmt.Errorf("-idle %d and -streams up to %d need about %d open files, and this process may open %d: lower them, or raise the limit (ulimit -n)",
		max(o.Idle, 0), slices.Max(o.Streams), need, limit)
}

// openStore opens the store spec names for a bridge process; "" is a
// memory store.
func openStore(spec string) (store.Store, error) {
	if spec == "" {
		return store.NewMemory(), nil
	}
	return store.Open(spec)
}
