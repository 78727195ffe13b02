package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/aapagui/aapagui/aap"
	_ "github.com/aapagui/aapagui/store/postgres" // the bridges' store with -stores postgres
)

// What an open stream costs: each bridge on each store, and a net/http
// relay of the same stream, each in a process of its own, measured in the
// same run (and, with a baseline build, interleaved with it). An idle
// stream has had its first delta and waits for the next; a stalled one
// belongs to a client that read its first delta and then stopped reading
// while its agent went on sending.

// MemoryOptions configures Memory. Zero fields take the defaults in
// brackets.
type MemoryOptions struct {
	Command  []string // this build's bridge command: argv that serves -serve-bridge (required)
	Baseline []string // a baseline build's bridge command; nil leaves it out
	Streams  []int    // concurrent idle streams per process [1000]
	// Stores names the stores the bridges run on: "memory", "sqlite",
	// "postgres" (which needs Postgres) [memory, sqlite].
	Stores   []string
	Postgres string // the DSN of a PostgreSQL database for the "postgres" store
	// Stalled is how many streams whose clients stop reading each bridge
	// holds in its stalled run [200]; < 0 skips those runs.
	Stalled int
	// StalledDeltas is how many deltas the agent sends into each stalled
	// stream, one a millisecond [2000].
	StalledDeltas int
	Reps          int       // interleaved repetitions; figures are medians [1]
	Bound         float64   // the ratio to the relay's bytes per stream a row may reach [1.2]
	Out           io.Writer // [os.Stdout]
}

func (o *MemoryOptions) defaults() {
	if len(o.Streams) == 0 {
		o.Streams = []int{1000}
	}
	if len(o.Stores) == 0 {
		o.Stores = []string{"memory", "sqlite"}
	}
	if o.Stalled == 0 {
		o.Stalled = 200
	}
	if o.StalledDeltas <= 0 {
		o.StalledDeltas = 2000
	}
	if o.Reps <= 0 {
		o.Reps = 1
	}
	if o.Bound <= 0 {
		o.Bound = 1.2
	}
	if o.Out == nil {
		o.Out = os.Stdout
	}
}

// MemoryRow is one figure of Memory: the memory a process holds per open
// stream (live heap and goroutine stacks after a collection), the median
// of the repetitions.
type MemoryRow struct {
	Streams int
	Stalled bool   // the streams' clients had stopped reading
	Store   string // "" for the relay
	Path    string // "relay", "aap2agui" or "agui2aap"
	Build   string // "this" or "baseline"
	KB      float64
	// Ratio is KB over the relay's, for the same streams in the same run
	// (0 for the relay itself).
	Ratio      float64
	Goroutines float64 // per stream
	StacksKB   float64 // of KB, the goroutines' stacks
	RelayKB    float64 // the relay's KB, for the same streams in the same run
	// SentKB is, of a stalled row, what the agent sent into each stream:
	// the most a bridge may hold for a client that stopped reading beside
	// what it holds for an idle one, since it reads nothing more of its
	// agent while a write to the client waits (up to the stall timeout,
	// which then ends the turn). 0 for an idle row.
	SentKB float64
}

// Over reports whether a bridge's row is past what it may hold: bound
// times the relay's bytes per stream, and of a stalled stream what its
// agent sent it as well.
func (r MemoryRow) Over(bound float64) bool {
	return r.Path != relayProxy && r.KB > r.Limit(bound)
}

// Limit is what a bridge's row may hold: bound times the relay's bytes
// per stream, plus what its agent sent (of a stalled row).
func (r MemoryRow) Limit(bound float64) float64 { return bound*r.RelayKB + r.SentKB }

// memoryCase is one process measured by Memory.
type memoryCase struct {
	path, store, build string
	argv               []string
}

