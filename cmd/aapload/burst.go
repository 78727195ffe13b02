package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/store"
)

// burstLoad is a measure of aap2agui on a store in use when many turns
// start at once: the store holds presessions sessions, big of them with a
// history of bigMiB MiB each; the workload (n sessions × m turns at
// concurrency c) runs alone, then again while burst turns start at once on
// sessions of their own, whose clients never read (their agent sends a
// small delta every 200 ms).
type burstLoad struct {
	bin, dir, spec     string // the binaries' folder, a scratch folder, the store ("": SQLite in dir)
	n, m, c            int
	burst, presessions int
	big, bigMiB        int
	settle             time.Duration // how long after the burst's answers the turns are counted
	extraArgs          []string      // more flags for aap2agui
}

// burstResult is what became of the burst's turn starts.
type burstResult struct {
	started, refused int            // 200, and 503 with Retry-After before the stream
	failed           map[string]int // any other answer, by code
	firstAnswer      time.Duration  // the slowest answer to a turn start
}

// run prints the workload alone and beside the burst, what became of the
// burst's turns, and what the bridge logged about its turn locks.
func (l burstLoad) run(out io.Writer) error {
	spec := l.spec
	if spec == "" {
		spec = "sqlite:" + filepath.Join(l.dir, "aap2agui-burst.db")
	}
	t0 := time.Now()
	if err := prefill(spec, l.presessions); err != nil {
		return fmt.Errorf("filling the store: %w", err)
	}
	if err := prefillBig(spec, l.big, l.bigMiB); err != nil {
		return fmt.Errorf("filling the store: %w", err)
	}
	fmt.Fprintf(out, "store prepared in %s: %d sessions, %d of them with %d MiB of history\n",
		time.Since(t0).Round(time.Second), l.presessions+l.big, l.big, l.bigMiB)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	running := &atomic.Int64{}
	agent := &http.Server{Handler: slowAgent{running: running}}
	go func() { _ = agent.Serve(ln) }()
	defer agent.Close()
	cfg := filepath.Join(l.dir, "agent.json")
	if err := os.WriteFile(cfg, []byte(`{"name":"demo","capabilities":{"history":{"compacted":{},"full":{}},"stream":{"delta":{},"message":{},"none":{}},"application":{"tools":{}}}}`), 0o600); err != nil {
		return err
	}
	p, err := start(filepath.Join(l.bin, "aap2agui"), spec, append([]string{"--upstream", "http://" + ln.Addr().String(), "--agent-config", cfg}, l.extraArgs...)...)
	if err != nil {
		return fmt.Errorf("aap2agui: %w", err)
	}
	defer p.stop()

	name := fmt.Sprintf("aap2agui, %d stored sessions (%d of %d MiB)", l.presessions+l.big, l.big, l.bigMiB)
	alone := loadAAP(p.base, l.n, l.m, l.c)
	alone.print(out, name, l.n, l.m, l.c, 0)

	ids, err := createSessions(p.base, l.burst)
	if err != nil {
		return fmt.Errorf("creating the burst's sessions: %w", err)
	}
	before := p.logged()
	var res burstResult
	var conns []net.Conn
	var withBurst *stats
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		time.Sleep(time.Second) // inside the burst
		withBurst = loadAAP(p.base, l.n, l.m, l.c)
	}()
	res, conns = startBurst(p.base, ids)
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	wg.Wait()
	time.Sleep(l.settle)
	after := p.logged()
	withBurst.print(out, fmt.Sprintf("%s, during a burst of %d turn starts", name, l.burst), l.n, l.m, l.c, 0)
	res.print(out, l.burst, running.Load(), l.settle)
	fmt.Fprintf(out, "with ÷ without the burst: p50 %.2f×, p99 %.2f×\n",
		ratio(withBurst.pct(0.50), alone.pct(0.50)), ratio(withBurst.pct(0.99), alone.pct(0.99)))
	fmt.Fprintf(out, "logged from the burst on: %d lock-renewal failures, %d locks lost, %d warnings and errors in all\n",
		after.renew-before.renew, after.lost-before.lost, after.all-before.all)
	fmt.Fprintf(out, "counts: running %d, refused %d, 5xx %d, renewals missed %d (late %d), leases lost %d; load average %s\n",
		running.Load(), res.refused, res.serverErrors(), after.renew-before.renew, after.late-before.late, after.lost-before.lost, loadAverage())
	return nil
}

// serverErrors is how many of the burst's starts were answered with a
// 5xx other than a refusal (503 with Retry-After).
func (r burstResult) serverErrors() int {
	n := 0
	for code, k := range r.failed {
		if strings.HasPrefix(code, "5") {
			n += k
		}
	}
	return n
}

// loadAverage is the machine's load averages (1, 5, 15 minutes), from
// /proc/loadavg where there is one.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}

