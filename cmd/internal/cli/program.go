package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/trace"

	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/internal/buildinfo"
	"github.com/aapagui/aapagui/internal/userid"
	"github.com/aapagui/aapagui/store"
)

// ErrUsage is the error of a command line that does not parse: the flag
// set has already printed what is wrong and the usage, so Main prints
// nothing more.
var ErrUsage = errors.New("usage")

// Main runs a program's run with the command line's arguments and exits
// with status 2 when it fails, printing the error after the program's
// name (a usage error is already printed).
func Main(name string, run func(args []string) error) {
	if err := run(os.Args[1:]); err != nil {
		if !errors.Is(err, ErrUsage) {
			fmt.Fprintln(os.Stderr, name+":", err)
		}
		os.Exit(2)
	}
}

// Program is the skeleton both bridges' programs share: its flag set (with
// --version), the flags every bridge has, the logger, and Run, which opens
// the store, sets up tracing, builds the bridge and serves it until
// SIGINT or SIGTERM. A program's main only turns its flags and environment
// into its bridge's Config.
type Program struct {
	// Name is the program's name: of its flag set, its version line and
	// its tracing service.
	Name string
	// Flags is the program's flag set; Bind* define the shared flags on it,
	// in the order the program calls them.
	Flags *Flags
	// Listen and Store are the --listen and --store flags, bound by the
	// program (their defaults and usages are its own).
	Listen, Store *string
	// Shared holds the shared flags bound by BindServing, BindStream,
	// BindShutdown and BindRate.
	Shared SharedFlags
	// Log is the program's logger, set up by Parse from --log-level.
	Log zerolog.Logger
	// Reload, when set (by Run's newBridge at the latest), is called on
	// each SIGHUP while Run serves; a failed reload is logged as an error
	// and should change nothing (OnHangup).
	Reload func() error

	version *bool
	cleanup []func()
}

// SharedFlags are the values of the flags every bridge has.
type SharedFlags struct {
	CopyFrom, LogLevel, MetricsListen, OnClientGone   *string
	MaxBody, RateBurst, MaxMessage                    *int64
	AllowedHosts                                      *[]string
	InsecureOpen                                      *bool
	HeaderTimeout, IdleTimeout, MaxTurn, StallTimeout *time.Duration
	StartTimeout, LeaseTTL, MaxSchedDelay, MaxLag     *time.Duration
	KeepAlive, BodyTimeout, Grace, ShutdownDelay      *time.Duration
	RateLimit                                         *float64
}

// NewProgram returns the skeleton of a program whose flags fall back to
// the environment variables ENVPREFIX_FLAG, with its --version flag.
func NewProgram(name, envPrefix string) *Program {
	p := &Program{Name: name, Flags: NewFlags(name, envPrefix)}
	p.version = p.Flags.FlagSet.Bool("version", false, "print the version (module version, VCS revision, Go version) and exit")
	return p
}

