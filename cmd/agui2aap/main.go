// Command agui2aap serves AG-UI (one HttpAgent-compatible endpoint per
// agent, POST /agents/:name) in front of an AAP server, so that CopilotKit
// and other AG-UI frontends can talk to AAP agents.
//
// Without --upstream it runs the built-in AAP demo agent, so that
//
//	go run ./cmd/agui2aap
//
// works on a fresh machine. Every flag has an environment variable
// AGUI2AAP_<FLAG>; run with -h for the list.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/aapagui/aapagui/bridge/agui2aap"
	"github.com/aapagui/aapagui/cmd/internal/cli"
	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/internal/buildinfo"
	"github.com/aapagui/aapagui/store"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		if !errors.Is(err, errUsage) {
			fmt.Fprintln(os.Stderr, "agui2aap:", err)
		}
		os.Exit(2)
	}
}

var errUsage = errors.New("usage")

func run(args []string) error {
	f := cli.NewFlags("agui2aap", "AGUI2AAP")
	showVersion := f.FlagSet.Bool("version", false, "print the version (module version, VCS revision, Go version) and exit")
	listen := f.String("listen", "127.0.0.1:8081", "address to serve AG-UI on")
	upstream := f.String("upstream", "", "base URL of the AAP server; empty runs the built-in AAP demo agent")
	quietDemo := f.Bool("demo-quiet-permission-results", false, "the built-in AAP demo agent stores the outcome of an answered permission without sending it (as some AAP servers do); for trying the bridge against such servers")
	upstreamVersion := f.Int64("upstream-aap-version", 0, "AAP protocol version the server speaks: 1, 2 or 3; 0 reads it from the server's GET /meta")
	demoVersion := f.Int64("demo-aap-version", 3, "AAP protocol version the built-in demo agent speaks: 1, 2 or 3")
	upstreamKey := f.String("upstream-api-key", "", "API key for the AAP server")
	forwardAuth := f.Bool("forward-auth", false, "send the caller's Authorization header to the AAP server instead of --upstream-api-key")
	keys := f.List("api-key", ",", "API key accepted from callers; none means open")
	storeSpec := f.String("store", "sqlite:agui2aap.db", "thread store: sqlite:<file>, postgres://user@host/db (replicas on several machines) or memory:")
	snapshots := f.Bool("snapshot-after-runs", false, "end every run with a MESSAGES_SNAPSHOT of the whole thread")
	policy := f.String("permission-policy", "interrupt", "untrusted server tools: interrupt (ask the client), grant or deny")
	serverTools := f.String("server-tools", "", "AAP server tools to enable: name[:trust] or agent/name[:trust], comma-separated")
	origins := f.List("cors-origin", ",", "browser origin allowed to call the bridge directly (* for any)")
	copyFrom := f.String("copy-from", "", "copy everything from this SQLite store (sqlite:<file>) into the PostgreSQL --store, then exit")
	logLevel := f.String("log-level", "info", "debug, info, warn or error")
	maxBody := f.Int64("max-body", 16<<20, "largest RunAgentInput body, in bytes")
	allowedHosts := f.List("allowed-host", ",", "Host name served besides loopback names and the listen address when there is no --api-key (* for any)")
	insecureOpen := f.Bool("insecure-open", false, "serve without --api-key on a non-loopback --listen address")
	headerTimeout := f.Duration("upstream-header-timeout", 60*time.Second, "how long to wait for the upstream's response headers to a turn")
	idleTimeout := f.Duration("upstream-idle-timeout", 5*time.Minute, "end a turn whose upstream stream sends no event for this long; comments do not count (negative: never)")
	maxTurn := f.Duration("max-turn-duration", 0, "end a turn that runs longer than this, with an error and what came kept (0: no limit)")
	stallTimeout := f.Duration("stall-timeout", 30*time.Second, "end a turn whose client has not taken any of its stream for this long, as if it had left (negative: never)")
	keepAlive := f.Duration("keep-alive", 15*time.Second, "send a comment line on an idle event stream this often (negative: never)")
	bodyTimeout := f.Duration("body-timeout", 30*time.Second, "how long a client may take to send a request body")
	metricsListen := f.String("metrics-listen", "", "serve GET /metrics on this address of its own, without an API key (e.g. 127.0.0.1:9464); empty: on --listen, behind --api-key")
	grace := f.Duration("shutdown-timeout", 30*time.Second, "how long running runs may take to finish on SIGTERM")
	maxThreads := f.Int64("max-threads-per-key", 0, "threads one key (API key, or forwarded key) may hold (0: no limit); over it, 429")
	maxRuns := f.Int64("max-runs-per-key", 0, "runs one key may have going at once, per process (0: no limit); over it, 429")
	ratePerKey := f.Float64("rate-limit-per-key", 0, "requests a second one key may make, per process (0: no limit); over it, 429")
	burstPerKey := f.Int64("rate-burst-per-key", 0, "requests one key may make at once above --rate-limit-per-key (0: the rate, rounded up)")
	if err := f.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return errUsage
	}
	if *showVersion {
		fmt.Println("agui2aap " + buildinfo.Read().String())
		return nil
	}
	log, err := cli.Logger(*logLevel)
	if err != nil {
		return err
	}
	if *copyFrom != "" {
		return cli.CopyStore(log, *copyFrom, *storeSpec)
	}
	tools, err := agui2aap.ParseServerTools(*serverTools)
	if err != nil {
		return err
	}
	cfg := agui2aap.Config{
		Upstream: *upstream, UpstreamAPIKey: *upstreamKey, ForwardAuth: *forwardAuth, APIKeys: *keys,
		CORSOrigins: *origins, Policy: agui2aap.Policy(strings.ToLower(*policy)), ServerTools: tools,
		MaxBody: *maxBody, Logger: log, BodyTimeout: *bodyTimeout, SnapshotAfterRuns: *snapshots,
		ConnectTimeout: *headerTimeout, IdleTimeout: *idleTimeout, KeepAlive: *keepAlive,
		MaxTurnDuration: *maxTurn, StallTimeout: *stallTimeout,
	}
	if cfg.Limits, err = limits(*maxThreads, *maxRuns, *ratePerKey, *burstPerKey); err != nil {
		return err
	}
	if err := cli.CheckHeaderValues("--api-key", cfg.APIKeys...); err != nil {
		return err
	}
	if err := cli.CheckHeaderValues("--upstream-api-key", cfg.UpstreamAPIKey); err != nil {
		return err
	}
	if cfg.AllowedHosts, err = cli.CheckExposure(*listen, len(cfg.APIKeys) == 0, *insecureOpen, *allowedHosts); err != nil {
		return err
	}
	if *upstreamVersion < 0 || *upstreamVersion > 3 {
		return fmt.Errorf("--upstream-aap-version %d: want 1, 2 or 3, or 0 to read it from GET /meta", *upstreamVersion)
	}
	cfg.UpstreamVersion = int(*upstreamVersion)
	if *demoVersion < 1 || *demoVersion > 3 {
		return fmt.Errorf("--demo-aap-version %d: want 1, 2 or 3", *demoVersion)
	}
	if *demoVersion != 3 && cfg.Upstream != "" {
		return errors.New("--demo-aap-version applies to the built-in demo agent only: leave out --upstream")
	}
	if *quietDemo && cfg.Upstream != "" {
		return errors.New("--demo-quiet-permission-results applies to the built-in demo agent only: leave out --upstream")
	}
	if cfg.Upstream == "" {
		addr, stop, err := cli.ServeLoopback(log, "AAP demo agent", demo.NewAAPAgent(demo.AAPAgentOptions{QuietPermissionResults: *quietDemo, Version: int(*demoVersion)}))
		if err != nil {
			return err
		}
		defer stop()
		cfg.Upstream = "http://" + addr
		if *serverTools == "" {
			// The demo's web_search, untrusted: searches ask permission.
			cfg.ServerTools = []agui2aap.ServerTool{{Name: demo.SearchTool}}
		}
		log.Info().Str("upstream", cfg.Upstream).Int64("aap_version", *demoVersion).Msg("no --upstream: running the built-in AAP demo agent")
	}
	st, err := store.Open(*storeSpec)
	if err != nil {
		return err
	}
	defer st.Close()
	cfg.Store = st
	tp, stopTracing, err := cli.Tracing(log, "agui2aap")
	if err != nil {
		return err
	}
	defer stopTracing()
	cfg.TracerProvider, cfg.SeparateMetrics = tp, *metricsListen != ""
	srv, err := agui2aap.New(cfg)
	if err != nil {
		return err
	}
	if *metricsListen != "" {
		stop, err := cli.ServeMetrics(log, *metricsListen, srv.MetricsHandler())
		if err != nil {
			return fmt.Errorf("--metrics-listen: %w", err)
		}
		defer stop()
	}
	if len(cfg.APIKeys) == 0 && !cfg.ForwardAuth {
		log.Warn().Msg("no --api-key: the AG-UI endpoints are open to anyone who can reach them")
	}
	return cli.Serve(context.Background(), log, *listen, srv, *grace, func(a net.Addr) {
		log.Info().Str("listen", a.String()).Str("upstream", cli.RedactURL(cfg.Upstream)).Bool("forward_auth", cfg.ForwardAuth).
			Str("policy", string(cfg.Policy)).Str("store", cli.RedactURL(*storeSpec)).Strs("cors_origins", cfg.CORSOrigins).Msg("agui2aap serving")
	})
}

// limits checks the per-key limit flags.
func limits(threads, runs int64, rate float64, burst int64) (agui2aap.Limits, error) {
	err := cli.CheckLimits(map[string]int64{"--max-threads-per-key": threads, "--max-runs-per-key": runs, "--rate-burst-per-key": burst}, rate)
	if err != nil {
		return agui2aap.Limits{}, err
	}
	return agui2aap.Limits{ThreadsPerKey: int(threads), RunsPerKey: int(runs), RequestsPerSecond: rate, Burst: int(burst)}, nil
}
