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
	"github.com/aapagui/aapagui/bridge/internal/turns"
	"github.com/aapagui/aapagui/internal/redact"
	"github.com/aapagui/aapagui/internal/userid"
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

// Serving are the options both bridges serve with: how they call their
// upstream and bound a turn (aap2agui) or a run (agui2aap), who may call
// them, and what they report. Each field's doc says what its zero value
// means; DefaultServing holds the values the zero fields stand for.
// aap2agui.Serving has the same fields: a program that fills one converts
// it to the other (aap2agui.Serving(s)).
type Serving struct {
	// HTTPClient calls the upstream. nil: a client with connection pooling
	// and no overall timeout (turns stream for as long as they take).
	// Redirects are never followed (the place one points to would get the
	// turn and the upstream's headers or key): a redirect fails the call
	// with 502 upstream_redirect. A client given here without a
	// CheckRedirect is used as a copy that refuses them; one with a
	// CheckRedirect of its own keeps it, and with it the redirects it
	// follows.
	HTTPClient *http.Client
	// HeaderTimeout bounds the wait for the upstream's response headers
	// to a turn; zero means 60 s. Exceeding it is a 504.
	HeaderTimeout time.Duration
	// IdleTimeout ends a turn whose upstream stream sends nothing for this
	// long (an error stop, or RUN_ERROR UPSTREAM_IDLE_TIMEOUT; partial
	// output kept); zero means 5 min, negative means none. Only events
	// count: SSE comments (keep-alives) do not keep a turn alive.
	IdleTimeout time.Duration
	// MaxTurnDuration ends a turn that runs longer (an error stop, or
	// RUN_ERROR TURN_TOO_LONG; partial output kept), however busy its
	// upstream is; zero or negative means no limit (with OnClientGone
	// finish, zero means 30 min).
	MaxTurnDuration time.Duration
	// StartTimeout bounds what a turn's start waits for of the store:
	// taking its lock and reading what it continues (the session and its
	// history, the thread). A start the store cannot take within it (a
	// burst of turns on a busy store) is refused before anything of the
	// turn runs: 503 store_busy with Retry-After. Zero means 2 s, negative
	// means no bound.
	StartTimeout time.Duration
	// StallTimeout ends a turn whose client stops reading: a write to the
	// client that makes no progress for this long ends the turn as the
	// client leaving does (upstream cancelled, what was received stored,
	// the session or thread freed); zero means 30 s, negative means never.
	StallTimeout time.Duration
	// OnClientGone is what becomes of a turn whose client went away or
	// stopped reading: ClientGoneCancel (the zero value) cancels the
	// upstream and stores what was received; ClientGoneFinish lets the
	// turn run to its end, bounded by MaxTurnDuration, and stores it as if
	// the client had stayed (the session or thread stays locked until
	// then).
	OnClientGone ClientGone
	// KeepAlive is how often an idle SSE stream gets a comment line, so
	// that proxies and browsers keep it open; zero means 15 s, negative
	// means never.
	KeepAlive time.Duration
	// LeaseTTL is how long a turn's lock lasts without a renewal: the
	// longest a process that died mid-turn keeps its conversation locked,
	// and about how long its rejoining clients wait before they are told
	// the turn was interrupted. Zero means store.LeaseTTL.
	LeaseTTL time.Duration
	// MaxSchedulingDelay bounds how late the process's own ticker may
	// fire (its CPU taken, by its own turns or its neighbours) for a turn
	// to be admitted: past it, a start is refused with 503 overloaded and
	// Retry-After before anything of it runs. Zero means 500 ms, negative
	// means no bound.
	MaxSchedulingDelay time.Duration
	// MaxRenewalLag bounds the recent lag of the process's lock renewals
	// (from when one was due to when the store confirmed it) for a turn
	// to be admitted, as MaxSchedulingDelay does. Zero means LeaseTTL/6,
	// negative means no bound.
	MaxRenewalLag time.Duration
	// MaxEventSize caps one upstream SSE event; zero means 16 MiB.
	MaxEventSize int
	// MaxMessageSize caps one message the agent streams (the bytes of its
	// text, thinking and tool arguments): a turn whose message would grow
	// past it ends (an error stop, or RUN_ERROR MESSAGE_TOO_LARGE; the
	// message kept up to the cap); zero means 32 MiB, negative means no
	// cap.
	MaxMessageSize int

	// APIKeys are the accepted bearer keys. None: the API is open (the
	// programs warn at start-up).
	APIKeys []string
	// Users names the person behind each request, beside the key: a
	// header the trusted caller sets, or a signed token (see docs/USING.md,
	// "One key, many users"). Then sessions and threads, their limits and
	// their locks are scoped to (key, user), and a request that names no
	// valid user is refused. The zero value scopes to the key alone.
	Users userid.Options
	// CORSOrigins are the browser origins allowed to call the API
	// directly (a web client on another origin); "*" allows any origin,
	// never with credentials, and only where callers present a credential
	// (API keys, a key forwarded upstream, user tokens): on an open server
	// New refuses it. None: no CORS headers, preflights refused.
	CORSOrigins []string
	// AllowedHosts are the Host names (or addresses) served besides the
	// loopback names when APIKeys is empty, against DNS rebinding; "*"
	// serves any. None: the loopback names alone. With API keys every
	// Host is served.
	AllowedHosts []string
	// BodyTimeout bounds the time to receive a request body; zero means
	// 30 s, negative means no limit.
	BodyTimeout time.Duration

	// Logger receives one line per request and the events worth a look.
	// Zero value: no logging.
	Logger zerolog.Logger
	// Clock returns the time; nil means time.Now.
	Clock func() time.Time
	// SeparateMetrics leaves GET /metrics off the API handler: the program
	// serves the Server's MetricsHandler on a listener of its own.
	// Otherwise /metrics is served beside the API, behind the same API key.
	SeparateMetrics bool
	// TracerProvider traces requests, upstream calls and store operations
	// (OpenTelemetry); nil means no tracing.
	TracerProvider trace.TracerProvider
}

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
type ClientGone = turns.ClientGone

// What becomes of a turn whose client left.
const (
	ClientGoneCancel = turns.ClientGoneCancel // the upstream is cancelled; what came is stored
	ClientGoneFinish = turns.ClientGoneFinish // the turn runs to its end and is stored whole
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
