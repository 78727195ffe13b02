// Command aap2agui serves the AAP API (version 3, and versions 1 and 2 with
// --aap-version) in front of an AG-UI agent.
//
// Without --upstream it runs the built-in AG-UI demo agent, so that
//
//	go run ./cmd/aap2agui
//
// works on a fresh machine. Every flag has an environment variable
// AAP2AGUI_<FLAG>; run with -h for the list.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/cmd/internal/cli"
	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/internal/buildinfo"
	"github.com/aapagui/aapagui/store"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		if !errors.Is(err, errUsage) {
			fmt.Fprintln(os.Stderr, "aap2agui:", err)
		}
		os.Exit(2)
	}
}

var errUsage = errors.New("usage")

// maxPageSize bounds --page-size: one page is one store query and one
// response held in memory.
const maxPageSize = 1000

func run(args []string) error {
	f := cli.NewFlags("aap2agui", "AAP2AGUI")
	showVersion := f.FlagSet.Bool("version", false, "print the version (module version, VCS revision, Go version) and exit")
	listen := f.String("listen", "127.0.0.1:8080", "address to serve the AAP API on")
	upstream := f.String("upstream", "", "URL of the AG-UI agent (POST RunAgentInput); empty runs the built-in demo agent")
	headers := f.List("upstream-header", "\n", "header sent to the agent, 'Name: value'")
	keys := f.List("api-key", ",", "API key accepted from AAP clients; none means the API is open")
	origins := f.List("cors-origin", ",", "browser origin allowed to call the API directly, e.g. an AAP web client's page (* for any, never with credentials)")
	publicMeta := f.Bool("public-meta", false, "serve GET /meta without an API key")
	toolResultParts := f.Bool("tool-result-parts", false, "the agent speaks @ag-ui/core 1.0: send AAP tool results that hold images as content parts (a 0.0.x agent accepts only a string)")
	separateCancel := f.Bool("separate-cancel-run", false, "send the cancellation of the interrupts a new user message leaves open as a run of its own, before the message's run (for agents that end a cancelled resume without reading new messages: @ag-ui/langgraph, @ag-ui/mastra)")
	threadIDs := f.String("thread-id", "uuid", "the threadId of a session's runs: uuid (a UUID derived from the session id, which every framework accepts) or session (the session id itself, as earlier releases sent it)")
	agentFile := f.String("agent-config", "", "JSON or YAML file describing the agent (name, title, version, description, options, tools, capabilities); a tool with permissions: none is one the agent runs on its own")
	storeSpec := f.String("store", "sqlite:aap2agui.db", "session store: sqlite:<file>, postgres://user@host/db (replicas on several machines) or memory:")
	basePath := f.String("base-path", "", "mount the API under this path, e.g. /v1")
	versions := f.List("aap-version", ",", "AAP protocol version to serve, N or N=PATH (1, 2 or 3; PATH replaces --base-path for it); repeat for several, e.g. --aap-version 3 --aap-version 1=/legacy (default 3)")
	copyFrom := f.String("copy-from", "", "copy everything from this SQLite store (sqlite:<file>) into the PostgreSQL --store, then exit")
	logLevel := f.String("log-level", "info", "debug, info, warn or error")
	maxBody := f.Int64("max-body", 8<<20, "largest request body, in bytes")
	allowedHosts := f.List("allowed-host", ",", "Host name served besides loopback names and the listen address when there is no --api-key (* for any)")
	insecureOpen := f.Bool("insecure-open", false, "serve without --api-key on a non-loopback --listen address")
	headerTimeout := f.Duration("upstream-header-timeout", 60*time.Second, "how long to wait for the upstream's response headers to a turn")
	idleTimeout := f.Duration("upstream-idle-timeout", 5*time.Minute, "end a turn whose upstream stream sends no event for this long; comments do not count (negative: never)")
	maxTurn := f.Duration("max-turn-duration", 0, "end a turn that runs longer than this, with an error and what came kept (0: no limit)")
	stallTimeout := f.Duration("stall-timeout", 30*time.Second, "end a turn whose client has not taken any of its stream for this long, as if it had left (negative: never)")
	maxMessage := f.Int64("max-message-size", 32<<20, "largest message an agent may stream, in bytes; past it the turn ends with an error, what fits kept (negative: no limit)")
	keepAlive := f.Duration("keep-alive", 15*time.Second, "send a comment line on an idle event stream this often (negative: never)")
	bodyTimeout := f.Duration("body-timeout", 30*time.Second, "how long a client may take to send a request body")
	pageSize := f.Int64("page-size", 50, "sessions per page of GET /sessions (1 to 1000)")
	metricsListen := f.String("metrics-listen", "", "serve GET /metrics on this address of its own, without an API key (e.g. 127.0.0.1:9464); empty: on --listen, behind --api-key")
	grace := f.Duration("shutdown-timeout", 30*time.Second, "how long running turns may take to finish on SIGTERM")
	maxSessions := f.Int64("max-sessions-per-key", 0, "sessions one API key may hold, across replicas (0: no limit); over it, 429")
	maxTurns := f.Int64("max-turns-per-key", 0, "turns one API key may run at once, per process (0: no limit); over it, 429")
	ratePerKey := f.Float64("rate-limit-per-key", 0, "requests a second one API key may make, per process (0: no limit); over it, 429")
	burstPerKey := f.Int64("rate-burst-per-key", 0, "requests one API key may make at once above --rate-limit-per-key (0: the rate, rounded up)")
	if err := f.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return errUsage
	}
	if *showVersion {
		fmt.Println("aap2agui " + buildinfo.Read().String())
		return nil
	}
	log, err := cli.Logger(*logLevel)
	if err != nil {
		return err
	}
	if *pageSize < 1 || *pageSize > maxPageSize {
		return fmt.Errorf("--page-size %d: want a number of sessions from 1 to %d", *pageSize, maxPageSize)
	}
	if *copyFrom != "" {
		return cli.CopyStore(log, *copyFrom, *storeSpec)
	}

	cfg := aap2agui.Config{
		Upstream: *upstream, APIKeys: *keys, PublicMeta: *publicMeta, BasePath: *basePath,
		MaxBody: *maxBody, Logger: log, UpstreamHeader: http.Header{}, BodyTimeout: *bodyTimeout,
		ConnectTimeout: *headerTimeout, IdleTimeout: *idleTimeout, KeepAlive: *keepAlive,
		MaxTurnDuration: *maxTurn, StallTimeout: *stallTimeout, MaxMessageSize: int(*maxMessage),
		PageSize: int(*pageSize), CORSOrigins: *origins,
	}
	if cfg.Limits, err = limits(*maxSessions, *maxTurns, *ratePerKey, *burstPerKey); err != nil {
		return err
	}
	cfg.SeparateCancelRun = *separateCancel
	cfg.ToolResultParts = *toolResultParts
	if cfg.ThreadIDs, err = aap2agui.ParseThreadIDs(*threadIDs); err != nil {
		return fmt.Errorf("--thread-id: %w", err)
	}
	for _, v := range *versions {
		m, err := aap2agui.ParseMount(v)
		if err != nil {
			return fmt.Errorf("--aap-version: %w", err)
		}
		cfg.Versions = append(cfg.Versions, m)
	}
	if err := cli.CheckHeaderValues("--api-key", cfg.APIKeys...); err != nil {
		return err
	}
	if cfg.AllowedHosts, err = cli.CheckExposure(*listen, len(cfg.APIKeys) == 0, *insecureOpen, *allowedHosts); err != nil {
		return err
	}
	for _, h := range *headers {
		name, value, err := cli.ParseHeader(h)
		if err != nil {
			return fmt.Errorf("--upstream-header: %w", err)
		}
		cfg.UpstreamHeader.Add(name, value)
	}
	if *agentFile != "" {
		data, err := os.ReadFile(*agentFile)
		if err != nil {
			return err
		}
		js, err := yaml.YAMLToJSON(data)
		if err != nil {
			return fmt.Errorf("%s: %w", *agentFile, err)
		}
		d, err := aap2agui.LoadAgentDescription(js)
		if err != nil {
			return fmt.Errorf("%s: %w", *agentFile, err)
		}
		cfg.Agent, cfg.OwnTools = d.Agent, d.OwnTools
	}

	ctx := context.Background()
	if cfg.Upstream == "" {
		addr, stop, err := cli.ServeLoopback(log, "AG-UI demo agent", demo.AGUIAgent{})
		if err != nil {
			return err
		}
		defer stop()
		cfg.Upstream = "http://" + addr + "/"
		if cfg.Agent.Name == "" {
			cfg.Agent = demoAgent()
		}
		log.Info().Str("upstream", cfg.Upstream).Msg("no --upstream: running the built-in AG-UI demo agent")
	}

	st, err := store.Open(*storeSpec)
	if err != nil {
		return err
	}
	defer st.Close()
	cfg.Store = st
	tp, stopTracing, err := cli.Tracing(log, "aap2agui")
	if err != nil {
		return err
	}
	defer stopTracing()
	cfg.TracerProvider, cfg.SeparateMetrics = tp, *metricsListen != ""
	srv, err := aap2agui.New(cfg)
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
	if len(cfg.APIKeys) == 0 {
		log.Warn().Msg("no --api-key: the AAP API is open to anyone who can reach it")
	}
	headerNames := make([]string, 0, len(cfg.UpstreamHeader))
	for name := range cfg.UpstreamHeader {
		headerNames = append(headerNames, name) // names only: values may be secrets
	}
	return cli.Serve(ctx, log, *listen, srv, *grace, func(a net.Addr) {
		log.Info().Str("listen", a.String()).Str("upstream", cli.RedactURL(cfg.Upstream)).Strs("upstream_headers", headerNames).
			Str("agent", cfg.Agent.Name).Str("store", cli.RedactURL(*storeSpec)).Str("base_path", cfg.BasePath).Strs("aap_versions", servedVersions(*versions)).Strs("cors_origins", cfg.CORSOrigins).Msg("aap2agui serving")
	})
}

