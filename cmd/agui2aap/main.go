package main

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/aapagui/aapagui/bridge/agui2aap"
	"github.com/aapagui/aapagui/cmd/internal/cli"
	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/internal/redact"
)

func main() { cli.Main("agui2aap", run) }

// flags are agui2aap's own flags; the shared ones are the program's.
type flags struct {
	upstream, upstreamKey, policy, serverTools, forwardUser *string
	keys, origins                                           *[]string
	quietDemo, forwardAuth, snapshots                       *bool
	upstreamVersion, demoVersion, maxThreads, maxRuns       *int64
	users                                                   *cli.UserFlags
	demoPace                                                *time.Duration
}

// bind defines the program's flags.
func bind(p *cli.Program) *flags {
	f, fl := p.Flags, &flags{}
	p.Listen = f.String("listen", "127.0.0.1:8081", "address to serve AG-UI on")
	fl.upstream = f.String("upstream", "", "base URL of the AAP server; empty runs the built-in AAP demo agent")
	fl.quietDemo = f.Bool("demo-quiet-permission-results", false, "the built-in AAP demo agent stores the outcome of an answered permission without sending it (as some AAP servers do); for trying the bridge against such servers")
	fl.upstreamVersion = f.Int64("upstream-aap-version", 0, "AAP protocol version the server speaks: 1, 2 or 3; 0 reads it from the server's GET /meta")
	fl.demoVersion = f.Int64("demo-aap-version", 3, "AAP protocol version the built-in demo agent speaks: 1, 2 or 3")
	fl.demoPace = f.Duration("demo-long-pace", 0, "the built-in AAP demo agent pauses this long between the deltas of a \"long <n>\" answer: an answer that takes a while, to leave and rejoin (0: at once)")
	fl.upstreamKey = f.String("upstream-api-key", "", "API key for the AAP server")
	fl.forwardAuth = f.Bool("forward-auth", false, "send the caller's Authorization header to the AAP server instead of --upstream-api-key")
	fl.keys = f.List("api-key", ",", "API key accepted from callers; none means open")
	fl.users = p.BindUsers("threads")
	fl.forwardUser = f.String("forward-user", "", "header in which to name each run's user (from --user-header or --user-jwt, as an opaque id of key and user) to the AAP server, for one that takes --user-header; only when the AAP server is reachable by this bridge alone or with a key only it holds")
	p.Store = f.String("store", "sqlite:agui2aap.db", "thread store: sqlite:<file>, postgres://user@host/db (replicas on several machines) or memory:")
	fl.snapshots = f.Bool("snapshot-after-runs", false, "end every run with a MESSAGES_SNAPSHOT of the whole thread")
	fl.policy = f.String("permission-policy", "interrupt", "untrusted server tools: interrupt (ask the client), grant or deny")
	fl.serverTools = f.String("server-tools", "", "AAP server tools to enable: name[:trust] or agent/name[:trust], comma-separated")
	fl.origins = f.List("cors-origin", ",", "browser origin allowed to call the bridge directly (* for any)")
	p.BindServing(16<<20, "largest RunAgentInput body, in bytes")
	p.BindStream()
	p.BindShutdown("runs")
	fl.maxThreads = f.Int64("max-threads-per-key", 0, "threads one key (API key, or forwarded key) may hold (0: no limit); over it, 429")
	fl.maxRuns = f.Int64("max-runs-per-key", 0, "runs one key may have going at once, per process, and 4 times as many connects held open (0: no limit); over it, 429")
	p.BindRate("key")
	return fl
}

