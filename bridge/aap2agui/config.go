package aap2agui

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/internal/turns"
	"github.com/aapagui/aapagui/bridge/serving"
	"github.com/aapagui/aapagui/internal/header"
	"github.com/aapagui/aapagui/internal/redact"
	"github.com/aapagui/aapagui/store"
)

// Serving are the options both bridges serve with (package serving says
// what each field and its zero value mean: go doc
// github.com/aapagui/aapagui/bridge/serving Serving); DefaultServing
// holds the values the zero fields stand for.
type Serving = serving.Serving

// DefaultServing is Serving with the values its zero fields stand for,
// where a zero stands for one (the timeouts and sizes, OnClientGone); the
// fields it leaves zero mean none or depend on others (MaxTurnDuration,
// MaxRenewalLag), and the client, keys, users and the rest have no
// default.
func DefaultServing() Serving { return Serving(turns.Defaults()) }

// serving is the Config's Serving as the turns both bridges share see it:
// the same memory, the same fields.
func (c *Config) serving() *turns.Serving { return (*turns.Serving)(&c.Serving) }

// ClientGone says what becomes of a turn whose client left
// (Serving.OnClientGone): ClientGoneCancel (the default) or
// ClientGoneFinish.
type ClientGone = serving.ClientGone

// What becomes of a turn whose client left.
const (
	ClientGoneCancel = serving.ClientGoneCancel // the upstream is cancelled; what came is stored
	ClientGoneFinish = serving.ClientGoneFinish // the turn runs to its end and is stored whole
)

// Config configures a Server. Every field's zero value is usable except
// Store, and Upstream or Agents.
type Config struct {
	// Serving are the options both bridges share: the upstream's client
	// and time bounds, keys, users, CORS, logging and telemetry (each
	// field and its zero value: go doc Serving).
	Serving

	// Agents are the agents the Server serves, each behind its own
	// upstream: GET /meta lists them and every session goes to the one
	// it names. Without Agents the Server serves the one agent that
	// Upstream, UpstreamHeader, Agent and OwnTools describe (set either
	// Agents or those). An agent's zero timeouts and modes are the
	// Server's (HeaderTimeout, IdleTimeout, ThreadIDs, CancelRun,
	// ToolResultParts).
	Agents []AgentConfig
	// Upstream is the URL of the AG-UI agent (POST RunAgentInput):
	// required without Agents.
	Upstream string
	// UpstreamHeader is sent with every upstream request (e.g. the agent's
	// own API key). The caller's Authorization is never forwarded.
	UpstreamHeader http.Header

	// Agent describes the agent in GET /meta. Zero value: see DefaultAgent.
	// Its server tools are those the agent runs as each session enables
	// and trusts them (see docs/USING.md, "Server tools and AAP
	// permissions": the agent reads forwardedProps.aap.agent and raises a
	// tool_call interrupt before running an untrusted one).
	Agent aap.AgentInfo
	// OwnTools are server tools the agent runs on its own, whatever a
	// session enables or trusts: an agent that does not read
	// forwardedProps.aap.agent (one built with @ag-ui/mastra, for
	// instance). They are not offered in GET /meta, a session cannot
	// enable them, and their calls are streamed as AAP's unexposed
	// server-side tools. --agent-config declares them with
	// "permissions: none".
	OwnTools []aap.ToolSpec
	// ThreadIDs is the threadId the session's runs carry: ThreadIDsUUID
	// (the zero value) a UUID derived from the session id (see ThreadID),
	// which every framework accepts; ThreadIDsSession the session id
	// itself.
	ThreadIDs ThreadIDs
	// CancelRun says how a turn goes whose user message leaves interrupts
	// open (cancelled resume entries beside the message): CancelRunAuto
	// (the zero value) one run, followed in the same turn by a run of the
	// message alone when the agent did not read it or refused the run
	// before any output; CancelRunSeparate the
	// cancellation as a run of its own, then the message; CancelRunSingle
	// one run only. See CancelRun.
	CancelRun CancelRun
	// ToolResultParts says the agent speaks @ag-ui/core 1.0: an AAP tool
	// result holding an image block reaches it as a tool message whose
	// content is an array of content parts (translate.ToolContentParts),
	// which a 0.0.x agent would refuse. Off: the JSON of the block list as
	// a string, as before (docs/MAPPING.md, "AG-UI 1.0").
	ToolResultParts bool

	// PublicMeta serves GET /meta without a key.
	PublicMeta bool
	// CheckpointInterval is how often the message the agent is still
	// streaming is stored, so that a crash loses at most this much of it;
	// zero means 1 s, negative means never (only complete messages are
	// stored).
	CheckpointInterval time.Duration
	// MaxCheckpoints caps the checkpoints a second of all the turns
	// streaming at once: with more turns than that, each turn's interval
	// grows (turns ÷ MaxCheckpoints seconds), so that thousands of open
	// streams (clients that read slowly, or not at all) do not keep the
	// store busy for everyone else; zero means 500.
	MaxCheckpoints int
	// HistoryCache bounds, in bytes (about what their messages hold), the
	// session histories the Server keeps in memory between turns, the
	// least recently used dropped first: a turn on a session whose last
	// turn ran here reads none of its history from the store, only the
	// session's history version (store.Session.HistoryVersion), which
	// tells whether another replica wrote since. Zero means 64 MiB;
	// negative, none kept.
	HistoryCache int64
	// Limits are the optional per-key limits (sessions, concurrent turns,
	// requests per second); the zero value limits nothing.
	Limits Limits

	// Store keeps sessions and the runs' logs. Required: every store the
	// store package opens is one.
	Store store.Sessions
	// BasePath mounts the AAP API under a prefix, e.g. "/v1". Only the
	// API moves: /healthz, /readyz and /metrics (unless SeparateMetrics)
	// stay at the handler's root, so a program that mounts the handler
	// under the prefix routes those paths to it as well if it wants them
	// (see Example_basePath).
	BasePath string
	// Versions are the AAP protocol versions served, each at its own
	// path; all of them share Store. Empty: version 3 at BasePath.
	Versions []Mount
	// MaxBody caps request bodies in bytes; zero means 8 MiB.
	MaxBody int64
	// PageSize is the number of sessions per GET /sessions page; zero
	// means 50.
	PageSize int
}

