package proctest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const envMain = "AAPAGUI_PROCTEST_MAIN"

// Main is called from TestMain: in a process started by Start it runs the
// program (run with the process's arguments) and exits; otherwise it runs
// the tests.
func Main(m *testing.M, run func(args []string) error) {
	if os.Getenv(envMain) == "1" {
		if err := run(os.Args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Proc is a running program.
type Proc struct {
	// Addr is the address it serves on (host:port).
	Addr string
	cmd  *exec.Cmd
	mu   sync.Mutex
	log  strings.Builder
	done chan struct{}
}

// Start starts the program with args (which should include
// "--listen 127.0.0.1:0") and waits for its log line carrying "listen".
// The process is killed when the test ends; its log is shown if the test
// failed.
func Start(t testing.TB, env []string, args ...string) *Proc {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), envMain+"=1"), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &Proc{cmd: cmd, done: make(chan struct{})}
	addr := make(chan string, 1)
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.log.WriteString(line + "\n")
			p.mu.Unlock()
			var l struct {
				Listen string `json:"listen"`
			}
			if json.Unmarshal([]byte(line), &l) == nil && l.Listen != "" {
				select {
				case addr <- l.Listen:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
		_ = cmd.Wait()
	}()
	t.Cleanup(func() {
		p.Kill()
		if t.Failed() {
			t.Logf("log of %s:\n%s", strings.Join(args, " "), p.Log())
		}
	})
	select {
	case p.Addr = <-addr:
	case <-p.done:
		t.Fatalf("the program exited before serving:\n%s", p.Log())
	case <-time.After(30 * time.Second):
		t.Fatalf("the program did not start serving in 30 s:\n%s", p.Log())
	}
	return p
}

// URL is the program's base URL.
func (p *Proc) URL() string { return "http://" + p.Addr }

// Kill sends SIGKILL (no shutdown, no deferred code runs) and waits for the
// process to be gone.
func (p *Proc) Kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// Signal sends sig to the program (SIGHUP: reload).
func (p *Proc) Signal(t testing.TB, sig os.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}

// Stop sends SIGTERM (a graceful shutdown) and waits for the process to
// be gone, at most 30 s.
func (p *Proc) Stop(t testing.TB) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("the program did not stop in 30 s after SIGTERM:\n%s", p.Log())
	}
}

// Log is what the program has logged so far.
func (p *Proc) Log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// Stdout runs the program to its end with args and returns what it printed
// on standard output; the test fails if it exits with an error.
func Stdout(t testing.TB, args ...string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), envMain+"=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

// LogField is the value of key in the first line of the program's JSON
// log that has it ("" if none has).
func (p *Proc) LogField(key string) string {
	for _, line := range strings.Split(p.Log(), "\n") {
		var l map[string]any
		if json.Unmarshal([]byte(line), &l) == nil {
			if v, ok := l[key].(string); ok {
				return v
			}
		}
	}
	return ""
}

// Contend posts a JSON body to every URL at once (each request waits on one
// start signal) and returns the statuses and responses, in the order of
// urls, for the caller to read and close. A 409 must carry a positive
// Retry-After.
func Contend(t *testing.T, body string, urls ...string) ([]int, []*http.Response) {
	t.Helper()
	var wg sync.WaitGroup
	resps := make([]*http.Response, len(urls))
	errs := make([]error, len(urls))
	start := make(chan struct{})
	for i, u := range urls {
		wg.Go(func() {
			<-start
			req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(body))
			if err != nil {
				errs[i] = err
				return
			}
			req.Header.Set("Content-Type", "application/json")
			resps[i], errs[i] = http.DefaultClient.Do(req)
		})
	}
	close(start)
	wg.Wait()
	codes := make([]int, len(urls))
	for i := range urls {
		if errs[i] != nil {
			t.Fatalf("POST %s: %v", urls[i], errs[i])
		}
		codes[i] = resps[i].StatusCode
		if codes[i] == http.StatusConflict {
			if secs, err := strconv.Atoi(resps[i].Header.Get("Retry-After")); err != nil || secs <= 0 {
				t.Errorf("POST %s: 409 with Retry-After %q, want a positive number of seconds", urls[i], resps[i].Header.Get("Retry-After"))
			}
		}
	}
	return codes, resps
}

// OneWins sends body to every URL at once (Contend) and checks that exactly
// one request runs (200) and the others get 409. The winner's answer must
// outlast the losers' requests (a stream larger than the sockets buffer);
// 64 KiB of it is read, then its client leaves. While every request gets
// 409 (the lock still held by a previous round's leaving request) the
// round is sent again, as a client honouring Retry-After would, for up to
// 10 s.
func OneWins(t *testing.T, what, body string, urls ...string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		codes, resps := Contend(t, body, urls...)
		wins, held := 0, 0
		for _, c := range codes {
			switch c {
			case http.StatusOK:
				wins++
			case http.StatusConflict:
				held++
			}
		}
		if wins == 1 && held == len(urls)-1 {
			for _, r := range resps {
				if r.StatusCode == http.StatusOK {
					if _, err := io.ReadFull(r.Body, make([]byte, 64<<10)); err != nil {
						t.Errorf("%s: reading the winner's answer: %v", what, err)
					}
				}
			}
		}
		for _, r := range resps {
			r.Body.Close()
		}
		switch {
		case wins == 1 && held == len(urls)-1:
			return
		case held == len(urls) && time.Now().Before(deadline):
			time.Sleep(20 * time.Millisecond)
		default:
			t.Fatalf("%s: statuses %v, want one 200 and the rest 409", what, codes)
		}
	}
}
