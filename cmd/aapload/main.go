package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/store"
	_ "github.com/aapagui/aapagui/store/postgres" // store.Open: the bridge's PostgreSQL store
	_ "github.com/aapagui/aapagui/store/sqlite"   // and its SQLite store
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "aapload:", err)
		os.Exit(1)
	}
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("aapload", flag.ContinueOnError)
	bin := fs.String("bin", "", "folder holding the aap2agui and agui2aap binaries (required)")
	n := fs.Int("n", 100, "sessions (aap2agui) and threads (agui2aap)")
	m := fs.Int("m", 10, "turns per session and runs per thread")
	c := fs.Int("c", 20, "concurrent sessions/threads")
	only := fs.String("only", "", "run one bridge only: aap2agui or agui2aap")
	direct := fs.Bool("direct", true, "also run the workload straight to the agent each bridge fronts, for ratios")
	storeSpec := fs.String("store", "", "the store both programs use, as their --store (postgres://… to measure a PostgreSQL replica); empty: a SQLite file of each program's own in a temporary folder")
	slow := fs.Int("slow", 0, "measure aap2agui alone, with and without this many open streams whose clients never read (their agent sends a small delta every 200 ms)")
	presessions := fs.Int("presessions", 0, "with -slow or -burst: sessions put in the store before aap2agui starts (a store in use for a while)")
	rolling := fs.Bool("rolling", false, "a rolling restart instead: two replicas of each program on the PostgreSQL -store, under load at -c sessions and -c threads of -m turns, each replica in turn stopped with SIGTERM and started again; fails unless every request succeeds and every acknowledged turn is in history once")
	delay := fs.Duration("shutdown-delay", 2*time.Second, "with -rolling: the replicas' --shutdown-delay")
	burst := fs.Int("burst", 0, "measure aap2agui alone, with and without this many turns started at once whose clients never read, on a store prepared with -presessions and -big")
	big := fs.Int("big", 0, "with -burst: sessions with a long history put in the store beforehand")
	bigMiB := fs.Int("big-mib", 7, "with -big: MiB of history each")
	huge := fs.Int("huge", 0, "MiB of one message the upstream streams: measure what it costs each bridge's memory (RSS growth) and what is stored")
	settle := fs.Duration("settle", 0, "with -rolling: load before the first restart, between restarts and after the last (default 2s); with -burst: how long after the burst's answers the running turns are counted (default 10s)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *bin == "" {
		return errors.New("-bin is required")
	}
	dir, err := os.MkdirTemp("", "aapload")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if *rolling {
		return rollingLoad{bin: *bin, spec: *storeSpec, c: *c, m: *m, delay: *delay, settle: orDefault(*settle, 2*time.Second)}.run(out)
	}
	if *huge > 0 {
		return hugeLoad{bin: *bin, dir: dir, spec: *storeSpec, mib: *huge}.run(out)
	}
	if *burst > 0 {
		return burstLoad{bin: *bin, dir: dir, spec: *storeSpec, n: *n, m: *m, c: *c, burst: *burst,
			presessions: *presessions, big: *big, bigMiB: *bigMiB, settle: orDefault(*settle, 10*time.Second)}.run(out)
	}
	if *slow > 0 {
		return slowLoad{bin: *bin, dir: dir, spec: *storeSpec, n: *n, m: *m, c: *c, slow: *slow, presessions: *presessions}.run(out)
	}
	for _, b := range []struct {
		name string
		load func(base string) *stats
		// agent is the demo agent the bridge fronts, served at the
		// paths the direct workload uses; direct is that workload.
		agent  http.Handler
		what   string
		direct func(base string) *stats
	}{
		{"aap2agui", func(base string) *stats { return loadAAP(base, *n, *m, *c) },
			http.StripPrefix("/agents/demo", demo.AGUIAgent{}), "AG-UI runs to the AG-UI demo agent",
			func(base string) *stats { return loadAGUI(base, *n, *m, *c) }},
		{"agui2aap", func(base string) *stats { return loadAGUI(base, *n, *m, *c) },
			demo.NewAAPAgent(demo.AAPAgentOptions{}), "AAP turns to the AAP demo agent",
			func(base string) *stats { return loadAAP(base, *n, *m, *c) }},
	} {
		if *only != "" && *only != b.name {
			continue
		}
		var base *stats
		if *direct {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				return err
			}
			hs := &http.Server{Handler: b.agent}
			go func() { _ = hs.Serve(ln) }()
			base = b.direct("http://" + ln.Addr().String())
			_ = hs.Close()
			base.print(out, "direct ("+b.what+")", *n, *m, *c, 0)
		}
		spec := *storeSpec
		if spec == "" {
			spec = "sqlite:" + filepath.Join(dir, b.name+".db")
		}
		p, err := start(filepath.Join(*bin, b.name), spec)
		if err != nil {
			return fmt.Errorf("%s: %w", b.name, err)
		}
		st := b.load(p.base)
		rss, cpu := p.peakRSS(), p.cpuSeconds()
		p.stop()
		if b.name == "agui2aap" {
			st.countLostThreads(spec)
		}
		st.print(out, b.name, *n, *m, *c, rss)
		if cpu > 0 {
			fmt.Fprintf(out, "%s: CPU %.2f s, %.0f turns per CPU-second\n", b.name, cpu, float64(st.ok)/cpu)
		}
		if base != nil {
			fmt.Fprintf(out, "%s ÷ direct: p50 %.2f×, p99 %.2f×\n", b.name, ratio(st.pct(0.50), base.pct(0.50)), ratio(st.pct(0.99), base.pct(0.99)))
		}
	}
	return nil
}