// BindServing defines --copy-from, --log-level, --max-body (with the
// program's default and usage), --allowed-host, --insecure-open and the
// upstream and turn timeouts, which default to the bridges' own
// defaults (aap2agui.DefaultServing).
func (p *Program) BindServing(maxBody int64, maxBodyUsage string) {
	f, s, d := p.Flags, &p.Shared, aap2agui.DefaultServing()
	s.CopyFrom = f.String("copy-from", "", "copy everything from this SQLite store (sqlite:<file>) into the PostgreSQL --store, then exit")
	s.LogLevel = f.String("log-level", "info", "debug, info, warn or error")
	s.MaxBody = f.Int64("max-body", maxBody, maxBodyUsage)
	s.AllowedHosts = f.List("allowed-host", ",", "Host name served besides loopback names and the listen address when there is no --api-key (* for any)")
	s.InsecureOpen = f.Bool("insecure-open", false, "serve without --api-key on a non-loopback --listen address")
	s.HeaderTimeout = f.Duration("upstream-header-timeout", d.HeaderTimeout, "how long to wait for the upstream's response headers to a turn")
	s.IdleTimeout = f.Duration("upstream-idle-timeout", d.IdleTimeout, "end a turn whose upstream stream sends no event for this long; comments do not count (negative: never)")
	s.MaxTurn = f.Duration("max-turn-duration", 0, "end a turn that runs longer than this, with an error and what came kept (0: no limit)")
	s.MaxMessage = f.Int64("max-message-size", int64(d.MaxMessageSize), "largest message an agent may stream, in bytes; past it the turn ends with an error, what fits kept (negative: no limit)")
	s.OnClientGone = f.String("on-client-gone", string(d.OnClientGone), "what becomes of a turn whose client left or stopped reading: cancel (the upstream is cancelled, what came is stored) or finish (it runs to its end, bounded by --max-turn-duration, 30m when that is 0, and is stored whole)")
	s.StartTimeout = f.Duration("start-timeout", d.StartTimeout, "how long a turn's start may wait for the store (its lock, and what it continues); past it the turn is refused with 503 store_busy before the upstream is called (negative: no bound)")
	s.LeaseTTL = f.Duration("lease-ttl", d.LeaseTTL, "how long a turn's lock lasts without a renewal (renewed every third of it): the longest a process that died keeps its conversations locked, and its rejoining clients waiting before they are told the turn was interrupted")
	s.MaxSchedDelay = f.Duration("max-scheduling-delay", d.MaxSchedulingDelay, "refuse a turn's start with 503 overloaded and Retry-After while the process's own timers fire later than this (its CPU taken), before anything of it runs (negative: no bound)")
	s.MaxLag = f.Duration("max-renewal-lag", 0, "refuse a turn's start with 503 overloaded and Retry-After while the process's lock renewals are confirmed later than this after they were due (0: --lease-ttl/6; negative: no bound)")
	s.StallTimeout = f.Duration("stall-timeout", d.StallTimeout, "end a turn whose client has not taken any of its stream for this long, as if it had left (negative: never)")
}

// BindStream defines --keep-alive and --body-timeout.
func (p *Program) BindStream() {
	f, s, d := p.Flags, &p.Shared, aap2agui.DefaultServing()
	s.KeepAlive = f.Duration("keep-alive", d.KeepAlive, "send a comment line on an idle event stream this often (negative: never)")
	s.BodyTimeout = f.Duration("body-timeout", d.BodyTimeout, "how long a client may take to send a request body")
}

// BindShutdown defines --metrics-listen, --shutdown-delay (see
// ServeOptions.Delay) and --shutdown-timeout, the time the program's
// running requests (what: "turns", "runs") get to finish.
func (p *Program) BindShutdown(what string) {
	f, s := p.Flags, &p.Shared
	s.MetricsListen = f.String("metrics-listen", "", "serve GET /metrics on this address of its own, without an API key (e.g. 127.0.0.1:9464); empty: on --listen, behind --api-key")
	s.ShutdownDelay = f.Duration("shutdown-delay", 5*time.Second, "on SIGTERM, how long to go on serving while GET /readyz answers 503, so that load balancers stop sending requests before the listener closes (0: close it at once)")
	s.Grace = f.Duration("shutdown-timeout", 30*time.Second, "how long running "+what+" may take to finish on SIGTERM, once the listener is closed")
}

// BindRate defines --rate-limit-per-key and --rate-burst-per-key, the
// requests one key (who: "API key", "key") may make.
func (p *Program) BindRate(who string) {
	f, s := p.Flags, &p.Shared
	s.RateLimit = f.Float64("rate-limit-per-key", 0, "requests a second one "+who+" may make, per process (0: no limit); over it, 429")
	s.RateBurst = f.Int64("rate-burst-per-key", 0, "requests one "+who+" may make at once above --rate-limit-per-key (0: the rate, rounded up)")
}

// Parse parses the command line (and the environment), prints the version
// for --version, and sets up the logger from --log-level. done reports
// that the program has nothing more to do: it printed its help or its
// version. A command line that does not parse is ErrUsage.
func (p *Program) Parse(args []string) (done bool, err error) {
	if err := p.Flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return true, nil
		}
		return true, ErrUsage
	}
	if *p.version {
		fmt.Println(p.Name + " " + buildinfo.Read().String())
		return true, nil
	}
	p.Log, err = Logger(*p.Shared.LogLevel)
	return err != nil, err
}

