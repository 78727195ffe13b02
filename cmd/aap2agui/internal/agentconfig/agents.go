package agentconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/internal/header"
	"github.com/aapagui/aapagui/internal/redact"
)

// IsAgentsConfig reports whether data (JSON) is the several-agent form of
// --agent-config, an object with an "agents" list, rather than the
// description of one agent.
func IsAgentsConfig(data []byte) bool {
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil {
		return false
	}
	_, ok := top["agents"]
	return ok
}

// agentsFile is the several-agent form of --agent-config.
type agentsFile struct {
	Upstreams map[string]json.RawMessage `json:"upstreams"`
	Agents    []json.RawMessage          `json:"agents"`
}

// upstreamFile is an upstream: block, in an agent or under upstreams:.
// Its connectTimeout is the agent's HeaderTimeout (--upstream-header-timeout),
// under the key agents files have always used.
type upstreamFile struct {
	URL             string            `json:"url"`
	Headers         map[string]string `json:"headers"`
	HeaderTimeout   string            `json:"connectTimeout"`
	IdleTimeout     string            `json:"idleTimeout"`
	ThreadIDs       string            `json:"threadIds"`
	CancelRun       string            `json:"cancelRun"`
	ToolResultParts bool              `json:"toolResultParts"`
}

// AgentNamePlaceholder in an upstream URL stands for the name of the agent
// that uses it: one upstream serving several agents at one base URL (a
// CopilotKit runtime's /agent/<name>/run) is then written once.
const AgentNamePlaceholder = "{agent}"

// envRef is a header value's reference to an environment variable.
var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// LoadAgentsConfig reads the several-agent form of --agent-config (JSON;
// the program converts YAML first): an "agents" list whose entries are
// agent descriptions as LoadAgentDescription reads them, each with an
// "upstream" that is either a block (url, headers, connectTimeout,
// idleTimeout, threadIds, cancelRun, toolResultParts) or the name of a
// block under "upstreams". A header value's ${NAME} is the environment
// variable NAME (getenv), which must be set: secrets stay out of the
// file. An error names the agent and the key; no value of a header is
// ever shown.
func LoadAgentsConfig(data []byte, getenv func(string) string) ([]aap2agui.AgentConfig, error) {
	var f agentsFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("agents config: %w", err)
	}
	if len(f.Agents) == 0 {
		return nil, fmt.Errorf("agents: at least one agent is needed")
	}
	out := make([]aap2agui.AgentConfig, 0, len(f.Agents))
	for i, raw := range f.Agents {
		a, err := loadAgentEntry(raw, f.Upstreams, getenv)
		if err != nil {
			return nil, fmt.Errorf("agents[%d]%s: %w", i, agentLabel(raw), err)
		}
		if slices.ContainsFunc(out, func(o aap2agui.AgentConfig) bool { return o.Agent.Name == a.Agent.Name }) {
			return nil, fmt.Errorf("agents[%d] (%s): name: another agent has this name", i, a.Agent.Name)
		}
		out = append(out, a)
	}
	return out, nil
}

// agentLabel names an entry in an error: " (name)" when it has one.
func agentLabel(raw json.RawMessage) string {
	var w struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(raw, &w) != nil || w.Name == "" {
		return ""
	}
	return " (" + w.Name + ")"
}

// loadAgentEntry reads one entry of agents: its description and its
// upstream.
func loadAgentEntry(raw json.RawMessage, upstreams map[string]json.RawMessage, getenv func(string) string) (aap2agui.AgentConfig, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return aap2agui.AgentConfig{}, fmt.Errorf("want an object (an agent description with an upstream)")
	}
	up, ok := fields["upstream"]
	if !ok {
		return aap2agui.AgentConfig{}, fmt.Errorf("upstream: missing (a block with url, or the name of one under upstreams)")
	}
	delete(fields, "upstream")
	desc, err := json.Marshal(fields)
	if err != nil {
		return aap2agui.AgentConfig{}, err
	}
	d, err := LoadAgentDescription(desc)
	if err != nil {
		return aap2agui.AgentConfig{}, err
	}
	if d.Agent.Name == "" {
		return aap2agui.AgentConfig{}, fmt.Errorf("name: missing")
	}
	a := aap2agui.AgentConfig{Agent: d.Agent, OwnTools: d.OwnTools}
	if err := readUpstream(&a, up, upstreams, getenv); err != nil {
		return aap2agui.AgentConfig{}, err
	}
	return a, nil
}