func (r burstResult) print(w io.Writer, burst int, running int64, settle time.Duration) {
	failed := "none"
	if len(r.failed) > 0 {
		var parts []string
		for code, k := range r.failed {
			parts = append(parts, fmt.Sprintf("%s=%d", code, k))
		}
		sort.Strings(parts)
		failed = strings.Join(parts, " ")
	}
	fmt.Fprintf(w, "burst of %d turn starts: started %d, refused 503 %d, failed %s; slowest answer %s; running upstream %s later: %d\n",
		burst, r.started, r.refused, failed, r.firstAnswer.Round(time.Millisecond), settle, running)
}

// prefillBig creates k sessions whose history holds mib MiB (entries of
// 64 KiB), as long conversations leave in a store.
func prefillBig(spec string, k, mib int) error {
	if k <= 0 || mib <= 0 {
		return nil
	}
	st, err := store.Open(spec)
	if err != nil {
		return err
	}
	defer st.Close()
	text := strings.Repeat("a long answer ", 64<<10/14)
	for i := range k {
		sess := &store.Session{ID: fmt.Sprintf("sess_big%s%04d", runID, i), Agent: aap.AgentConfig{Name: "demo"}, CreatedAt: time.Now()}
		var seed []store.Entry
		for j := range mib * 16 {
			seed = append(seed, store.Entry{Message: &aap.AssistantMessage{Content: aap.TextContent(text)}, AGUIID: fmt.Sprintf("big-%d-%d", i, j)})
		}
		if err := st.CreateSession(context.Background(), sess, seed, 0); err != nil {
			return err
		}
	}
	return nil
}

// createSessions creates n sessions of the demo agent.
func createSessions(base string, n int) ([]string, error) {
	ids := make([]string, n)
	var failed atomic.Value
	parallel(n, 32, func(i int) {
		resp, err := postJSON(base+"/sessions", map[string]any{"agent": map[string]any{"name": "demo"}})
		if err == nil && resp.StatusCode != http.StatusCreated {
			err = errors.New("create: " + failure(resp))
		}
		if err == nil {
			var created struct{ SessionID string }
			err = decodeJSON(resp, &created)
			ids[i] = created.SessionID
		}
		if err != nil {
			failed.Store(err)
		}
	})
	if err, ok := failed.Load().(error); ok {
		return nil, err
	}
	return ids, nil
}

// startBurst starts a streaming turn on each session at once, each over a
// raw connection with a small receive buffer, and reads each answer up to
// its headers (a refusal whole): the clients never read the stream.
func startBurst(base string, ids []string) (burstResult, []net.Conn) {
	res := burstResult{failed: map[string]int{}}
	conns := make([]net.Conn, len(ids))
	var mu sync.Mutex
	gate := make(chan struct{})
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, code, took := startOne(base, id, gate)
			mu.Lock()
			defer mu.Unlock()
			res.firstAnswer = max(res.firstAnswer, took)
			switch code {
			case "":
				res.started++
				conns[i] = conn
			case "503":
				res.refused++
			default:
				res.failed[code]++
			}
		}()
	}
	time.Sleep(100 * time.Millisecond) // every connection open, waiting at the gate
	close(gate)
	wg.Wait()
	return res, slices.DeleteFunc(conns, func(c net.Conn) bool { return c == nil })
}

// startOne starts a turn on session id once gate is closed; code is "" for
// a stream that started, "503" for a refusal with Retry-After, else the
// answer's status and error code.
func startOne(base, id string, gate <-chan struct{}) (net.Conn, string, time.Duration) {
	host := strings.TrimPrefix(base, "http://")
	conn, err := net.Dial("tcp", host)
	if err != nil {
		return nil, "dial", 0
	}
	_ = conn.(*net.TCPConn).SetReadBuffer(4 << 10)
	body := `{"stream":"delta","messages":[{"role":"user","content":"` + trickle + `"}]}`
	<-gate
	t0 := time.Now()
	if _, err := fmt.Fprintf(conn, "POST /sessions/%s/turns HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		id, host, len(body), body); err != nil {
		conn.Close()
		return nil, "write", time.Since(t0)
	}
	_ = conn.SetReadDeadline(time.Now().Add(2 * time.Minute))
	resp, err := http.ReadResponse(bufio.NewReaderSize(conn, 256), nil)
	took := time.Since(t0)
	if err != nil {
		conn.Close()
		return nil, "read", took
	}
	_ = conn.SetReadDeadline(time.Time{})
	switch {
	case resp.StatusCode == http.StatusOK:
		return conn, "", took // never read further
	case resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") != "":
		conn.Close()
		return nil, "503", took
	}
	code := fmt.Sprintf("%d_%s", resp.StatusCode, failure(resp))
	conn.Close()
	return nil, code, took
}