// Memory measures bytes per open stream and prints them, each beside the
// relay's of the same run, marking each row past o.Bound; it returns the
// rows so that a caller (CI's benchmark) can hold them to the bound.
func Memory(ctx context.Context, o MemoryOptions) ([]MemoryRow, error) {
	o.defaults()
	if len(o.Command) == 0 {
		return nil, errors.New("memory: no bridge command")
	}
	if err := checkFileLimit(o.files(), raiseFileLimit()); err != nil {
		return nil, err
	}
	e, err := newEnv()
	if err != nil {
		return nil, err
	}
	defer e.close()
	set, err := newSetUp("aapbench-memory-")
	if err != nil {
		return nil, err
	}
	defer set.close()
	cases, err := memoryCases(o, set.dir)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(o.Out, "aapbench memory: load average %s\n", loadavg())
	var rows []MemoryRow
	for _, n := range o.Streams {
		rs, err := memoryRun(ctx, e, o, cases, n, false)
		if err != nil {
			return rows, err
		}
		rows = append(rows, rs...)
	}
	if o.Stalled > 0 {
		rs, err := memoryRun(ctx, e, o, cases, o.Stalled, true)
		if err != nil {
			return rows, err
		}
		rows = append(rows, rs...)
	}
	if err := printMemory(o, rows); err != nil {
		return rows, err
	}
	fmt.Fprintf(o.Out, "load average at the end %s\n", loadavg())
	return rows, nil
}

// files is what o needs open in this process, as Options: each stream's
// connections to the bridge and from it to the agent (the bridge is in a
// process of its own).
func (o MemoryOptions) files() Options {
	return Options{Idle: maxInt(o.Streams), Streams: []int{1}, BridgeProcess: o.Command}
}

