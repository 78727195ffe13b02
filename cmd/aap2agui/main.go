package main

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"

	"github.com/rs/zerolog"
	"sigs.k8s.io/yaml"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/cmd/aap2agui/internal/agentconfig"
	"github.com/aapagui/aapagui/cmd/internal/cli"
	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/internal/redact"
)

func main() { cli.Main("aap2agui", run) }

// maxPageSize bounds --page-size: one page is one store query and one
// response held in memory.
const maxPageSize = 1000

// flags are aap2agui's own flags; the shared ones are the program's.
type flags struct {
	upstream, threadIDs, agentFile, basePath    *string
	cancelRun                                   *string
	headers, keys, origins, versions            *[]string
	publicMeta, toolResultParts, separateCancel *bool
	pageSize, maxSessions, maxTurns             *int64
	historyCache                                *int64
	users                                       *cli.UserFlags
}

// bind defines the program's flags.
func bind(p *cli.Program) *flags {
	f, fl := p.Flags, &flags{}
	p.Listen = f.String("listen", "127.0.0.1:8080", "address to serve the AAP API on")
	fl.upstream = f.String("upstream", "", "URL of the AG-UI agent (POST RunAgentInput); empty runs the built-in demo agent")
	fl.headers = f.List("upstream-header", "\n", "header sent to the agent, 'Name: value'")
	fl.keys = f.List("api-key", ",", "API key accepted from AAP clients; none means the API is open")
	fl.users = p.BindUsers("sessions")
	fl.origins = f.List("cors-origin", ",", "browser origin allowed to call the API directly, e.g. an AAP web client's page (* for any, never with credentials)")
	fl.publicMeta = f.Bool("public-meta", false, "serve GET /meta without an API key")
	fl.toolResultParts = f.Bool("tool-result-parts", false, "the agent speaks @ag-ui/core 1.0: send AAP tool results that hold images as content parts (a 0.0.x agent accepts only a string)")
	fl.cancelRun = f.String("cancel-run", "auto", "how a user message sent while interrupts are open reaches the agent: auto (one run with the cancellation, then a run of the message alone when the agent did not read it or refused the run), separate (the cancellation as a run of its own, then the message) or single (one run only)")
	fl.separateCancel = f.Bool("separate-cancel-run", false, "the same as --cancel-run separate (the older name)")
	fl.threadIDs = f.String("thread-id", "uuid", "the threadId of a session's runs: uuid (a UUID derived from the session id, which every framework accepts) or session (the session id itself, as earlier releases sent it)")
	fl.agentFile = f.String("agent-config", "", "JSON or YAML file describing the agent (name, title, version, description, options, tools, capabilities; a tool with permissions: none is one the agent runs on its own), or several agents (agents:, each with its upstream:; read again on SIGHUP)")
	p.Store = f.String("store", "sqlite:aap2agui.db", "session store: sqlite:<file>, postgres://user@host/db (replicas on several machines) or memory:")
	fl.basePath = f.String("base-path", "", "mount the API under this path, e.g. /v1")
	fl.versions = f.List("aap-version", ",", "AAP protocol version to serve, N or N=PATH (1, 2 or 3; PATH replaces --base-path for it); repeat for several, e.g. --aap-version 3 --aap-version 1=/legacy (default 3)")
	p.BindServing(8<<20, "largest request body, in bytes")
	p.BindStream()
	fl.pageSize = f.Int64("page-size", 50, "sessions per page of GET /sessions (1 to 1000)")
	fl.historyCache = f.Int64("history-cache", 64<<20, "bytes of session histories kept in memory between turns, so that a turn on a session whose last turn ran here reads none of its history from the store (0: none kept)")
	p.BindShutdown("turns")
	fl.maxSessions = f.Int64("max-sessions-per-key", 0, "sessions one API key may hold, across replicas (0: no limit); over it, 429")
	fl.maxTurns = f.Int64("max-turns-per-key", 0, "turns one API key may run at once, per process, and 4 times as many rejoins held open (0: no limit); over it, 429")
	p.BindRate("API key")
	return fl
}