// readUpstream fills a's upstream from an agent's upstream: value.
func readUpstream(a *aap2agui.AgentConfig, raw json.RawMessage, upstreams map[string]json.RawMessage, getenv func(string) string) error {
	key := "upstream"
	var name string
	if json.Unmarshal(raw, &name) == nil {
		block, ok := upstreams[name]
		if !ok {
			return fmt.Errorf("upstream: %q is not a name under upstreams (%s)", name, strings.Join(slices.Sorted(maps.Keys(upstreams)), ", "))
		}
		raw, key = block, "upstreams."+name
	}
	var u upstreamFile
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&u); err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	if err := applyUpstream(a, u, getenv); err != nil {
		return fmt.Errorf("%s.%w", key, err)
	}
	return nil
}

// applyUpstream checks an upstream block and sets what it says; an error
// starts with the key it is about.
func applyUpstream(a *aap2agui.AgentConfig, u upstreamFile, getenv func(string) string) error {
	target := strings.ReplaceAll(u.URL, AgentNamePlaceholder, url.PathEscape(a.Agent.Name))
	if p, err := url.Parse(target); u.URL == "" || err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return fmt.Errorf("url: want an absolute http(s) URL (%s stands for the agent's name), got %q", AgentNamePlaceholder, redact.URL(u.URL))
	}
	a.Upstream = target
	for name, v := range u.Headers {
		value, err := expandEnv(v, getenv)
		if err != nil {
			return fmt.Errorf("headers.%s: %w", name, err)
		}
		if a.UpstreamHeader == nil {
			a.UpstreamHeader = http.Header{}
		}
		a.UpstreamHeader.Add(name, value)
	}
	if err := header.Check(a.UpstreamHeader); err != nil {
		return fmt.Errorf("headers: %w", err)
	}
	for _, d := range []struct {
		key string
		s   string
		to  *time.Duration
	}{{"connectTimeout", u.HeaderTimeout, &a.HeaderTimeout}, {"idleTimeout", u.IdleTimeout, &a.IdleTimeout}} {
		if d.s == "" {
			continue
		}
		v, err := time.ParseDuration(d.s)
		if err != nil || v <= 0 {
			return fmt.Errorf("%s: want a positive duration such as 30s, got %q", d.key, d.s)
		}
		*d.to = v
	}
	if u.ThreadIDs != "" {
		ids, err := aap2agui.ParseThreadIDs(u.ThreadIDs)
		if err != nil {
			return fmt.Errorf("threadIds: %w", err)
		}
		a.ThreadIDs = ids
	}
	if u.CancelRun != "" {
		mode, err := aap2agui.ParseCancelRun(u.CancelRun)
		if err != nil {
			return fmt.Errorf("cancelRun: %w", err)
		}
		a.CancelRun = mode
	}
	a.ToolResultParts = u.ToolResultParts
	return nil
}

// expandEnv replaces each ${NAME} of v by the environment variable NAME,
// which must be set and not empty. Neither v nor the value is shown in an
// error.
func expandEnv(v string, getenv func(string) string) (string, error) {
	var missing string
	out := envRef.ReplaceAllStringFunc(v, func(ref string) string {
		name := ref[2 : len(ref)-1]
		val := getenv(name)
		if val == "" && missing == "" {
			missing = name
		}
		return val
	})
	if missing != "" {
		return "", fmt.Errorf("the environment variable %s is not set", missing)
	}
	return out, nil
}