func maxInt(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// memoryCases is every process Memory measures: the relay, then each
// bridge on each store, of this build and of the baseline.
func memoryCases(o MemoryOptions, dir string) ([]memoryCase, error) {
	cases := []memoryCase{{path: relayProxy, build: "this", argv: o.Command}}
	builds := []struct {
		name string
		argv []string
	}{{"this", o.Command}}
	if o.Baseline != nil {
		builds = append(builds, struct {
			name string
			argv []string
		}{"baseline", o.Baseline})
	}
	for _, st := range o.Stores {
		for _, kind := range []string{bridgeAAP2AGUI, bridgeAGUI2AAP} {
			for _, b := range builds {
				spec, err := storeSpec(st, o.Postgres, filepath.Join(dir, b.name+"-"+kind+".db"))
				if err != nil {
					return nil, err
				}
				cases = append(cases, memoryCase{path: kind, store: st, build: b.name, argv: bridge(b.argv, spec)})
			}
		}
	}
	return cases, nil
}

// storeSpec is what -bridge-store is given for the store named name.
func storeSpec(name, postgres, file string) (string, error) {
	switch name {
	case "memory":
		return "memory:", nil
	case "sqlite":
		return "sqlite:" + file, nil
	case "postgres":
		if postgres == "" {
			return "", errors.New(`memory: the "postgres" store needs a DSN (-postgres, or AAPAGUI_TEST_POSTGRES)`)
		}
		return postgres, nil
	}
	return "", fmt.Errorf("memory: no store %q (memory, sqlite or postgres)", name)
}

// memoryRun measures every case with n streams, o.Reps times with the
// cases interleaved, and gives each case's medians.
func memoryRun(ctx context.Context, e *env, o MemoryOptions, cases []memoryCase, n int, stalled bool) ([]MemoryRow, error) {
	samples := make([][]idleRow, len(cases))
	for range o.Reps {
		for i, c := range cases {
			r, err := measureProcess(ctx, e, c, n, stalled, o.StalledDeltas)
			if err != nil {
				return nil, fmt.Errorf("%s on %s (%s build): %w", c.path, c.store, c.build, err)
			}
			samples[i] = append(samples[i], r)
		}
	}
	rows := make([]MemoryRow, len(cases))
	for i, c := range cases {
		var kb, gs, st, sent []float64
		for _, r := range samples[i] {
			kb, gs, st, sent = append(kb, r.per), append(gs, r.gs), append(st, r.stacks), append(sent, r.sent)
		}
		rows[i] = MemoryRow{Streams: n, Stalled: stalled, Store: c.store, Path: c.path, Build: c.build,
			KB: median(kb), Goroutines: median(gs), StacksKB: median(st), SentKB: median(sent)}
	}
	for i := range rows {
		rows[i].RelayKB = rows[0].KB
		if i > 0 {
			rows[i].Ratio = rows[i].KB / rows[0].KB
		}
	}
	return rows, nil
}

// measureProcess starts c's process, opens n streams through it (idle, or
// stalled: clients that stop reading after the first delta while the agent
// sends deltas more), and measures what the process holds per stream.
func measureProcess(ctx context.Context, e *env, c memoryCase, n int, stalled bool, deltas int) (idleRow, error) {
	upstream, client := e.aguiURL, protoAGUI
	switch c.path {
	case bridgeAAP2AGUI:
		client = protoAAP
	case bridgeAGUI2AAP:
		upstream = e.aapURL
	}
	proc, err := startBridgeProcess(c.argv, c.path, upstream)
	if err != nil {
		return idleRow{}, err
	}
	defer proc.stop()
	p := path{name: c.path, client: client, url: proc.url, bridges: 1, kind: c.path}
	m0, err := proc.mem(ctx, e.hc)
	if err != nil {
		return idleRow{}, err
	}
	pr := prompt{n: 1, hold: true}
	open := openIdleAll
	sent0 := e.rel.sent.Load()
	if stalled {
		pr = prompt{n: deltas, interval: time.Millisecond, hold: true}
		open = openStalled
	}
	streams, err := open(ctx, e, p, pr, n)
	defer func() {
		e.rel.all()
		streams.close()
		e.hc.CloseIdleConnections()
	}()
	if err != nil {
		return idleRow{}, err
	}
	if stalled {
		// The agent's deltas are sent by now, and the bridge holds what it
		// could not write: a load tool's wait, not a test's.
		select {
		case <-time.After(time.Duration(deltas)*time.Millisecond + 2*time.Second):
		case <-ctx.Done():
			return idleRow{}, ctx.Err()
		}
	}
	m1, err := proc.mem(ctx, e.hc)
	if err != nil {
		return idleRow{}, err
	}
	r := idleRow{
		per:    float64(m1.InUse-m0.InUse) / float64(n) / 1024,
		gs:     float64(m1.Goroutines-m0.Goroutines) / float64(n),
		stacks: float64(m1.Stacks-m0.Stacks) / float64(n) / 1024,
		alone:  true,
	}
	if stalled {
		r.sent = float64(e.rel.sent.Load()-sent0) / float64(n) / 1024
	}
	return r, nil
}

// openStreams is the streams a measurement opened: close ends them all
// and waits for them.
type openStreams struct {
	wg    sync.WaitGroup
	conns []io.Closer
	mu    sync.Mutex
}

func (s *openStreams) add(c io.Closer) {
	s.mu.Lock()
	s.conns = append(s.conns, c)
	s.mu.Unlock()
}

func (s *openStreams) close() {
	if s == nil {
		return
	}
	s.mu.Lock()
	for _, c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// openIdle opens n streams through p that hold after their first delta,
// read as a client reads them, and returns once each has its first delta
// or has failed: how many failed, and the first one's error.
func openIdle(ctx context.Context, e *env, p path, pr prompt, n int) (s *openStreams, failed int64, first error) {
	s = &openStreams{}
	var ready sync.WaitGroup
	var errs atomic.Int64
	var firstErr atomic.Value
	sem := make(chan struct{}, 64)
	for range n {
		ready.Add(1)
		s.wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer s.wg.Done()
			once := sync.OnceFunc(func() { ready.Done(); <-sem })
			defer once()
			if _, err := e.read(ctx, p, pr, onEvent{first: once}); err != nil && errs.Add(1) == 1 {
				firstErr.Store(err)
			}
		}()
	}
	ready.Wait()
	first, _ = firstErr.Load().(error)
	return s, errs.Load(), first
}

// openIdleAll is openIdle where any failed stream fails the measure.
func openIdleAll(ctx context.Context, e *env, p path, pr prompt, n int) (*openStreams, error) {
	s, failed, first := openIdle(ctx, e, p, pr, n)
	if failed > 0 {
		return s, fmt.Errorf("%d of %d streams failed, the first: %v", failed, n, first)
	}
	return s, nil
}

// openStalled opens n streams through p whose clients read the response's
// first bytes and then stop reading, on connections with the smallest
// receive buffer the kernel gives, so that what the agent sends next
// stays with the bridge.
func openStalled(ctx context.Context, e *env, p path, pr prompt, n int) (*openStreams, error) {
	s := &openStreams{}
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true, ReadBufferSize: 1 << 10,
		DialContext: (&net.Dialer{Control: smallReceiveBuffer}).DialContext}}
	sem := make(chan struct{}, 64)
	errc := make(chan error, n)
	for range n {
		sem <- struct{}{}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer func() { <-sem }()
			body, err := openStream(ctx, hc, p, pr)
			if err == nil {
				_, err = io.ReadFull(body, make([]byte, 1))
				s.add(body)
			}
			errc <- err
		}()
	}
	var failed int
	var first error
	for range n {
		if err := <-errc; err != nil {
			failed++
			first = cmp.Or(first, err)
		}
	}
	if failed > 0 {
		return s, fmt.Errorf("%d of %d stalled streams failed, the first: %v", failed, n, first)
	}
	return s, nil
}

