package aap2agui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/internal/fault"
	"github.com/aapagui/aapagui/internal/header"
	"github.com/aapagui/aapagui/internal/redact"
	"github.com/aapagui/aapagui/internal/redirect"
	"github.com/aapagui/aapagui/store"
)

// agent is one agent the Server serves: what GET /meta says of it and how
// its runs reach it (its AgentConfig, the Server's defaults filled in).
// Every session belongs to one agent, by the name it was created with.
type agent struct {
	s       *Server
	cfg     AgentConfig
	secrets map[string]bool // names of secret options
}

func newAgent(s *Server, cfg AgentConfig) *agent {
	a := &agent{s: s, cfg: cfg, secrets: map[string]bool{}}
	for _, o := range cfg.Agent.Options {
		if o.Type == aap.OptionSecret {
			a.secrets[o.Name] = true
		}
	}
	return a
}

// name is the agent's name, which routes its sessions.
func (a *agent) name() string { return a.cfg.Agent.Name }

// errOneAgentFields reports a Config that sets both Agents and the fields
// of a single agent.
var errOneAgentFields = errors.New("aap2agui: Config.Agents and the one-agent fields (Upstream, UpstreamHeader, Agent, OwnTools) exclude each other")

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
	if a.ConnectTimeout == 0 {
		a.ConnectTimeout = c.ConnectTimeout
	}
	if a.IdleTimeout == 0 {
		a.IdleTimeout = c.IdleTimeout
	}
	a.ToolResultParts = a.ToolResultParts || c.ToolResultParts
	return nil
}

// roster is the agents a Server serves at one time: Server.SetAgents
// replaces it whole, and a turn keeps the agent it started with.
type roster struct {
	list   []*agent          // in the order of GET /meta
	byName map[string]*agent // the agents by name
	infos  []aap.AgentInfo   // what GET /meta says of them, in that order
}

// newRoster makes the roster of agents, each resolved (Config.resolveAgents).
func (s *Server) newRoster(agents []AgentConfig) *roster {
	r := &roster{byName: make(map[string]*agent, len(agents))}
	for _, ac := range agents {
		a := newAgent(s, ac)
		r.list = append(r.list, a)
		r.byName[a.name()] = a
		r.infos = append(r.infos, publicInfo(a.cfg.Agent))
	}
	return r
}

// publicInfo is what GET /meta says of an agent: its description, with
// the default of each secret option redacted as a session's value of it
// is ("***"; an empty default stays empty, there being none).
func publicInfo(info aap.AgentInfo) aap.AgentInfo {
	secretDefault := func(o aap.AgentOption) bool { return o.Type == aap.OptionSecret && o.Default != "" }
	if !slices.ContainsFunc(info.Options, secretDefault) {
		return info
	}
	info.Options = slices.Clone(info.Options)
	for i, o := range info.Options {
		if secretDefault(o) {
			info.Options[i].Default = redactedValue
		}
	}
	return info
}

// agentNamed returns the agent served under name, or nil.
func (s *Server) agentNamed(name string) *agent { return s.roster.Load().byName[name] }

// SetAgents replaces the agents the Server serves, as Config.Agents sets
// them at New (the Server's defaults filled in, each agent checked the
// same way; an error changes nothing). GET /meta, /readyz and new
// sessions see the new agents at once. A session keeps its agent by name:
// an agent that is still served under its name takes the session's next
// turn with its new upstream and description; a session whose agent is
// gone gets 404 unknown_agent for its turns, and is served again if an
// agent of that name comes back. A turn in flight ends with the agent it
// started with. The program reloads its --agent-config this way on
// SIGHUP.
func (s *Server) SetAgents(agents []AgentConfig) error {
	if len(agents) == 0 {
		return errors.New("aap2agui: SetAgents: at least one agent is needed")
	}
	c := s.cfg
	c.Upstream, c.UpstreamHeader, c.Agent, c.OwnTools = "", nil, aap.AgentInfo{}, nil
	c.Agents = slices.Clone(agents)
	if err := c.resolveAgents(); err != nil {
		return err
	}
	s.roster.Store(s.newRoster(c.Agents))
	return nil
}

// unknownAgent is the answer to a new session naming an agent not served.
func (s *Server) unknownAgent(name string) error {
	agents := s.roster.Load().list
	names := make([]string, len(agents))
	for i, a := range agents {
		names[i] = fmt.Sprintf("%q", a.name())
	}
	return invalid("unknown_agent", fmt.Sprintf("agent %q is not served here (agents: %s)", name, strings.Join(names, ", ")))
}

// agentOf returns the agent of a session: the one it was created with. A
// session whose agent is no longer configured cannot run turns.
func (r *roster) agentOf(sess *store.Session) (*agent, error) {
	if a := r.byName[sess.Agent.Name]; a != nil {
		return a, nil
	}
	return nil, fault.Fail(fault.KindNotFound, "unknown_agent", fmt.Sprintf("the session's agent %q is not served here any more", sess.Agent.Name))
}