func ratio(a, b time.Duration) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}

type proc struct {
	cmd    *exec.Cmd
	base   string
	exited chan struct{} // closed once the process has exited and its log is read

	mu  sync.Mutex
	log logCounts
}

// logCounts counts the bridge's warnings and errors: all of them, those
// about lock renewals and checkpoints, and the locks lost.
type logCounts struct{ all, renew, late, checkpoint, lost int }

// logged is what the bridge has logged so far.
func (p *proc) logged() logCounts {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log
}

// printedLines is how many of the bridge's warnings and errors are passed
// on to stderr; the rest are only counted.
const printedLines = 20

// start runs a bridge with the store spec on a loopback port of its own
// choosing (read from its start-up log line, so that no other process can
// take the port in between) and waits for /healthz. The bridge logs at its
// default level, info; its warnings and errors are passed on to stderr.
func start(path, spec string, args ...string) (*proc, error) {
	cmd := exec.Command(path, append([]string{"--listen", "127.0.0.1:0", "--store", spec}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	addr := make(chan string, 1)
	exited := make(chan struct{})
	p := &proc{cmd: cmd, exited: exited}
	go func() {
		defer close(exited)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		listening := false
		for sc.Scan() {
			line := sc.Bytes()
			if !listening {
				var l struct {
					Listen string `json:"listen"`
				}
				if json.Unmarshal(line, &l) == nil && l.Listen != "" {
					listening = true
					addr <- l.Listen
					continue
				}
			}
			if bytes.Contains(line, []byte(`"level":"warn"`)) || bytes.Contains(line, []byte(`"level":"error"`)) || !bytes.HasPrefix(line, []byte("{")) {
				p.mu.Lock()
				p.log.all++
				if bytes.Contains(line, []byte(`renew`)) {
					p.log.renew++
				}
				if bytes.Contains(line, []byte(`checkpoint`)) {
					p.log.checkpoint++
				}
				if bytes.Contains(line, []byte(`"op":"late"`)) {
					p.log.late++
				}
				if bytes.Contains(line, []byte(`"op":"lost"`)) {
					p.log.lost++
				}
				n := p.log.all
				p.mu.Unlock()
				if n <= printedLines {
					fmt.Fprintf(os.Stderr, "%s: %s\n", filepath.Base(path), line)
				}
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
		_ = cmd.Wait()
	}()
	select {
	case a := <-addr:
		p.base = "http://" + a
	case <-exited:
		return nil, errors.New("exited before serving")
	case <-time.After(30 * time.Second):
		p.stop()
		return nil, errors.New("did not start serving within 30 s")
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get(p.base + "/healthz"); err == nil {
			resp.Body.Close()
			return p, nil
		}
	}
	p.stop()
	return nil, errors.New("did not answer /healthz within 30 s")
}

// peakRSS is the process's high-water resident set (VmHWM), in KiB.
func (p *proc) peakRSS() int { return p.status("VmHWM:") }

// cpuSeconds is the CPU time (user and system) the process has used so
// far, from /proc (0 where there is none), in seconds at 100 ticks a
// second, the clock Linux reports /proc/PID/stat in on every architecture.
func (p *proc) cpuSeconds() float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// The fields after the command name, which is in parentheses and may
	// hold spaces: utime and stime are the 12th and 13th of them.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	fields := strings.Fields(string(b[i+1:]))
	if len(fields) < 13 {
		return 0
	}
	user, _ := strconv.ParseFloat(fields[11], 64)
	sys, _ := strconv.ParseFloat(fields[12], 64)
	return (user + sys) / 100
}

// rss is the process's resident set now (VmRSS), in KiB.
func (p *proc) rss() int { return p.status("VmRSS:") }

// status reads a figure in KiB from the process's /proc status.
func (p *proc) status(key string) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key); ok {
			var kb int
			fmt.Sscanf(strings.TrimSpace(v), "%d", &kb)
			return kb
		}
	}
	return 0
}