// Mount serves one AAP protocol version at a path.
type Mount struct {
	// Version is 1, 2 or 3 (see the aap package).
	Version int
	// Path is where the version's endpoints are; empty means
	// Config.BasePath.
	Path string
}

// ParseMount parses the value of --aap-version: "N" (version N at the
// base path) or "N=PATH" (at PATH, which replaces the base path for it).
func ParseMount(s string) (Mount, error) {
	num, path, hasPath := strings.Cut(strings.TrimSpace(s), "=")
	var m Mount
	switch num {
	case "1", "2", "3":
		m.Version = int(num[0] - '0')
	default:
		return m, fmt.Errorf("AAP version %q: want 1, 2 or 3, optionally with =PATH", num)
	}
	if hasPath {
		if !strings.HasPrefix(path, "/") {
			return m, fmt.Errorf("AAP version %s: path %q must start with /", num, path)
		}
		m.Path = path
	}
	return m, nil
}

// mounts checks c.Versions and returns them with their paths resolved:
// each version at most once, each at a path of its own.
func (c *Config) mounts() ([]Mount, error) {
	ms := c.Versions
	if len(ms) == 0 {
		ms = []Mount{{Version: aap.Version3}}
	}
	out := make([]Mount, 0, len(ms))
	byVersion, byPath := map[int]bool{}, map[string]int{}
	for _, m := range ms {
		if !aap.KnownVersion(m.Version) {
			return nil, fmt.Errorf("aap2agui: AAP version %d: want 1, 2 or 3", m.Version)
		}
		if m.Path == "" {
			m.Path = c.BasePath
		}
		if m.Path != "" && !strings.HasPrefix(m.Path, "/") {
			return nil, fmt.Errorf("aap2agui: AAP version %d: path %q must start with /", m.Version, m.Path)
		}
		m.Path = "/" + strings.Trim(m.Path, "/")
		if byVersion[m.Version] {
			return nil, fmt.Errorf("aap2agui: AAP version %d is served twice", m.Version)
		}
		if other, ok := byPath[m.Path]; ok {
			return nil, fmt.Errorf("aap2agui: AAP versions %d and %d are both at %s: give one a path of its own (their GET /meta and GET /sessions differ)", other, m.Version, m.Path)
		}
		byVersion[m.Version], byPath[m.Path] = true, m.Version
		out = append(out, m)
	}
	return out, nil
}

// DefaultAgent is the agent description used when Config.Agent has no name:
// an agent named "agent" with every capability the bridge serves.
func DefaultAgent() aap.AgentInfo {
	e := &aap.Empty{}
	return aap.AgentInfo{
		Name:        "agent",
		Title:       "AG-UI agent",
		Version:     "1.0.0",
		Description: "An AG-UI agent served over AAP by aap2agui.",
		Capabilities: &aap.Capabilities{
			History:     &aap.HistoryCapabilities{Compacted: e, Full: e},
			Stream:      &aap.StreamCapabilities{Delta: e, Message: e, None: e},
			Application: &aap.ApplicationCapabilities{Tools: e},
			Image:       &aap.ImageCapabilities{HTTP: e, Data: e},
		},
	}
}