// smallReceiveBuffer sets a socket's receive buffer to the least the
// kernel allows (it doubles the value and keeps a floor of its own).
func smallReceiveBuffer(_, _ string, c syscall.RawConn) error {
	var serr error
	err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 1024) })
	return cmp.Or(err, serr)
}

// openStream starts a stream of pr through p and returns its body unread.
func openStream(ctx context.Context, hc *http.Client, p path, pr prompt) (io.ReadCloser, error) {
	if p.client == protoAAP {
		cl := aap.NewClient(p.url, aap.ClientOptions{HTTPClient: hc})
		s, err := cl.CreateSession(ctx, &aap.PostSessionsRequest{Agent: aap.AgentConfig{Name: "bench"}})
		if err != nil {
			return nil, err
		}
		return cl.OpenTurn(ctx, s.SessionID, &aap.PostSessionTurnRequest{
			Stream: aap.StreamDelta, Messages: []aap.Message{aap.UserText(pr.String())},
		})
	}
	body := `{"threadId":"t` + fmt.Sprint(thread.Add(1)) + `","runId":"r","state":{},"messages":[{"id":"u","role":"user","content":"` + pr.String() + `"}],"tools":[],"context":[],"forwardedProps":{}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return resp.Body, nil
}

// printMemory writes the rows as a table, marking each row past the bound.
func printMemory(o MemoryOptions, rows []MemoryRow) error {
	w := tabwriter.NewWriter(o.Out, 0, 0, 2, ' ', tabwriter.AlignRight)
	title := ""
	for _, r := range rows {
		if t := memoryTitle(r); t != title {
			title = t
			fmt.Fprintf(w, "\n%s\tstore\tbuild\tKB/stream\t÷ relay\tgoroutines/stream\tof which stacks KB/stream\t%s\n", t, memoryLimitTitle(r, o.Bound))
		}
		ratio, limit, mark := "1×", "", ""
		if r.Path != relayProxy {
			ratio, limit = fmt.Sprintf("%.2f×", r.Ratio), fmt.Sprintf("%.1f", r.Limit(o.Bound))
			if r.Over(o.Bound) {
				mark = fmt.Sprintf("  OVER %.2f× the relay", o.Bound)
				if r.Stalled {
					mark += " + what its agent sent"
				}
			}
		}
		stalled := ""
		if r.Stalled {
			stalled = fmt.Sprintf("%.1f\t%s\t", r.SentKB, limit)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%.1f\t%s\t%.1f\t%.1f\t%s%s\n", memoryPathName(r.Path), cmp.Or(r.Store, "–"), r.Build, r.KB, ratio, r.Goroutines, r.StacksKB, stalled, mark)
	}
	return w.Flush()
}

// Verdict says of a row past bound what it holds and what it may.
func (r MemoryRow) Verdict(bound float64) string {
	if r.Stalled {
		return fmt.Sprintf("%s on %s holds %.1f KB per stream whose client stopped reading, past %.2f× the relay's %.1f plus the %.1f its agent sent", r.Path, r.Store, r.KB, bound, r.RelayKB, r.SentKB)
	}
	return fmt.Sprintf("%s on %s holds %.1f KB per idle stream, %.2f× the relay's, past %.2f×", r.Path, r.Store, r.KB, r.Ratio, bound)
}

// memoryLimitTitle heads the columns of a stalled row: what its agent
// sent, and what it may hold.
func memoryLimitTitle(r MemoryRow, bound float64) string {
	if !r.Stalled {
		return ""
	}
	return fmt.Sprintf("its agent sent KB/stream\tmay hold KB/stream (%.2f× relay + sent)\t", bound)
}

func memoryTitle(r MemoryRow) string {
	if r.Stalled {
		return fmt.Sprintf("%d streams whose clients stopped reading", r.Streams)
	}
	return fmt.Sprintf("%d idle streams", r.Streams)
}

func memoryPathName(p string) string {
	if p == relayProxy {
		return "net/http relay"
	}
	return p
}
