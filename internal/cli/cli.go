// Package cli holds what the two programs share: flags that fall back to
// environment variables, logging set-up, and serving with a graceful
// shutdown.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rs/zerolog"
)

// Flags is a flag set whose flags default to environment variables named
// PREFIX_FLAG_NAME (upper case, dashes as underscores).
type Flags struct {
	*flag.FlagSet
	prefix string
}

// NewFlags returns a flag set for a program.
func NewFlags(program, envPrefix string) *Flags {
	return &Flags{FlagSet: flag.NewFlagSet(program, flag.ContinueOnError), prefix: envPrefix}
}

// Env is the environment variable of a flag.
func (f *Flags) Env(name string) string {
	return f.prefix + "_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

func (f *Flags) envOr(name, def string) string {
	if v, ok := os.LookupEnv(f.Env(name)); ok {
		return v
	}
	return def
}

// String defines a string flag.
func (f *Flags) String(name, def, usage string) *string {
	return f.FlagSet.String(name, f.envOr(name, def), usage+" (env "+f.Env(name)+")")
}

// Bool defines a boolean flag.
func (f *Flags) Bool(name string, def bool, usage string) *bool {
	if v, ok := os.LookupEnv(f.Env(name)); ok {
		if b, err := strconv.ParseBool(v); err == nil {
			def = b
		}
	}
	return f.FlagSet.Bool(name, def, usage+" (env "+f.Env(name)+")")
}

// Int64 defines an integer flag.
func (f *Flags) Int64(name string, def int64, usage string) *int64 {
	if v, ok := os.LookupEnv(f.Env(name)); ok {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			def = n
		}
	}
	return f.FlagSet.Int64(name, def, usage+" (env "+f.Env(name)+")")
}

// Duration defines a duration flag.
func (f *Flags) Duration(name string, def time.Duration, usage string) *time.Duration {
	if v, ok := os.LookupEnv(f.Env(name)); ok {
		if d, err := time.ParseDuration(v); err == nil {
			def = d
		}
	}
	return f.FlagSet.Duration(name, def, usage+" (env "+f.Env(name)+")")
}

// List defines a repeatable flag. Its environment variable holds several
// values separated by sep.
func (f *Flags) List(name, sep, usage string) *[]string {
	l := &list{}
	if v, ok := os.LookupEnv(f.Env(name)); ok {
		for _, s := range strings.Split(v, sep) {
			if s = strings.TrimSpace(s); s != "" {
				l.values = append(l.values, s)
			}
		}
		l.fromEnv = true
	}
	what := "comma-separated"
	if sep == "\n" {
		what = "one per line"
	}
	f.Var(l, name, usage+" (repeatable; env "+f.Env(name)+", "+what+")")
	return &l.values
}

type list struct {
	values  []string
	fromEnv bool
}

func (l *list) String() string { return strings.Join(l.values, ",") }

func (l *list) Set(v string) error {
	if l.fromEnv { // flags given on the command line replace the environment's
		l.values, l.fromEnv = nil, false
	}
	l.values = append(l.values, v)
	return nil
}

// Logger returns a JSON logger at the named level.
func Logger(level string) (zerolog.Logger, error) {
	lvl, err := zerolog.ParseLevel(strings.ToLower(level))
	if err != nil || level == "" {
		return zerolog.Nop(), fmt.Errorf("unknown log level %q (want debug, info, warn or error)", level)
	}
	return zerolog.New(os.Stderr).Level(lvl).With().Timestamp().Logger(), nil
}

// ParseHeader parses "Name: value".
func ParseHeader(s string) (string, string, error) {
	name, value, ok := strings.Cut(s, ":")
	name = strings.TrimSpace(name)
	if !ok || name == "" || strings.ContainsAny(name, " \t\r\n") {
		return "", "", fmt.Errorf("header %q is not of the form 'Name: value'", redactHeader(s))
	}
	return name, strings.TrimSpace(value), nil
}

func redactHeader(s string) string {
	if name, _, ok := strings.Cut(s, ":"); ok {
		return name + ": ***"
	}
	return "***"
}

// Serve serves h on addr until SIGINT or SIGTERM, then shuts down: new
// connections are refused and running requests (turns) get up to grace to
// finish. ready, if not nil, receives the bound address.
func Serve(ctx context.Context, log zerolog.Logger, addr string, h http.Handler, grace time.Duration, ready func(net.Addr)) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       120 * time.Second,
		// No WriteTimeout: turns stream for as long as the agent takes.
	}
	if ready != nil {
		ready(ln.Addr())
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info().Dur("grace", grace).Msg("shutting down: waiting for running requests")
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn().Err(err).Msg("grace period over: closing the remaining connections")
		_ = srv.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// RedactURL renders a URL for logs without its password.
func RedactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(invalid URL)"
	}
	return u.Redacted()
}

// ServeLoopback serves h on a free loopback port (a built-in demo agent)
// and returns its address and a function that stops it.
func ServeLoopback(log zerolog.Logger, name string, h http.Handler) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error().Err(err).Msg(name)
		}
	}()
	return ln.Addr().String(), func() { _ = srv.Close() }, nil
}
