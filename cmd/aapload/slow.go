package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/store"
)

// trickle is the user message that makes slowAgent answer slowly: a small
// delta every trickleEvery until the run is cancelled.
const (
	trickle      = "trickle"
	trickleEvery = 200 * time.Millisecond
)

// slowAgent is the demo AG-UI agent, except that a run whose last message
// is trickle streams one small delta every trickleEvery for as long as it
// is read: the upstream of a never-reading client's turn.
// running, when not nil, counts the trickling runs in progress.
type slowAgent struct {
	demo    demo.AGUIAgent
	running *atomic.Int64
}

func (a slowAgent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	if !strings.Contains(string(body), `"content":"`+trickle+`"`) {
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		a.demo.ServeHTTP(w, r)
		return
	}
	var in struct{ ThreadID, RunID string }
	_ = json.Unmarshal(body, &in)
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	fmt.Fprintf(w, "data: {\"type\":\"RUN_STARTED\",\"threadId\":%q,\"runId\":%q}\n\n"+
		"data: {\"type\":\"TEXT_MESSAGE_START\",\"messageId\":\"m\",\"role\":\"assistant\"}\n\n", in.ThreadID, in.RunID)
	fl.Flush()
	if a.running != nil {
		a.running.Add(1)
		defer a.running.Add(-1)
	}
	tick := time.NewTicker(trickleEvery)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
		}
		if _, err := fmt.Fprint(w, "data: {\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m\",\"delta\":\"a few words \"}\n\n"); err != nil {
			return
		}
		fl.Flush()
	}
}

// slowLoad is a measure of aap2agui with never-reading clients: the
// workload (n sessions × m turns at concurrency c) runs once alone, then
// again while slow streams are open whose clients never read (their agent
// sends a small delta every 200 ms), on a store that already holds
// presessions sessions.
type slowLoad struct {
	bin, dir, spec    string // the binaries' folder, a scratch folder, the store ("": SQLite in dir)
	n, m, c           int
	slow, presessions int
}

// run prints both runs, the ratios, the memory each slow stream took, and
// what the bridge logged about its store.
func (l slowLoad) run(out io.Writer) error {
	bin, dir, spec, n, m, c, slow, presessions := l.bin, l.dir, l.spec, l.n, l.m, l.c, l.slow, l.presessions
	if spec == "" {
		spec = "sqlite:" + filepath.Join(dir, "aap2agui-slow.db")
	}
	if err := prefill(spec, presessions); err != nil {
		return fmt.Errorf("filling the store: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	agent := &http.Server{Handler: slowAgent{}}
	go func() { _ = agent.Serve(ln) }()
	defer agent.Close()
	cfg := filepath.Join(dir, "agent.json")
	if err := os.WriteFile(cfg, []byte(`{"name":"demo","capabilities":{"history":{"compacted":{},"full":{}},"stream":{"delta":{},"message":{},"none":{}},"application":{"tools":{}}}}`), 0o600); err != nil {
		return err
	}
	p, err := start(filepath.Join(bin, "aap2agui"), spec, "--upstream", "http://"+ln.Addr().String(), "--agent-config", cfg)
	if err != nil {
		return fmt.Errorf("aap2agui: %w", err)
	}
	defer p.stop()

	alone := loadAAP(p.base, n, m, c)
	rssAlone := p.rss()
	alone.print(out, fmt.Sprintf("aap2agui, %d stored sessions", presessions), n, m, c, 0)

	streams, err := openSlow(p.base, slow)
	defer func() {
		for _, s := range streams {
			_ = s.Close()
		}
	}()
	if err != nil {
		return fmt.Errorf("opening never-reading streams: %w", err)
	}
	time.Sleep(5 * time.Second) // their turns under way, their checkpoints due
	before := p.logged()
	withSlow := loadAAP(p.base, n, m, c)
	rssSlow := p.rss()
	after := p.logged()
	withSlow.print(out, fmt.Sprintf("aap2agui, %d stored sessions, %d never-reading streams", presessions, slow), n, m, c, 0)
	fmt.Fprintf(out, "with ÷ without the never-reading streams: p50 %.2f×, p99 %.2f×; RSS %.1f → %.1f MiB (%.1f KiB per stream)\n",
		ratio(withSlow.pct(0.50), alone.pct(0.50)), ratio(withSlow.pct(0.99), alone.pct(0.99)),
		float64(rssAlone)/1024, float64(rssSlow)/1024, float64(rssSlow-rssAlone)/float64(max(1, len(streams))))
	fmt.Fprintf(out, "logged during the run with them: %d lock-renewal failures, %d failed checkpoints, %d warnings and errors in all\n",
		after.renew-before.renew, after.checkpoint-before.checkpoint, after.all-before.all)
	return nil
}

// prefill creates k sessions of the demo agent in spec's store, each with a
// short history, as a store in use for a while holds.
func prefill(spec string, k int) error {
	if k <= 0 {
		return nil
	}
	st, err := store.Open(spec)
	if err != nil {
		return err
	}
	defer st.Close()
	var failed atomic.Value
	parallel(k, 64, func(i int) {
		sess := &store.Session{ID: fmt.Sprintf("sess_prefill%s%08d", runID, i), Agent: aap.AgentConfig{Name: "demo"}, CreatedAt: time.Now()}
		seed := []store.Entry{
			{Message: aap.UserText(fmt.Sprintf("an earlier question %d", i)), AGUIID: fmt.Sprintf("u-%d", i)},
			{Message: &aap.AssistantMessage{Content: aap.TextContent(strings.Repeat("an earlier answer ", 20))}, AGUIID: fmt.Sprintf("a-%d", i)},
		}
		if err := st.CreateSession(context.Background(), sess, seed, 0); err != nil {
			failed.Store(err)
		}
	})
	if err, ok := failed.Load().(error); ok {
		return err
	}
	return nil
}

// openSlow opens n streaming turns whose clients never read: each on a
// session of its own, over a raw connection with a small receive buffer,
// read up to the response's status line.
func openSlow(base string, n int) ([]net.Conn, error) {
	host := strings.TrimPrefix(base, "http://")
	conns := make([]net.Conn, n)
	var mu sync.Mutex
	var first error
	parallel(n, 32, func(i int) {
		err := func() error {
			resp, err := postJSON(base+"/sessions", map[string]any{"agent": map[string]any{"name": "demo"}})
			if err != nil {
				return err
			}
			if resp.StatusCode != http.StatusCreated {
				return errors.New("create: " + failure(resp))
			}
			var created struct{ SessionID string }
			err = decodeJSON(resp, &created)
			if err != nil {
				return err
			}
			conn, err := net.Dial("tcp", host)
			if err != nil {
				return err
			}
			_ = conn.(*net.TCPConn).SetReadBuffer(4 << 10)
			body := `{"stream":"delta","messages":[{"role":"user","content":"` + trickle + `"}]}`
			if _, err := fmt.Fprintf(conn, "POST /sessions/%s/turns HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
				created.SessionID, host, len(body), body); err != nil {
				conn.Close()
				return err
			}
			status, err := bufio.NewReaderSize(conn, 64).ReadString('\n')
			if err != nil || !strings.Contains(status, " 200 ") {
				conn.Close()
				return fmt.Errorf("turn: %q %v", status, err)
			}
			conns[i] = conn
			return nil
		}()
		if err != nil {
			mu.Lock()
			if first == nil {
				first = err
			}
			mu.Unlock()
		}
	})
	return slices.DeleteFunc(conns, func(c net.Conn) bool { return c == nil }), first
}