func run(args []string) error {
	p := cli.NewProgram("aap2agui", "AAP2AGUI")
	fl := bind(p)
	if done, err := p.Parse(args); done {
		return err
	}
	if *fl.pageSize < 1 || *fl.pageSize > maxPageSize {
		return fmt.Errorf("--page-size %d: want a number of sessions from 1 to %d", *fl.pageSize, maxPageSize)
	}
	if *fl.historyCache < 0 {
		return fmt.Errorf("--history-cache %d: want a number of bytes, 0 for none", *fl.historyCache)
	}
	if *p.Shared.CopyFrom != "" {
		return cli.CopyStore(p.Log, *p.Shared.CopyFrom, *p.Store)
	}
	cfg, err := fl.config(p)
	if err != nil {
		return err
	}
	if cfg.Upstream == "" && len(cfg.Agents) == 0 {
		addr, err := p.Demo("AG-UI demo agent", demo.AGUIAgent{})
		if err != nil {
			return err
		}
		cfg.Upstream = "http://" + addr + "/"
		if cfg.Agent.Name == "" {
			cfg.Agent = demoAgent()
		}
		p.Log.Info().Str("upstream", cfg.Upstream).Msg("no --upstream: running the built-in AG-UI demo agent")
	}
	var openWarning string
	if len(cfg.APIKeys) == 0 && !fl.users.Tokens() {
		openWarning = "no --api-key: the AAP API is open to anyone who can reach it"
	}
	return p.Run(func(rt cli.Runtime) (cli.Bridge, error) {
		cfg.Store, cfg.TracerProvider, cfg.SeparateMetrics = rt.Store, rt.TracerProvider, rt.SeparateMetrics
		srv, err := aap2agui.New(cfg)
		if err == nil && len(cfg.Agents) > 0 {
			p.Reload = func() error { return reloadAgents(p.Log, srv, *fl.agentFile) }
		}
		return srv, err
	}, openWarning, func(a net.Addr) {
		ev := p.Log.Info().Str("listen", a.String())
		if len(cfg.Agents) == 0 {
			ev = ev.Str("upstream", redact.DSN(cfg.Upstream)).Strs("upstream_headers", headerNames(cfg.UpstreamHeader)).Str("agent", cfg.Agent.Name)
			warnNoCapabilities(p.Log, cfg.Agent)
		} else {
			ev = ev.Strs("agents", logAgents(p.Log, cfg.Agents))
		}
		ev.Str("store", redact.DSN(*p.Store)).Str("base_path", cfg.BasePath).Strs("aap_versions", servedVersions(*fl.versions)).Strs("cors_origins", cfg.CORSOrigins).Msg("aap2agui serving")
	})
}

// logAgents logs each agent served, with its upstream (never its password
// or its headers' values), and returns their names. An agent that
// declares no capabilities is warned of.
func logAgents(log zerolog.Logger, agents []aap2agui.AgentConfig) []string {
	names := make([]string, len(agents))
	for i, ag := range agents {
		names[i] = ag.Agent.Name
		log.Info().Str("agent", ag.Agent.Name).Str("upstream", redact.DSN(ag.Upstream)).Strs("upstream_headers", headerNames(ag.UpstreamHeader)).Msg("agent served")
		warnNoCapabilities(log, ag.Agent)
	}
	return names
}

// warnNoCapabilities warns of an agent described without capabilities:
// AAP clients that follow GET /meta then use no stream mode and no
// history with it, which is seldom what was meant.
func warnNoCapabilities(log zerolog.Logger, a aap.AgentInfo) {
	if a.Name != "" && a.Capabilities == nil {
		log.Warn().Str("agent", a.Name).Msg("the agent's description declares no capabilities: AAP clients that follow GET /meta will use no stream mode and no history with it (declare capabilities: in --agent-config)")
	}
}

