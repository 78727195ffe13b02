package agui2aap

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/trace"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/internal/web"
	"github.com/aapagui/aapagui/internal/userid"
	"github.com/aapagui/aapagui/store"
)

// Policy decides what happens to untrusted server tool calls.
type Policy string

// The permission policies.
const (
	// PolicyInterrupt ends the run with an AG-UI interrupt per call; the
	// client answers with resume (the default).
	PolicyInterrupt Policy = "interrupt"
	// PolicyGrant grants every call, for clients that cannot resume.
	PolicyGrant Policy = "grant"
	// PolicyDeny denies every call.
	PolicyDeny Policy = "deny"
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

// Config configures a Server. Every field's zero value is usable except
// Upstream and Store.
type Config struct {
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
	// HTTPClient calls the AAP server. nil: pooled, no overall timeout.
	HTTPClient *http.Client
	// ConnectTimeout bounds the wait for the AAP server's response headers
	// to a turn; zero means 60 s. Exceeding it is a 504.
	ConnectTimeout time.Duration
	// IdleTimeout ends a run whose upstream turn stream sends nothing for
	// this long (RUN_ERROR UPSTREAM_IDLE_TIMEOUT, partial output kept);
	// zero means 5 min, negative means none. Only events count: SSE
	// comments (keep-alives) do not keep a run alive.
	IdleTimeout time.Duration
	// MaxTurnDuration ends a run that runs longer (RUN_ERROR
	// TURN_TOO_LONG, partial output kept), however busy its upstream is;
	// zero or negative means no limit.
	MaxTurnDuration time.Duration
	// StallTimeout ends a run whose client stops reading: a write to the
	// client that makes no progress for this long ends the run as the
	// client leaving does (upstream cancelled, the thread saved and
	// freed); zero means 30 s, negative means never.
	StallTimeout time.Duration

	// APIKeys are the bearer keys callers must present. None: open.
	APIKeys []string
	// Users names the person behind each request, beside the key: a
	// header the trusted caller sets, or a signed token (see the README's
	// "One key, many users"). Then threads, their limits and their
	// locks are scoped to (key, user), and a request that names no valid
	// user is refused. The zero value scopes to the key alone.
	Users userid.Options
	// CORSOrigins are the browser origins allowed to call the bridge
	// directly ("*" for any). None: no CORS headers.
	CORSOrigins []string
	// AllowedHosts are the Host names (or addresses) served besides the
	// loopback names when APIKeys is empty, against DNS rebinding; "*"
	// serves any. With API keys every Host is served.
	AllowedHosts []string
	// KeepAlive is how often an idle SSE stream gets a comment line, so
	// that proxies and browsers keep it open; zero means 15 s, negative
	// means never.
	KeepAlive time.Duration
	// BodyTimeout bounds the time to receive a request body; zero means
	// 30 s, negative means no limit.
	BodyTimeout time.Duration
	// Limits are the optional per-key limits (threads, concurrent runs,
	// requests per second); the zero value limits nothing.
	Limits Limits

	// Store keeps threads. Required.
	Store store.ThreadStore
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
	// MaxEventSize caps one upstream SSE event; zero means 16 MiB.
	MaxEventSize int
	// MetaTTL is how long the upstream's /meta is cached; zero means 30 s.
	MetaTTL time.Duration
	// MaxFollowUps bounds the turns a run makes on its own (granting or
	// denying by policy); zero means 8.
	MaxFollowUps int
	// Logger receives one line per request and what is worth a look.
	Logger zerolog.Logger

	// SeparateMetrics leaves GET /metrics off the AG-UI handler: the
	// program serves Server.MetricsHandler on a listener of its own.
	// Otherwise /metrics is served beside the endpoints, behind the same
	// API key.
	SeparateMetrics bool
	// TracerProvider traces requests, upstream calls and store operations
	// (OpenTelemetry); nil means no tracing.
	TracerProvider trace.TracerProvider
}

func (c *Config) setDefaults() error {
	if c.Store == nil {
		return errors.New("agui2aap: Config.Store is required")
	}
	u, err := url.Parse(c.Upstream)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("agui2aap: Config.Upstream %q is not an http(s) URL", c.Upstream)
	}
	if err := web.CheckOrigins(c.CORSOrigins); err != nil {
		return fmt.Errorf("agui2aap: %w", err)
	}
	switch c.Policy {
	case "":
		c.Policy = PolicyInterrupt
	case PolicyInterrupt, PolicyGrant, PolicyDeny:
	default:
		return fmt.Errorf("agui2aap: unknown permission policy %q (want interrupt, grant or deny)", c.Policy)
	}
	if c.ConnectTimeout == 0 {
		c.ConnectTimeout = 60 * time.Second
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = 5 * time.Minute
	}
	if c.StallTimeout == 0 {
		c.StallTimeout = 30 * time.Second
	}
	if c.KeepAlive == 0 {
		c.KeepAlive = 15 * time.Second
	}
	if c.BodyTimeout == 0 {
		c.BodyTimeout = 30 * time.Second
	}
	if c.HTTPClient == nil {
		c.HTTPClient = web.NewUpstreamClient()
	}
	if c.MaxBody == 0 {
		c.MaxBody = 16 << 20
	}
	if c.MetaTTL == 0 {
		c.MetaTTL = 30 * time.Second
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