// servedVersions are the --aap-version values in force, for the start-up
// line: version 3 alone when none is given.
func servedVersions(flags []string) []string {
	if len(flags) == 0 {
		return []string{"3"}
	}
	return flags
}

// limits checks the per-key limit flags.
func limits(sessions, turns int64, rate float64, burst int64) (aap2agui.Limits, error) {
	err := cli.CheckLimits(map[string]int64{"--max-sessions-per-key": sessions, "--max-turns-per-key": turns, "--rate-burst-per-key": burst}, rate)
	if err != nil {
		return aap2agui.Limits{}, err
	}
	return aap2agui.Limits{SessionsPerKey: int(sessions), TurnsPerKey: int(turns), RequestsPerSecond: rate, Burst: int(burst)}, nil
}

// demoAgent describes the demo agent as examples/agent.yaml does (a test
// keeps the two equal): web_search as a server tool, an option of each
// kind, every capability.
func demoAgent() aap.AgentInfo {
	a := aap2agui.DefaultAgent()
	a.Name, a.Title = "demo", "Demo agent"
	a.Description = `Echoes, thinks on "think", asks your get_weather tool on "weather in <place>", searches with its web_search tool on "search <query>", fails on "fail".`
	a.Tools = []aap.ToolSpec{demo.SearchToolSpec}
	a.Options = []aap.AgentOption{
		{Type: aap.OptionText, Name: "language", Title: "Language", Description: "The language to answer in.", Default: "English"},
		{Type: aap.OptionSelect, Name: "tone", Title: "Tone", Options: []string{"plain", "friendly"}, Default: "plain"},
		{Type: aap.OptionSecret, Name: "api_key", Title: "Search API key", Description: "A key the agent would pass on to its search service."},
	}
	return a
}