// CheckExposure is CheckExposure for the program's --listen,
// --insecure-open and --allowed-host: open says that no API key is set.
func (p *Program) CheckExposure(open bool) ([]string, error) {
	return CheckExposure(*p.Listen, open, *p.Shared.InsecureOpen, *p.Shared.AllowedHosts)
}

// Demo serves h, a built-in demo agent (name: for its error log), on a
// free loopback port until Run returns, and returns its address.
func (p *Program) Demo(name string, h http.Handler) (string, error) {
	addr, stop, err := ServeLoopback(p.Log, name, h)
	if err != nil {
		return "", err
	}
	p.cleanup = append(p.cleanup, stop)
	return addr, nil
}

// Bridge is a bridge's server as a program serves it.
type Bridge interface {
	http.Handler
	// MetricsHandler serves GET /metrics (on --metrics-listen).
	MetricsHandler() http.Handler
}

// Runtime is what Run gives the bridge's Config: the store opened from
// --store, the tracer provider the OTEL_* environment asks for (nil for
// none), and whether /metrics is served on a listener of its own.
type Runtime struct {
	Store           store.Store
	TracerProvider  trace.TracerProvider
	SeparateMetrics bool
}

// Run opens the store, sets up tracing, builds the bridge with newBridge,
// serves /metrics on --metrics-listen when it is set, logs openWarning
// (when not empty), and serves the bridge on --listen until SIGINT or
// SIGTERM (Serve, with --shutdown-delay and --shutdown-timeout; ready gets
// the bound address), calling Reload on each
// SIGHUP meanwhile. Everything it started,
// and the demo agent, is stopped when it returns.
func (p *Program) Run(newBridge func(Runtime) (Bridge, error), openWarning string, ready func(net.Addr)) error {
	defer p.stop()
	st, err := store.Open(*p.Store)
	if err != nil {
		return err
	}
	p.cleanup = append(p.cleanup, func() { st.Close() })
	tp, stopTracing, err := Tracing(p.Log, p.Name)
	if err != nil {
		return err
	}
	p.cleanup = append(p.cleanup, stopTracing)
	metricsListen := *p.Shared.MetricsListen
	srv, err := newBridge(Runtime{Store: st, TracerProvider: tp, SeparateMetrics: metricsListen != ""})
	if err != nil {
		return err
	}
	if metricsListen != "" {
		stop, err := ServeMetrics(p.Log, metricsListen, srv.MetricsHandler())
		if err != nil {
			return fmt.Errorf("--metrics-listen: %w", err)
		}
		p.cleanup = append(p.cleanup, stop)
	}
	if p.Reload != nil {
		p.cleanup = append(p.cleanup, OnHangup(p.Log, p.Reload))
	}
	if openWarning != "" {
		p.Log.Warn().Msg(openWarning)
	}
	return Serve(context.Background(), p.Log, ServeOptions{
		Addr: *p.Listen, Handler: srv, Delay: *p.Shared.ShutdownDelay, Grace: *p.Shared.Grace, Ready: ready,
	})
}

// stop runs the clean-ups in the reverse order of their start.
func (p *Program) stop() {
	for i := len(p.cleanup) - 1; i >= 0; i-- {
		p.cleanup[i]()
	}
	p.cleanup = nil
}

// ServingOptions are the options both bridges share (serving.Serving,
// which both bridges' Config hold), from the flags every bridge has
// (BindServing, BindStream) and the program's keys, CORS origins and
// users: the one place a program copies them into its Config.
func (p *Program) ServingOptions(keys, origins []string, users userid.Options) aap2agui.Serving {
	s := &p.Shared
	return aap2agui.Serving{
		APIKeys: keys, CORSOrigins: origins, Users: users, Logger: p.Log,
		HeaderTimeout: *s.HeaderTimeout, IdleTimeout: *s.IdleTimeout, MaxTurnDuration: *s.MaxTurn,
		StallTimeout: *s.StallTimeout, KeepAlive: *s.KeepAlive, BodyTimeout: *s.BodyTimeout,
		OnClientGone: aap2agui.ClientGone(*s.OnClientGone), MaxMessageSize: int(*s.MaxMessage),
		StartTimeout: *s.StartTimeout, LeaseTTL: *s.LeaseTTL,
		MaxSchedulingDelay: *s.MaxSchedDelay, MaxRenewalLag: *s.MaxLag,
	}
}