func (p *proc) stop() {
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// stats collects what the load test reports.
type stats struct {
	mu        sync.Mutex
	ok        int
	conflicts int            // 409
	errors    map[string]int // by code
	lost      int
	durations []time.Duration
	threads   map[string][]string // agui2aap: user message ids sent in successful runs
}

func newStats() *stats { return &stats{errors: map[string]int{}, threads: map[string][]string{}} }

func (s *stats) turn(d time.Duration, code string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch code {
	case "":
		s.ok++
		s.durations = append(s.durations, d)
	case "409":
		s.conflicts++
	default:
		s.errors[code]++
	}
}

// pct is the p-th quantile of the successful turns' durations.
func (s *stats) pct(p float64) time.Duration {
	if len(s.durations) == 0 {
		return 0
	}
	slices.Sort(s.durations)
	return s.durations[min(len(s.durations)-1, int(p*float64(len(s.durations))))]
}

// print writes one line of figures; rssKB 0 (a direct run, in this
// process) leaves out peak RSS.
func (s *stats) print(w io.Writer, name string, n, m, c, rssKB int) {
	pct := s.pct
	codes := make([]string, 0, len(s.errors))
	for k, v := range s.errors {
		codes = append(codes, fmt.Sprintf("%s=%d", k, v))
	}
	sort.Strings(codes)
	errs := "none"
	if len(codes) > 0 {
		errs = strings.Join(codes, " ")
	}
	rss := ""
	if rssKB > 0 {
		rss = fmt.Sprintf(", peak RSS %.1f MiB", float64(rssKB)/1024)
	}
	fmt.Fprintf(w, "%s: %d×%d at c=%d: turns ok %d/%d, 409s %d, errors %s, messages lost %d, p50 %s, p99 %s%s\n",
		name, n, m, c, s.ok, n*m, s.conflicts, errs, s.lost, pct(0.50).Round(time.Millisecond/10), pct(0.99).Round(time.Millisecond/10), rss)
}

var client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}, Timeout: 5 * time.Minute}

func postJSON(url string, body any) (*http.Response, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	return client.Do(req)
}

// decodeJSON reads resp's JSON body into v and closes it.
func decodeJSON(resp *http.Response, v any) error {
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(v)
}

// failure names a non-2xx answer: "409" or the JSON error code.
func failure(resp *http.Response) string {
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusConflict {
		return "409"
	}
	var e struct{ Error struct{ Code string } }
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if json.Unmarshal(b, &e) == nil && e.Error.Code != "" {
		return e.Error.Code
	}
	return fmt.Sprintf("http_%d", resp.StatusCode)
}

// frames reads SSE frames (event name, data) from r.
func frames(r io.Reader, yield func(name, data string)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var name string
	var data strings.Builder
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if data.Len() > 0 {
				yield(name, data.String())
			}
			name = ""
			data.Reset()
		case strings.HasPrefix(line, "event:"):
			name = strings.TrimSpace(line[6:])
		case strings.HasPrefix(line, "data:"):
			data.WriteString(strings.TrimPrefix(line[5:], " "))
		}
	}
	return sc.Err()
}

func parallel(n, c int, f func(i int)) {
	sem := make(chan struct{}, c)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			f(i)
		}()
	}
	wg.Wait()
}

// aapTurn runs a turn of the session at base (aap2agui) with one user
// message, streamed as deltas, and returns "" when it ended with
// end_turn, or what went wrong.
func aapTurn(base, session, content string) string {
	resp, err := postJSON(base+"/sessions/"+session+"/turns", map[string]any{
		"stream": "delta", "messages": []any{map[string]any{"role": "user", "content": content}},
	})
	if err != nil {
		return "transport"
	}
	if resp.StatusCode != http.StatusOK {
		return failure(resp)
	}
	defer resp.Body.Close()
	stop := ""
	err = frames(resp.Body, func(name, data string) {
		if name == "turn_stop" {
			var ts struct{ StopReason string }
			_ = json.Unmarshal([]byte(data), &ts)
			stop = ts.StopReason
		}
	})
	switch {
	case err != nil:
		return "stream_read"
	case stop != "end_turn":
		return "stop_" + stop
	}
	return ""
}

