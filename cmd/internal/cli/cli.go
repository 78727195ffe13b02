package cli

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/net/http/httpguts"
)

// Flags is a flag set whose flags default to environment variables named
// PREFIX_FLAG_NAME (upper case, dashes as underscores).
type Flags struct {
	*flag.FlagSet
	prefix  string
	envErrs []error
}

// Parse parses the command line. An environment variable that does not
// parse as its flag's type is an error (printed, like a bad flag), never
// a silent fall-back to the default.
func (f *Flags) Parse(args []string) error {
	if err := errors.Join(f.envErrs...); err != nil {
		fmt.Fprintln(f.Output(), err)
		f.Usage()
		return err
	}
	return f.FlagSet.Parse(args)
}

func (f *Flags) envErr(name, value, want string, err error) {
	if ne := (*strconv.NumError)(nil); errors.As(err, &ne) {
		err = ne.Err
	}
	f.envErrs = append(f.envErrs, fmt.Errorf("environment variable %s=%q is not %s: %v", f.Env(name), value, want, err))
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
	return f.FlagSet.String(name, f.envOr(name, def), f.usage(name, usage))
}

// Bool defines a boolean flag.
func (f *Flags) Bool(name string, def bool, usage string) *bool {
	return f.FlagSet.Bool(name, envValue(f, name, def, "a boolean (true or false)", strconv.ParseBool), f.usage(name, usage))
}

// Int64 defines an integer flag.
func (f *Flags) Int64(name string, def int64, usage string) *int64 {
	parse := func(v string) (int64, error) { return strconv.ParseInt(v, 10, 64) }
	return f.FlagSet.Int64(name, envValue(f, name, def, "an integer", parse), f.usage(name, usage))
}

// Float64 defines a floating-point flag.
func (f *Flags) Float64(name string, def float64, usage string) *float64 {
	parse := func(v string) (float64, error) { return strconv.ParseFloat(v, 64) }
	return f.FlagSet.Float64(name, envValue(f, name, def, "a number", parse), f.usage(name, usage))
}

// Duration defines a duration flag.
func (f *Flags) Duration(name string, def time.Duration, usage string) *time.Duration {
	return f.FlagSet.Duration(name, envValue(f, name, def, "a duration (like 30s or 5m)", time.ParseDuration), f.usage(name, usage))
}

// usage is a flag's usage with its environment variable.
func (f *Flags) usage(name, usage string) string { return usage + " (env " + f.Env(name) + ")" }

// envValue is the default of flag name: def, or its environment variable
// read by parse; a value that does not parse (want says what it should
// be) is kept for Parse to report.
func envValue[T any](f *Flags, name string, def T, want string, parse func(string) (T, error)) T {
	v, ok := os.LookupEnv(f.Env(name))
	if !ok {
		return def
	}
	x, err := parse(v)
	if err != nil {
		f.envErr(name, v, want, err)
	}
	return x
}

// List defines a repeatable flag. Its environment variable, and each use
// of the flag, holds one or more values separated by sep: --api-key a,b
// means two keys, as AAP2AGUI_API_KEY=a,b does. A list of lines (sep
// "\n", such as headers) is split in its environment variable only: each
// use of the flag is one value, so a line break inside it stays there for
// the program to refuse (ParseHeader), rather than make a second value.
func (f *Flags) List(name, sep, usage string) *[]string {
	l := &list{sep: sep}
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
	sep     string
}

func (l *list) String() string { return strings.Join(l.values, ",") }

func (l *list) Set(v string) error {
	if l.fromEnv { // flags given on the command line replace the environment's
		l.values, l.fromEnv = nil, false
	}
	if l.sep == "\n" {
		if s := strings.TrimSpace(v); s != "" {
			l.values = append(l.values, s)
		}
		return nil
	}
	for _, s := range strings.Split(v, l.sep) {
		if s = strings.TrimSpace(s); s != "" {
			l.values = append(l.values, s)
		}
	}
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

// ParseHeader parses "Name: value". The name must be an HTTP token and
// the value free of control characters (tabs aside): a CR or LF would
// make one flag send a second header. Errors never show the value.
func ParseHeader(s string) (string, string, error) {
	name, value, ok := strings.Cut(s, ":")
	name = strings.TrimSpace(name)
	if !ok || name == "" || strings.ContainsAny(name, " \t\r\n") {
		return "", "", fmt.Errorf("header %q is not of the form 'Name: value'", redactHeader(s))
	}
	if !httpguts.ValidHeaderFieldName(name) {
		return "", "", fmt.Errorf("header %q: the name is not an HTTP token", redactHeader(s))
	}
	value = strings.TrimSpace(value)
	if !httpguts.ValidHeaderFieldValue(value) {
		return "", "", fmt.Errorf("header %q: the value holds a control character, which would send a second header or a broken one (the value is not shown)", redactHeader(s))
	}
	return name, value, nil
}

// CheckHeaderValues refuses values of the flag (API keys sent or compared
// as an Authorization header) that hold a control character: no HTTP
// header can carry one. The error names the flag and never the value.
func CheckHeaderValues(flag string, values ...string) error {
	for _, v := range values {
		if !httpguts.ValidHeaderFieldValue(v) {
			return fmt.Errorf("%s: a value holds a control character, which no HTTP header can carry (the value is not shown)", flag)
		}
	}
	return nil
}

func redactHeader(s string) string {
	if name, _, ok := strings.Cut(s, ":"); ok {
		return name + ": ***"
	}
	return "***"
}

// OnHangup calls reload on each SIGHUP until stop is called, one at a
// time; a reload that fails is logged as an error (the program goes on
// with what it had: reload should change nothing then).
func OnHangup(log zerolog.Logger, reload func() error) (stop func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		for {
			select {
			case <-done:
				return
			case <-hup:
				if err := reload(); err != nil {
					log.Error().Err(err).Msg("SIGHUP: not reloaded; serving on as before")
				}
			}
		}
	}()
	return func() {
		signal.Stop(hup)
		close(done)
		<-exited
	}
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

// CheckExposure refuses to serve an API without keys on a listen address
// other than loopback unless the operator said so (insecureOpen): anyone
// on the network could then run the agent. It returns the Host names to
// allow besides loopback names: the listen host (when it names one) and
// extra (--allowed-host).
func CheckExposure(listen string, open, insecureOpen bool, extra []string) ([]string, error) {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return nil, fmt.Errorf("--listen %q: %w", listen, err)
	}
	if open && !insecureOpen && !loopback(host) {
		return nil, fmt.Errorf("--listen %s is reachable from other machines and no --api-key is set: anyone who can reach it could run the agent; "+
			"set --api-key, listen on 127.0.0.1, or pass --insecure-open to serve it open anyway", listen)
	}
	hosts := append([]string(nil), extra...)
	if ip := net.ParseIP(host); host != "" && (ip == nil || !ip.IsUnspecified()) {
		hosts = append(hosts, host)
	}
	return hosts, nil
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// CheckLimits checks the per-key limit flags: each count (by flag name) is
// 0 (no limit) or positive and fits an int32, and --rate-limit-per-key is
// 0 or a positive number.
func CheckLimits(counts map[string]int64, rate float64) error {
	for name, v := range counts {
		if v < 0 || v > math.MaxInt32 {
			return fmt.Errorf("%s %d: want 0 (no limit) or a positive number", name, v)
		}
	}
	if rate < 0 || math.IsNaN(rate) || math.IsInf(rate, 0) {
		return fmt.Errorf("--rate-limit-per-key %g: want 0 (no limit) or a positive number of requests a second", rate)
	}
	return nil
}
