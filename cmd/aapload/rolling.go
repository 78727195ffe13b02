package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// rollingLoad is the operator's test of a rolling restart (-rolling): two
// aap2agui replicas (each with its built-in AG-UI demo agent) and two
// agui2aap replicas (whose AAP server is the aap2agui replicas, through a
// Service) on one PostgreSQL store, under a load that a Service spreads
// over the ready replicas of each program. Each replica in turn gets
// SIGTERM, must exit 0, and is started again, as a rolling update does.
// No request may fail, and every acknowledged turn must be in history
// exactly once.
type rollingLoad struct {
	bin, spec string
	c, m      int           // concurrent sessions and threads (each), turns per session or thread
	delay     time.Duration // the replicas' --shutdown-delay
	settle    time.Duration // load between two restarts, and before the first and after the last
}

// replica is one process of a program, restarted in place: the Service
// sends requests to it while the last probe of its /readyz said ready.
type replica struct {
	name, path string
	spec       string // --store
	args       []string
	base       atomic.Pointer[string] // its URL, which changes when it restarts
	ready      atomic.Bool
	inflight   atomic.Int64 // requests the load (or the Service proxy) has open on it
	proc       *proc        // the running process; the restarter's alone
}

// service spreads requests over the ready replicas of one program, as a
// Kubernetes Service does with the endpoints its readiness probes keep.
type service struct {
	replicas []*replica
	next     atomic.Uint64
}

// probeEvery is the readiness probes' period: well under --shutdown-delay.
const probeEvery = 100 * time.Millisecond

// pick is the next ready replica, round robin, and its URL; it waits while
// none is ready (nil once ctx ends).
func (s *service) pick(ctx context.Context) (*replica, string) {
	for {
		start := s.next.Add(1)
		for i := range s.replicas {
			r := s.replicas[(int(start)+i)%len(s.replicas)]
			if b := r.base.Load(); b != nil && r.ready.Load() {
				return r, *b
			}
		}
		select {
		case <-ctx.Done():
			return nil, ""
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// watch probes each replica's GET /readyz every probeEvery, each replica
// on its own (one slow to answer delays no other's), on a new connection
// each time as a kubelet does, until ctx ends.
func (s *service) watch(ctx context.Context) {
	probe := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: time.Second}
	for _, r := range s.replicas {
		go func() {
			for {
				r.ready.Store(r.probe(probe))
				select {
				case <-ctx.Done():
					return
				case <-time.After(probeEvery):
				}
			}
		}()
	}
}

// probe reports whether the replica's GET /readyz answers 200.
func (r *replica) probe(c *http.Client) bool {
	b := r.base.Load()
	if b == nil {
		return false
	}
	resp, err := c.Get(*b + "/readyz")
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// proxy serves the Service on a loopback address of its own, as an HTTP
// proxy to the replica pick chooses per request (agui2aap's --upstream).
// Requests it could not pass on are counted in failed.
func (s *service) proxy(ctx context.Context, failed *atomic.Int64) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	transport := &http.Transport{MaxIdleConnsPerHost: 256}
	h := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r, base := s.pick(ctx)
		if r == nil {
			http.Error(w, "no replica ready", http.StatusServiceUnavailable)
			return
		}
		r.inflight.Add(1)
		defer r.inflight.Add(-1)
		// The request body is still being sent on when the replica's
		// response starts: without full duplex, net/http's server would
		// close it once the response headers are written, the proxy's
		// transport would fail its last read of it and cut the stream
		// (seen here as upstream_cut, one turn in a few thousand).
		_ = http.NewResponseController(w).EnableFullDuplex()
		target, _ := url.Parse(base)
		rp := &httputil.ReverseProxy{
			Rewrite:       func(pr *httputil.ProxyRequest) { pr.SetURL(target) },
			Transport:     transport,
			FlushInterval: -1,
			ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
				failed.Add(1)
				http.Error(w, err.Error(), http.StatusBadGateway)
			},
		}
		rp.ServeHTTP(w, req)
	})
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() { _ = srv.Close() }, nil
}

