package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// A bridge in a process of its own: for the idle-memory runs, where the
// harness's own clients and agents would otherwise be counted with it, and
// where one process would hold four descriptors per stream (two here).

// memStatsPath answers, in a bridge process, with its live memory after a
// collection.
const memStatsPath = "/_bench/memstats"

// profilePath+"heap" and +"goroutine" serve a bridge process's profiles.
const profilePath = "/_bench/pprof/"

// gcPath (POST) makes a bridge process collect its garbage, so that what
// comes next does not pay for what came before.
const gcPath = "/_bench/gc"

// processMem is a process's live memory (see memNow) and goroutines.
type processMem struct {
	InUse      int64 `json:"inUse"`
	Stacks     int64 `json:"stacks"`
	Goroutines int   `json:"goroutines"`
}

// ServeBridge runs the bridge named kind ("aap2agui", "agui2aap" or
// "relay") in front of upstream on a loopback port, its sessions or
// threads in the store storeSpec names (see store.Open; "" for memory), as the harness does in
// its own process, and writes its base URL (the AAP base URL, or
// agui2aap's agent endpoint) as one line to out. It also serves its memory
// at /_bench/memstats and its profiles under /_bench/pprof/, and collects
// its garbage on POST /_bench/gc. It returns
// when ctx ends or stdin closes (the harness that started it is gone).
func ServeBridge(ctx context.Context, kind, upstream, storeSpec string, out io.Writer) error {
	raiseFileLimit()
	st, err := openStore(storeSpec)
	if err != nil {
		return err
	}
	defer st.Close()
	hc := upstreamClient()
	h, err := newBridge(kind, upstream, st, hc)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+memStatsPath, func(w http.ResponseWriter, _ *http.Request) {
		// Connections idle in the upstream pool belong to no stream: left
		// by streams that started together (a call on a connection that
		// was being put back dials another), they come and go with the
		// timing of the starts, and the pool bounds them (64).
		hc.CloseIdleConnections()
		runtime.GC()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(memNow())
	})
	mux.HandleFunc("POST "+gcPath, func(w http.ResponseWriter, _ *http.Request) {
		runtime.GC()
		w.WriteHeader(http.StatusNoContent)
	})
	for _, name := range []string{"heap", "goroutine"} {
		mux.Handle("GET "+profilePath+name, pprof.Handler(name))
	}
	mux.Handle("/", h)
	base, closeServer, err := serve(mux)
	if err != nil {
		return err
	}
	defer closeServer()
	if kind == bridgeAGUI2AAP {
		base += agui2aapAgentPath
	}
	if _, err := fmt.Fprintln(out, base); err != nil {
		return err
	}
	stdin := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); close(stdin) }()
	select {
	case <-ctx.Done():
	case <-stdin:
	}
	return nil
}

// bridgeProcess is a bridge started with Options.BridgeProcess.
type bridgeProcess struct {
	cmd   *exec.Cmd
	stdin io.Closer
	url   string // what a client calls
	root  string // the server's root, for memstats
}

// ImageGODEBUG is the GODEBUG the container image runs the bridges with
// (deploy/container/Containerfile): the processes measured here, the
// relay's included, run with it, as deployed.
const ImageGODEBUG = "adaptivestackstart=0"

// processEnv is env with ImageGODEBUG added to its GODEBUG (a setting of
// the caller's own, later in the list, wins).
func processEnv(env []string) []string {
	out := make([]string, 0, len(env)+1)
	godebug := ImageGODEBUG
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GODEBUG="); ok {
			if v != "" {
				godebug += "," + v
			}
			continue
		}
		out = append(out, kv)
	}
	return append(out, "GODEBUG="+godebug)
}

func startBridgeProcess(argv []string, kind, upstream string) (*bridgeProcess, error) {
	cmd := exec.Command(argv[0], append(argv[1:], "-serve-bridge", kind, "-upstream", upstream)...)
	cmd.Stderr = os.Stderr
	cmd.Env = processEnv(os.Environ())
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &bridgeProcess{cmd: cmd, stdin: stdin}
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case u, ok := <-line:
		if !ok || !strings.HasPrefix(u, "http://") {
			p.stop()
			return nil, fmt.Errorf("%s bridge process: no URL on its first line (%q)", kind, u)
		}
		p.url = u
		p.root = strings.TrimSuffix(u, agui2aapAgentPath)
	case <-time.After(30 * time.Second):
		p.stop()
		return nil, fmt.Errorf("%s bridge process: not serving within 30 s", kind)
	}
	return p, nil
}

func (p *bridgeProcess) mem(ctx context.Context, hc *http.Client) (processMem, error) {
	var m processMem
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.root+memStatsPath, nil)
	if err != nil {
		return m, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return m, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return m, errors.New("memstats: " + resp.Status)
	}
	return m, json.NewDecoder(resp.Body).Decode(&m)
}

// writeProfiles saves the process's heap and goroutine profiles as
// prefix.heap and prefix.goroutine.
func (p *bridgeProcess) writeProfiles(ctx context.Context, hc *http.Client, prefix string) {
	for _, name := range []string{"heap", "goroutine"} {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.root+profilePath+name, nil)
		if err != nil {
			continue
		}
		resp, err := hc.Do(req)
		if err != nil {
			continue
		}
		if f, err := os.Create(prefix + "." + name); err == nil {
			_, _ = io.Copy(f, resp.Body)
			f.Close()
		}
		resp.Body.Close()
	}
}

func (p *bridgeProcess) stop() {
	_ = p.stdin.Close()
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
}

// setUp is what a run set up, to be undone last first (undo), with the
// scratch folder its stores go in.
type setUp struct {
	dir  string
	undo []func()
}

// newSetUp makes a scratch folder named after prefix.
func newSetUp(prefix string) (*setUp, error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return &setUp{}, err
	}
	return &setUp{dir: dir, undo: []func(){func() { os.RemoveAll(dir) }}}, nil
}

// close undoes the set-up.
func (s *setUp) close() {
	for i := len(s.undo) - 1; i >= 0; i-- {
		s.undo[i]()
	}
}

// server starts h on a local port, for as long as the set-up.
func (s *setUp) server(h http.Handler) *httptest.Server {
	srv := httptest.NewServer(h)
	s.undo = append(s.undo, srv.Close)
	return srv
}

// process starts argv as a process serving kind in front of upstream
// (startBridgeProcess), for as long as the set-up.
func (s *setUp) process(argv []string, kind, upstream string) (*bridgeProcess, error) {
	p, err := startBridgeProcess(argv, kind, upstream)
	if err == nil {
		s.undo = append(s.undo, p.stop)
	}
	return p, err
}

// bridge is the command of a bridge process of command with the given
// store.
func bridge(command []string, store string) []string {
	return append(append([]string{}, command...), "-bridge-store", store)
}

// request sends body (nil: none) to url and copies the response's body to
// w; a response that is not 2xx is an error naming it.
func request(ctx context.Context, hc *http.Client, method, url string, body []byte, w io.Writer) error {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("%s %s: HTTP %d: %s", method, url, resp.StatusCode, msg)
	}
	_, err = io.Copy(w, resp.Body)
	return err
}