// reloadAgents reads the several-agent --agent-config at path again and
// makes its agents the ones srv serves (on SIGHUP). A file with an error,
// or one that no longer lists agents, changes nothing.
func reloadAgents(log zerolog.Logger, srv *aap2agui.Server, path string) error {
	var cfg aap2agui.Config
	if err := loadAgents(&cfg, path); err != nil {
		return err
	}
	if len(cfg.Agents) == 0 {
		return fmt.Errorf("%s no longer lists agents: the one-agent form takes a restart", path)
	}
	if err := srv.SetAgents(cfg.Agents); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	log.Info().Strs("agents", logAgents(log, cfg.Agents)).Msg("SIGHUP: agents reloaded from --agent-config")
	return nil
}

// headerNames are the names of the headers sent upstream, for the log:
// never their values, which may be secrets.
func headerNames(h http.Header) []string {
	names := make([]string, 0, len(h))
	for name := range h {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// config turns the flags into the bridge's Config (all but what Run
// gives it) and checks them.
func (fl *flags) config(p *cli.Program) (aap2agui.Config, error) {
	s := &p.Shared
	cfg := aap2agui.Config{
		Upstream: *fl.upstream, Serving: p.ServingOptions(*fl.keys, *fl.origins, fl.users.Options()),
		PublicMeta: *fl.publicMeta, BasePath: *fl.basePath,
		MaxBody:      *s.MaxBody,
		PageSize:     int(*fl.pageSize),
		HistoryCache: cmp.Or(*fl.historyCache, -1),
	}
	var err error
	if cfg.Limits, err = limits(*fl.maxSessions, *fl.maxTurns, *s.RateLimit, *s.RateBurst); err != nil {
		return cfg, err
	}
	if cfg.CancelRun, err = aap2agui.ParseCancelRun(*fl.cancelRun); err != nil {
		return cfg, fmt.Errorf("--cancel-run: %w", err)
	}
	if *fl.separateCancel && cfg.CancelRun == aap2agui.CancelRunSingle {
		return cfg, errors.New("--separate-cancel-run contradicts --cancel-run single")
	}
	if *fl.separateCancel {
		cfg.CancelRun = aap2agui.CancelRunSeparate
	}
	cfg.ToolResultParts = *fl.toolResultParts
	if cfg.ThreadIDs, err = aap2agui.ParseThreadIDs(*fl.threadIDs); err != nil {
		return cfg, fmt.Errorf("--thread-id: %w", err)
	}
	for _, v := range *fl.versions {
		m, err := aap2agui.ParseMount(v)
		if err != nil {
			return cfg, fmt.Errorf("--aap-version: %w", err)
		}
		cfg.Versions = append(cfg.Versions, m)
	}
	if err := cli.CheckHeaderValues("--api-key", cfg.APIKeys...); err != nil {
		return cfg, err
	}
	if cfg.AllowedHosts, err = p.CheckExposure(len(cfg.APIKeys) == 0 && !fl.users.Tokens()); err != nil {
		return cfg, err
	}
	for _, h := range *fl.headers {
		name, value, err := cli.ParseHeader(h)
		if err != nil {
			return cfg, fmt.Errorf("--upstream-header: %w", err)
		}
		if cfg.UpstreamHeader == nil {
			cfg.UpstreamHeader = http.Header{}
		}
		cfg.UpstreamHeader.Add(name, value)
	}
	if *fl.agentFile != "" {
		if err := loadAgents(&cfg, *fl.agentFile); err != nil {
			return cfg, err
		}
	}
	return cfg, nil
}

// loadAgents reads --agent-config, JSON or YAML, into cfg: the description
// of the one agent of --upstream, or (an agents: list) every agent with
// its own upstream, in which case --upstream and --upstream-header have
// no place.
func loadAgents(cfg *aap2agui.Config, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if !agentconfig.IsAgentsConfig(js) {
		d, err := agentconfig.LoadAgentDescription(js)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		cfg.Agent, cfg.OwnTools = d.Agent, d.OwnTools
		return nil
	}
	if cfg.Upstream != "" || len(cfg.UpstreamHeader) > 0 {
		return fmt.Errorf("%s lists agents, each with its upstream: leave out --upstream and --upstream-header", path)
	}
	if cfg.Agents, err = agentconfig.LoadAgentsConfig(js, os.Getenv); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
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