// start starts the replica's process and makes it the one the Service
// sends to; it waits until a probe has found it ready.
func (r *replica) start(ctx context.Context) error {
	p, err := start(r.path, r.spec, r.args...)
	if err != nil {
		return fmt.Errorf("%s: %w", r.name, err)
	}
	r.proc = p
	r.base.Store(&p.base)
	for !r.ready.Load() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil
}

// restart is one step of the rolling update: SIGTERM, the exit (which
// must be status 0, within the drain and the grace period), and the
// start of a new process. It returns the requests the replica had open
// when it was told to stop.
func (r *replica) restart(ctx context.Context, wait time.Duration) (int64, error) {
	open := r.inflight.Load()
	if err := r.proc.terminate(wait); err != nil {
		return open, fmt.Errorf("%s: %w", r.name, err)
	}
	return open, r.start(ctx)
}

// terminate sends SIGTERM and waits up to wait for the process to exit;
// an exit status other than 0 is an error.
func (p *proc) terminate(wait time.Duration) error {
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	select {
	case <-p.exited:
	case <-time.After(wait):
		_ = p.cmd.Process.Kill()
		<-p.exited
		return fmt.Errorf("still running %s after SIGTERM", wait)
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		return fmt.Errorf("exited with status %d after SIGTERM", code)
	}
	return nil
}

// replicas are n replicas of the program, named program-1 …, each with
// the store and args.
func (l rollingLoad) replicas(program string, n int, args ...string) []*replica {
	out := make([]*replica, n)
	for i := range out {
		out[i] = &replica{
			name: program + "-" + strconv.Itoa(i+1), path: filepath.Join(l.bin, program), spec: l.spec,
			args: append([]string{"--shutdown-delay", l.delay.String()}, args...),
		}
	}
	return out
}

// run starts the four replicas, runs the load, restarts each replica in
// turn, stops the load, checks the histories and prints the figures.
func (l rollingLoad) run(out io.Writer) error {
	if l.spec == "" {
		return errors.New("-rolling needs -store postgres://…: the replicas share it")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	aapSvc := &service{replicas: l.replicas("aap2agui", 2)}
	aapSvc.watch(ctx)
	var proxyFailed atomic.Int64
	upstream, stopProxy, err := aapSvc.proxy(ctx, &proxyFailed)
	if err != nil {
		return err
	}
	defer stopProxy()
	aguiSvc := &service{replicas: l.replicas("agui2aap", 2, "--upstream", upstream)}
	aguiSvc.watch(ctx)
	all := append(append([]*replica(nil), aapSvc.replicas...), aguiSvc.replicas...)
	defer func() {
		for _, r := range all {
			if r.proc != nil {
				r.proc.stop()
			}
		}
	}()
	for _, r := range all {
		if err := r.start(ctx); err != nil {
			return err
		}
	}
	rs := newRollingStats(l.spec)
	defer rs.close()
	cl := &rollingClients{aap: aapSvc, agui: aguiSvc, rs: rs, m: l.m}
	var wg sync.WaitGroup
	for i := range l.c {
		wg.Go(func() { cl.aapWorker(ctx, i) })
		wg.Go(func() { cl.aguiWorker(ctx, i) })
	}
	steps, restartErr := l.roll(ctx, all)
	cl.stop.Store(true)
	wg.Wait()
	rs.report(out, steps, proxyFailed.Load())
	return errors.Join(restartErr, rs.verdict(proxyFailed.Load()))
}

// roll restarts each replica in turn, with settle's load before, between
// and after; it returns one line per restart.
func (l rollingLoad) roll(ctx context.Context, all []*replica) ([]string, error) {
	var steps []string
	time.Sleep(l.settle)
	for _, r := range all {
		t0 := time.Now()
		open, err := r.restart(ctx, l.delay+time.Minute)
		if err != nil {
			return steps, err
		}
		steps = append(steps, fmt.Sprintf("%s: SIGTERM at %s with %d requests open, exit 0, ready again after %s",
			r.name, t0.UTC().Format("15:04:05.000"), open, time.Since(t0).Round(10*time.Millisecond)))
		time.Sleep(l.settle)
	}
	return steps, nil
}