// loadAAP runs n sessions × m turns through aap2agui; a session's turns
// follow each other (a client that waits for the end of its turn).
func loadAAP(base string, n, m, c int) *stats {
	st := newStats()
	parallel(n, c, func(i int) {
		resp, err := postJSON(base+"/sessions", map[string]any{"agent": map[string]any{"name": "demo"}})
		if err != nil {
			st.turn(0, "create_transport")
			return
		}
		if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
			st.turn(0, "create_"+failure(resp))
			return
		}
		var created struct{ SessionID string }
		_ = json.NewDecoder(resp.Body).Decode(&created)
		resp.Body.Close()
		ok := 0
		for j := range m {
			t0 := time.Now()
			code := aapTurn(base, created.SessionID, fmt.Sprintf("hello %d-%d", i, j))
			if code == "" {
				ok++
			}
			st.turn(time.Since(t0), code)
		}
		// Every turn that ended well must have its user message stored.
		hr, err := client.Get(base + "/sessions/" + created.SessionID + "/history?type=full")
		if err != nil || hr.StatusCode != http.StatusOK {
			st.mu.Lock()
			st.lost += ok
			st.mu.Unlock()
			return
		}
		var h struct {
			History struct{ Full []struct{ Role string } }
		}
		_ = json.NewDecoder(hr.Body).Decode(&h)
		hr.Body.Close()
		users := 0
		for _, msg := range h.History.Full {
			if msg.Role == "user" {
				users++
			}
		}
		st.mu.Lock()
		st.lost += max(0, ok-users)
		st.mu.Unlock()
	})
	return st
}

type aguiMsg struct {
	ID      string `json:"id"`
	Role    string `json:"role"`
	Content string `json:"content"`
}

// runID keeps this run's thread ids apart from an earlier run's in a
// store that outlives it (-store postgres://…).
var runID = strconv.FormatInt(time.Now().UnixNano(), 36)

// aguiRun runs the demo agent at base (agui2aap) on the thread with msgs,
// as @ag-ui/client's HttpAgent does, and returns the assistant's messages
// and "" when the run finished, or what went wrong.
func aguiRun(base, thread, runID string, msgs []aguiMsg) ([]aguiMsg, string) {
	resp, err := postJSON(base+"/agents/demo", map[string]any{
		"threadId": thread, "runId": runID, "messages": msgs,
		"tools": []any{}, "context": []any{}, "state": map[string]any{}, "forwardedProps": map[string]any{},
	})
	if err != nil {
		return nil, "transport"
	}
	if resp.StatusCode != http.StatusOK {
		return nil, failure(resp)
	}
	defer resp.Body.Close()
	var texts []aguiMsg
	end, code := "", ""
	err = frames(resp.Body, func(_, data string) {
		var ev struct{ Type, MessageID, Delta, Code string }
		if json.Unmarshal([]byte(data), &ev) != nil {
			return
		}
		switch ev.Type {
		case "TEXT_MESSAGE_START":
			texts = append(texts, aguiMsg{ID: ev.MessageID, Role: "assistant"})
		case "TEXT_MESSAGE_CONTENT":
			if len(texts) > 0 {
				texts[len(texts)-1].Content += ev.Delta
			}
		case "RUN_FINISHED", "RUN_ERROR":
			end, code = ev.Type, ev.Code
		}
	})
	switch {
	case err != nil:
		return nil, "stream_read"
	case end == "RUN_ERROR":
		return nil, "RUN_ERROR_" + code
	case end != "RUN_FINISHED":
		return nil, "no_terminal_event"
	}
	return texts, ""
}

// loadAGUI runs n threads × m runs through agui2aap, each run resending
// the thread's whole history as @ag-ui/client's HttpAgent does.
func loadAGUI(base string, n, m, c int) *stats {
	st := newStats()
	parallel(n, c, func(i int) {
		thread := fmt.Sprintf("load-%s-%d", runID, i)
		var history []aguiMsg
		for j := range m {
			user := aguiMsg{ID: fmt.Sprintf("u-%d-%d", i, j), Role: "user", Content: fmt.Sprintf("hello %d-%d", i, j)}
			msgs := append(append([]aguiMsg(nil), history...), user)
			t0 := time.Now()
			texts, code := aguiRun(base, thread, fmt.Sprintf("r-%d-%d", i, j), msgs)
			if code == "" {
				history = append(append(history, user), texts...)
				st.mu.Lock()
				st.threads[thread] = append(st.threads[thread], user.ID)
				st.mu.Unlock()
			}
			st.turn(time.Since(t0), code)
		}
	})
	return st
}

// countLostThreads compares, thread by thread, the user messages of
// successful runs with the ids the thread store says the AAP session saw.
func (s *stats) countLostThreads(spec string) {
	st, err := store.Open(spec)
	if err != nil {
		s.lost = -1
		return
	}
	defer st.Close()
	ts := st
	for thread, sent := range s.threads {
		th, err := ts.GetThread(context.Background(), "", thread)
		if err != nil {
			s.lost += len(sent)
			continue
		}
		seen := map[string]bool{}
		for _, id := range th.Delivered {
			seen[id] = true
		}
		for _, id := range sent {
			if !seen[id] {
				s.lost++
			}
		}
	}
}

// orDefault is d, or def when d is zero.
func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}
