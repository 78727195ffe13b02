package agui2aap

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/internal/turns"
	"github.com/aapagui/aapagui/bridge/serving"
	"github.com/aapagui/aapagui/internal/redact"
	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/translate"
)

// Policy decides what happens to untrusted server tool calls.
type Policy = translate.Policy

// The permission policies.
const (
	// PolicyInterrupt ends the run with an AG-UI interrupt per call; the
	// client answers with resume (the default).
	PolicyInterrupt = translate.PolicyInterrupt
	// PolicyGrant grants every call, for clients that cannot resume.
	PolicyGrant = translate.PolicyGrant
	// PolicyDeny denies every call.
	PolicyDeny = translate.PolicyDeny
)

// ServerTool enables an AAP server tool. Agent "" applies to every agent
// that declares the tool.
type ServerTool struct {
	Agent string
	Name  string
	Trust bool
}

// ParseServerTools parses "name[:trust],agent/name[:trust],…".
func ParseServerTools(spec string) ([]ServerTool, error) {
	var out []ServerTool
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		var t ServerTool
		name, trust, hasTrust := strings.Cut(item, ":")
		if hasTrust {
			if trust != "trust" {
				return nil, fmt.Errorf("server tool %q: the suffix must be :trust", item)
			}
			t.Trust = true
		}
		if agent, tool, ok := strings.Cut(name, "/"); ok {
			t.Agent, name = agent, tool
		}
		if name == "" {
			return nil, fmt.Errorf("server tool %q: no tool name", item)
		}
		t.Name = name
		out = append(out, t)
	}
	return out, nil
}

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
// Upstream and Store.
type Config struct {
	// Serving are the options both bridges share: the upstream's client
	// and time bounds, keys, users, CORS, logging and telemetry (each
	// field and its zero value: go doc Serving).
	Serving

	// Upstream is the AAP server's base URL. Required.
	Upstream string
	// UpstreamVersion is the AAP protocol version the server speaks (1, 2
	// or 3); zero means the version its GET /meta names.
	UpstreamVersion int
	// UpstreamAPIKey is sent to the AAP server as a bearer key.
	UpstreamAPIKey string
	// ForwardAuth sends the caller's own Authorization header upstream
	// instead of UpstreamAPIKey.
	ForwardAuth bool
	// ForwardUser, when set, names the header in which every call of a
	// thread's run to the AAP server names the user the run is scoped to
	// (Serving.Users): an AAP server that takes its user from that header
	// (aap2agui --user-header) then keeps users apart as this bridge does.
	// The value is the bridge's own id of (key, user), a hash: the AAP
	// server never sees the user's id, and two keys' users of one name
	// stay apart. The AAP server trusts whoever calls it with a valid key
	// to name the user: use it only when the AAP server is reachable by
	// this bridge alone, or with a key only the bridge holds
	// (UpstreamAPIKey). Requires a user scope.
	ForwardUser string

	// Limits are the optional per-key limits (threads, concurrent runs,
	// requests per second); the zero value limits nothing.
	Limits Limits

	// Store keeps threads and the runs' logs. Required: every store the
	// store package opens is one.
	Store store.Threads
	// Policy is the permission policy for untrusted server tools; zero
	// means PolicyInterrupt.
	Policy Policy
	// SnapshotAfterRuns ends every run (before RUN_FINISHED) with a
	// MESSAGES_SNAPSHOT of the whole thread, for clients that want the
	// server's view to be authoritative.
	SnapshotAfterRuns bool
	// ServerTools are enabled on every new session of a matching agent.
	ServerTools []ServerTool

	// MaxBody caps RunAgentInput bodies; zero means 16 MiB.
	MaxBody int64
	// MaxFollowUps bounds the turns a run makes on its own (granting or
	// denying by policy); zero means 8.
	MaxFollowUps int
}

func (c *Config) setDefaults() error {
	if c.Store == nil {
		return errors.New("agui2aap: Config.Store is required")
	}
	u, err := url.Parse(c.Upstream)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("agui2aap: Config.Upstream %q is not an http(s) URL", redact.URL(c.Upstream))
	}
	if err := c.serving().SetDefaults("agui2aap"); err != nil {
		return err
	}
	if err := c.checkForwardUser(); err != nil {
		return err
	}
	switch c.Policy {
	case "":
		c.Policy = PolicyInterrupt
	case PolicyInterrupt, PolicyGrant, PolicyDeny:
	default:
		return fmt.Errorf("agui2aap: unknown permission policy %q (want interrupt, grant or deny)", c.Policy)
	}
	if c.MaxBody == 0 {
		c.MaxBody = 16 << 20
	}
	if c.MaxFollowUps == 0 {
		c.MaxFollowUps = 8
	}
	if c.UpstreamVersion != 0 && !aap.KnownVersion(c.UpstreamVersion) {
		return fmt.Errorf("agui2aap: Config.UpstreamVersion %d: want 1, 2 or 3 (or 0: the version GET /meta names)", c.UpstreamVersion)
	}
	return nil
}

// serverTools returns the configured tool refs for an agent, keeping only
// tools the agent declares.
func (c *Config) serverTools(info *aap.AgentInfo) []aap.ServerToolRef {
	var out []aap.ServerToolRef
	for _, t := range c.ServerTools {
		if t.Agent != "" && t.Agent != info.Name {
			continue
		}
		if _, ok := info.Tool(t.Name); ok {
			out = append(out, aap.ServerToolRef{Name: t.Name, Trust: t.Trust})
		}
	}
	return out
}

// checkForwardUser checks ForwardUser: a header name other than
// Authorization, and a user scope to forward.
func (c *Config) checkForwardUser() error {
	h := c.ForwardUser
	if h == "" {
		return nil
	}
	for _, r := range h {
		if !(r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return fmt.Errorf("agui2aap: Config.ForwardUser %q is not a header name", h)
		}
	}
	if strings.EqualFold(h, "Authorization") {
		return errors.New("agui2aap: Config.ForwardUser cannot be Authorization, which carries the key to the AAP server")
	}
	if c.Users.Header == "" && c.Users.JWTKeyFile == "" {
		return errors.New("agui2aap: Config.ForwardUser needs a user scope (Config.Users: a user header or user tokens) to forward")
	}
	return nil
}