func (c *Config) setDefaults() error {
	if c.Store == nil {
		return errors.New("aap2agui: Config.Store is required")
	}
	if err := c.serving().SetDefaults("aap2agui"); err != nil {
		return err
	}
	var err error
	if c.ThreadIDs, err = ParseThreadIDs(string(c.ThreadIDs)); err != nil {
		return fmt.Errorf("aap2agui: Config.ThreadIDs: %w", err)
	}
	if c.CancelRun, err = ParseCancelRun(string(c.CancelRun)); err != nil {
		return fmt.Errorf("aap2agui: Config.CancelRun: %w", err)
	}
	if c.MaxCheckpoints == 0 {
		c.MaxCheckpoints = 500
	}
	if c.HistoryCache == 0 {
		c.HistoryCache = 64 << 20
	}
	if c.CheckpointInterval == 0 {
		c.CheckpointInterval = time.Second
	}
	if c.MaxBody == 0 {
		c.MaxBody = 8 << 20
	}
	switch {
	case c.PageSize == 0:
		c.PageSize = 50
	case c.PageSize < 0:
		return fmt.Errorf("aap2agui: Config.PageSize %d is negative", c.PageSize)
	}
	return c.resolveAgents()
}

// resolveAgents makes c.Agents the agents the Server serves, each checked
// and with the Server's defaults filled in: without Agents, the one agent
// of the one-agent fields.
func (c *Config) resolveAgents() error {
	one := len(c.Agents) == 0
	if one {
		c.Agents = []AgentConfig{{Agent: c.Agent, OwnTools: c.OwnTools, Upstream: c.Upstream, UpstreamHeader: c.UpstreamHeader,
			ToolResultParts: c.ToolResultParts}}
	} else if c.Upstream != "" || c.UpstreamHeader != nil || c.Agent.Name != "" || len(c.OwnTools) > 0 {
		return errOneAgentFields
	}
	seen := map[string]bool{}
	for i := range c.Agents {
		a := &c.Agents[i]
		if err := c.resolveAgent(a, one); err != nil {
			if one {
				return fmt.Errorf("aap2agui: %w", err)
			}
			return fmt.Errorf("aap2agui: Config.Agents[%d] (%s): %w", i, a.Agent.Name, err)
		}
		if seen[a.Agent.Name] {
			return fmt.Errorf("aap2agui: Config.Agents[%d]: the name %q is another agent's too", i, a.Agent.Name)
		}
		seen[a.Agent.Name] = true
	}
	return nil
}

// resolveAgent checks one agent and fills in what it leaves to the
// Server. one: it is the agent of the one-agent fields, which may leave
// its description out (DefaultAgent) and whose errors name those fields.
func (c *Config) resolveAgent(a *AgentConfig, one bool) error {
	u, err := url.Parse(a.Upstream)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("Config.Upstream %q is not an http(s) URL", redact.URL(a.Upstream))
	}
	if err := header.Check(a.UpstreamHeader); err != nil {
		return fmt.Errorf("Config.UpstreamHeader: %w", err)
	}
	if a.Agent.Name == "" {
		if !one {
			return errors.New("the agent needs a name")
		}
		d := DefaultAgent()
		d.Tools, d.Options = a.Agent.Tools, a.Agent.Options
		if a.Agent.Capabilities != nil {
			d.Capabilities = a.Agent.Capabilities
		}
		a.Agent = d
	}
	if a.Agent.Version == "" {
		a.Agent.Version = "1.0.0"
	}
	if err := checkTools(a); err != nil {
		return err
	}
	for i := range a.Agent.Options {
		if err := a.Agent.Options[i].Validate(); err != nil {
			return fmt.Errorf("agent option %d: %w", i, err)
		}
	}
	return c.agentDefaults(a)
}

// checkTools refuses an own tool without a name, or a tool declared twice.
func checkTools(a *AgentConfig) error {
	seen := map[string]bool{}
	for _, t := range a.Agent.Tools {
		seen[t.Name] = true
	}
	for i, t := range a.OwnTools {
		if t.Name == "" {
			return fmt.Errorf("Config.OwnTools[%d]: a tool needs a name", i)
		}
		if seen[t.Name] {
			return fmt.Errorf("Config.OwnTools[%d]: tool %q is declared twice", i, t.Name)
		}
		seen[t.Name] = true
	}
	return nil
}

// agentDefaults fills in the timeouts and modes an agent leaves to the
// Server.
func (c *Config) agentDefaults(a *AgentConfig) error {
	var err error
	if a.ThreadIDs == "" {
		a.ThreadIDs = c.ThreadIDs
	}
	if a.ThreadIDs, err = ParseThreadIDs(string(a.ThreadIDs)); err != nil {
		return fmt.Errorf("Config.ThreadIDs: %w", err)
	}
	if a.CancelRun == "" {
		a.CancelRun = c.CancelRun
	}
	if a.CancelRun, err = ParseCancelRun(string(a.CancelRun)); err != nil {
		return fmt.Errorf("Config.CancelRun: %w", err)
	}
	if a.HeaderTimeout == 0 {
		a.HeaderTimeout = c.HeaderTimeout
	}
	if a.IdleTimeout == 0 {
		a.IdleTimeout = c.IdleTimeout
	}
	a.ToolResultParts = a.ToolResultParts || c.ToolResultParts
	return nil
}