// check validates server tool references, options and client tools
// against what the agent declares.
func (a *agent) check(cfg *aap.AgentConfig, clientTools []aap.ToolSpec) error {
	info := &a.cfg.Agent
	if cfg != nil {
		for i, t := range cfg.Tools {
			if a.ownTool(t.Name) {
				return fmt.Errorf("agent.tools[%d].name: agent %q runs %q on its own, whatever a session says (permissions: none in its configuration): it cannot be enabled or trusted", i, info.Name, t.Name)
			}
			if _, ok := info.Tool(t.Name); !ok {
				return fmt.Errorf("agent.tools[%d].name: %q is not a server tool of agent %q", i, t.Name, info.Name)
			}
		}
		for name, v := range cfg.Options {
			o, ok := info.Option(name)
			if !ok {
				return fmt.Errorf("agent.options.%s: agent %q has no such option", name, info.Name)
			}
			if o.Type == aap.OptionSelect && !slices.Contains(o.Options, v) {
				return fmt.Errorf("agent.options.%s: %q is not one of %q", name, v, o.Options)
			}
		}
	}
	seen := map[string]bool{}
	for i, t := range clientTools {
		if _, ok := info.Tool(t.Name); ok || a.ownTool(t.Name) {
			return fmt.Errorf("tools[%d].name: %q is already a server tool; tool names must be unique", i, t.Name)
		}
		if seen[t.Name] {
			return fmt.Errorf("tools[%d].name: %q is declared twice", i, t.Name)
		}
		seen[t.Name] = true
	}
	return nil
}

// ownTool reports whether name is a server tool the agent runs on its own
// (AgentConfig.OwnTools).
func (a *agent) ownTool(name string) bool {
	return slices.ContainsFunc(a.cfg.OwnTools, func(t aap.ToolSpec) bool { return t.Name == name })
}

// serverTool reports whether name is a server tool the agent declares.
func (a *agent) serverTool(name string) bool {
	_, ok := a.cfg.Agent.Tool(name)
	return ok
}

// threadID is the threadId of the session's runs under the agent's
// ThreadIDs.
func (a *agent) threadID(sessionID string) string {
	if a.cfg.ThreadIDs == ThreadIDsSession {
		return sessionID
	}
	return ThreadID(sessionID)
}

// readiness is the body of GET /readyz: ok, and to a caller that may know
// (turns.Base.MayKnow) the store and whether each agent's upstream answers.
// An upstream that does not answer leaves the server ready (its other
// agents, sessions and histories are served); the body says which.
type readiness struct {
	Status    string              `json:"status"`
	Store     string              `json:"store,omitempty"`
	Upstreams []upstreamReadiness `json:"upstreams,omitempty"`
}

// readyCheck is what a readiness check found (edge.Ready reuses it for
// edge.ReadyTTL): the store's failure, else each agent's upstream.
type readyCheck struct {
	store     error
	upstreams []upstreamReadiness
}

// checkReady pings the store and, when it answers, probes every agent's
// upstream.
func (s *Server) checkReady(ctx context.Context) readyCheck {
	if err := s.cfg.Store.Ping(ctx); err != nil {
		s.cfg.Logger.Warn().Err(err).Msg("store not ready")
		return readyCheck{store: err}
	}
	return readyCheck{upstreams: s.probeUpstreams(ctx)}
}

// upstreamReadiness is one agent's upstream in GET /readyz.
type upstreamReadiness struct {
	Agent  string `json:"agent"`
	Status string `json:"status"`          // ok or unreachable
	Error  string `json:"error,omitempty"` // why, without the URL
}

// probeUpstreams asks every agent's upstream at once whether it answers
// (probe), within ctx.
func (s *Server) probeUpstreams(ctx context.Context) []upstreamReadiness {
	agents := s.roster.Load().list
	out := make([]upstreamReadiness, len(agents))
	var wg sync.WaitGroup
	for i, a := range agents {
		wg.Go(func() {
			out[i] = upstreamReadiness{Agent: a.name(), Status: "ok"}
			if err := a.probe(ctx); err != nil {
				out[i].Status, out[i].Error = "unreachable", err.Error()
			}
		})
	}
	wg.Wait()
	return out
}

// probe reports whether the agent's upstream answers HTTP at all: a GET of
// its URL, without the agent's headers (no secret goes out for a probe),
// where any answer, whatever its status, counts; a redirect too, which is
// not followed.
func (a *agent) probe(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.cfg.Upstream, nil)
	if err != nil {
		return err
	}
	resp, err := a.s.cfg.HTTPClient.Do(req)
	var re *redirect.Error
	if errors.As(err, &re) {
		return nil
	}
	if err != nil {
		if ue, ok := err.(*url.Error); ok {
			return ue.Err // the URL may hold what the operator keeps private
		}
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	resp.Body.Close()
	return nil
}