func run(args []string) error {
	p := cli.NewProgram("agui2aap", "AGUI2AAP")
	fl := bind(p)
	if done, err := p.Parse(args); done {
		return err
	}
	if *p.Shared.CopyFrom != "" {
		return cli.CopyStore(p.Log, *p.Shared.CopyFrom, *p.Store)
	}
	cfg, err := fl.config(p)
	if err != nil {
		return err
	}
	if cfg.Upstream == "" {
		addr, err := p.Demo("AAP demo agent", demo.NewAAPAgent(demo.AAPAgentOptions{QuietPermissionResults: *fl.quietDemo, Version: int(*fl.demoVersion), LongPace: *fl.demoPace}))
		if err != nil {
			return err
		}
		cfg.Upstream = "http://" + addr
		if *fl.serverTools == "" {
			// The demo's web_search, untrusted: searches ask permission.
			cfg.ServerTools = []agui2aap.ServerTool{{Name: demo.SearchTool}}
		}
		p.Log.Info().Str("upstream", cfg.Upstream).Int64("aap_version", *fl.demoVersion).Msg("no --upstream: running the built-in AAP demo agent")
	}
	var openWarning string
	if len(cfg.APIKeys) == 0 && !cfg.ForwardAuth && !fl.users.Tokens() {
		openWarning = "no --api-key: the AG-UI endpoints are open to anyone who can reach them"
	}
	return p.Run(func(rt cli.Runtime) (cli.Bridge, error) {
		cfg.Store, cfg.TracerProvider, cfg.SeparateMetrics = rt.Store, rt.TracerProvider, rt.SeparateMetrics
		return agui2aap.New(cfg)
	}, openWarning, func(a net.Addr) {
		p.Log.Info().Str("listen", a.String()).Str("upstream", redact.DSN(cfg.Upstream)).Bool("forward_auth", cfg.ForwardAuth).
			Str("policy", string(cfg.Policy)).Str("store", redact.DSN(*p.Store)).Strs("cors_origins", cfg.CORSOrigins).Msg("agui2aap serving")
	})
}

// config turns the flags into the bridge's Config (all but what Run
// gives it) and checks them.
func (fl *flags) config(p *cli.Program) (agui2aap.Config, error) {
	tools, err := agui2aap.ParseServerTools(*fl.serverTools)
	if err != nil {
		return agui2aap.Config{}, err
	}
	s := &p.Shared
	cfg := agui2aap.Config{
		Upstream: *fl.upstream, UpstreamAPIKey: *fl.upstreamKey, ForwardAuth: *fl.forwardAuth, ForwardUser: *fl.forwardUser,
		Serving: p.ServingOptions(*fl.keys, *fl.origins, fl.users.Options()),
		Policy:  agui2aap.Policy(strings.ToLower(*fl.policy)), ServerTools: tools,
		MaxBody: *s.MaxBody, SnapshotAfterRuns: *fl.snapshots,
	}
	if cfg.Limits, err = limits(*fl.maxThreads, *fl.maxRuns, *s.RateLimit, *s.RateBurst); err != nil {
		return cfg, err
	}
	if err := cli.CheckHeaderValues("--api-key", cfg.APIKeys...); err != nil {
		return cfg, err
	}
	if err := cli.CheckHeaderValues("--upstream-api-key", cfg.UpstreamAPIKey); err != nil {
		return cfg, err
	}
	if cfg.AllowedHosts, err = p.CheckExposure(len(cfg.APIKeys) == 0 && !fl.users.Tokens()); err != nil {
		return cfg, err
	}
	if *fl.upstreamVersion < 0 || *fl.upstreamVersion > 3 {
		return cfg, fmt.Errorf("--upstream-aap-version %d: want 1, 2 or 3, or 0 to read it from GET /meta", *fl.upstreamVersion)
	}
	cfg.UpstreamVersion = int(*fl.upstreamVersion)
	if *fl.demoVersion < 1 || *fl.demoVersion > 3 {
		return cfg, fmt.Errorf("--demo-aap-version %d: want 1, 2 or 3", *fl.demoVersion)
	}
	if *fl.demoVersion != 3 && cfg.Upstream != "" {
		return cfg, errors.New("--demo-aap-version applies to the built-in demo agent only: leave out --upstream")
	}
	if *fl.quietDemo && cfg.Upstream != "" {
		return cfg, errors.New("--demo-quiet-permission-results applies to the built-in demo agent only: leave out --upstream")
	}
	if *fl.demoPace < 0 || *fl.demoPace > time.Minute {
		return cfg, fmt.Errorf("--demo-long-pace %s: want 0 to 1m", *fl.demoPace)
	}
	if *fl.demoPace != 0 && cfg.Upstream != "" {
		return cfg, errors.New("--demo-long-pace applies to the built-in demo agent only: leave out --upstream")
	}
	return cfg, nil
}

// limits checks the per-key limit flags.
func limits(threads, runs int64, rate float64, burst int64) (agui2aap.Limits, error) {
	err := cli.CheckLimits(map[string]int64{"--max-threads-per-key": threads, "--max-runs-per-key": runs, "--rate-burst-per-key": burst}, rate)
	if err != nil {
		return agui2aap.Limits{}, err
	}
	return agui2aap.Limits{ThreadsPerKey: int(threads), RunsPerKey: int(runs), RequestsPerSecond: rate, Burst: int(burst)}, nil
}
