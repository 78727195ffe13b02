package cli

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/aapagui/aapagui/aap"
)

// ServeOptions say what Serve serves and how it stops.
type ServeOptions struct {
	// Addr is the address to listen on.
	Addr string
	// Handler serves the requests. Once the server drains, Serve answers
	// GET /readyz itself (503) and closes each connection after its
	// response; every other request still reaches Handler.
	Handler http.Handler
	// Delay is how long the server keeps accepting and serving requests
	// after SIGTERM (or the end of Serve's context) while GET /readyz
	// answers 503, so that load balancers and Kubernetes take the replica
	// out of rotation before its listener closes; zero closes it at once.
	// SIGINT (Ctrl-C at a terminal, where no load balancer waits) skips
	// the delay, and a second signal ends it early.
	Delay time.Duration
	// Grace bounds the time the running requests (turns) get to finish
	// once the listener is closed; past it their connections are closed.
	Grace time.Duration
	// Ready, if not nil, receives the bound address.
	Ready func(net.Addr)
}

// Serve serves o.Handler on o.Addr until SIGINT or SIGTERM (or until ctx
// ends, which counts as SIGTERM), then shuts down: the server drains for
// o.Delay (not ready, still serving), then new connections are refused and
// running requests get up to o.Grace to finish. It returns nil once they
// have, or once the grace period is over.
func Serve(ctx context.Context, log zerolog.Logger, o ServeOptions) error {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return err
	}
	d := &drainer{next: o.Handler}
	srv := &http.Server{
		Handler:           d,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       120 * time.Second,
		// No WriteTimeout: turns stream for as long as the agent takes.
	}
	if o.Ready != nil {
		o.Ready(ln.Addr())
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	var sig os.Signal
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	case sig = <-sigs:
	}
	d.draining.Store(true)
	if o.Delay > 0 && sig != os.Interrupt {
		log.Info().Str("delay", o.Delay.String()).Msg("shutting down: not ready, serving on until the delay is over")
		if err := waitDelay(o.Delay, sigs, errc); err != nil {
			return err
		}
	}
	return shutdown(log, srv, o.Grace, errc)
}

// waitDelay waits for the shutdown delay to pass, or for a second
// signal; it returns the server's error if it stops serving meanwhile.
func waitDelay(delay time.Duration, sigs <-chan os.Signal, errc <-chan error) error {
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-sigs:
	case err := <-errc:
		return err
	}
	return nil
}

// shutdown closes the listener and waits up to grace for the running
// requests, then closes the connections that are left.
func shutdown(log zerolog.Logger, srv *http.Server, grace time.Duration, errc <-chan error) error {
	log.Info().Str("grace", grace.String()).Msg("shutting down: waiting for running requests")
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		log.Warn().Err(err).Msg("grace period over: closing the remaining connections")
		_ = srv.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// drainer is the server's handler: the program's, until the server
// drains. Then GET /readyz answers 503, so that a load balancer stops
// sending requests, and every response closes its connection, so that a
// client's next request opens a new one, which the load balancer sends to
// another replica (a kept-alive connection would stay with this one). The
// connections that are idle are left open until the listener closes: one
// closed under a client that has just sent a request on it fails that
// request.
type drainer struct {
	next     http.Handler
	draining atomic.Bool
}

func (d *drainer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !d.draining.Load() {
		d.next.ServeHTTP(w, r)
		return
	}
	w.Header().Set("Connection", "close")
	if r.URL.Path == "/readyz" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		aap.WriteError(w, http.StatusServiceUnavailable, "shutting_down", "the server is shutting down: its running requests finish, new ones go to another replica")
		return
	}
	d.next.ServeHTTP(w, r)
}
