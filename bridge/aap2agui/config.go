package aap2agui

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/net/http/httpguts"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/internal/web"
	"github.com/aapagui/aapagui/internal/userid"
	"github.com/aapagui/aapagui/store"
)

// Config configures a Server. Every field's zero value is usable except
// Store, and Upstream or Agents.
type Config struct {
	// Agents are the agents the Server serves, each behind its own
	// upstream: GET /meta lists them and every session goes to the one
	// it names. Without Agents the Server serves the one agent that
	// Upstream, UpstreamHeader, Agent and OwnTools describe (set either
	// Agents or those). An agent's zero timeouts and modes are the
	// Server's (ConnectTimeout, IdleTimeout, ThreadIDs, CancelRun,
	// ToolResultParts).
	Agents []AgentConfig
	// Upstream is the URL of the AG-UI agent (POST RunAgentInput):
	// required without Agents.
	Upstream string
	// UpstreamHeader is sent with every upstream request (e.g. the agent's
	// own API key). The caller's Authorization is never forwarded.
	UpstreamHeader http.Header
	// HTTPClient calls the upstream. nil: a client with connection pooling
	// and no overall timeout (runs stream for as long as they take).
	HTTPClient *http.Client
	// ConnectTimeout bounds the time until the upstream answers with
	// headers; zero means 60 s. Exceeding it is a 504.
	ConnectTimeout time.Duration
	// IdleTimeout ends a turn whose upstream stream sends nothing for this
	// long (turn_stop "error", partial output kept); zero means 5 min,
	// negative means none. Only events count: SSE comments (keep-alives)
	// do not keep a turn alive.
	IdleTimeout time.Duration
	// MaxTurnDuration ends a turn that runs longer (turn_stop "error",
	// partial output kept), however busy its upstream is; zero or negative
	// means no limit.
	MaxTurnDuration time.Duration
	// MaxMessageSize caps one message the agent streams (the bytes of its
	// text, thinking and tool arguments): a turn whose message would grow
	// past it ends (turn_stop "error", the message kept up to the cap);
	// zero means 32 MiB, negative means no cap.
	MaxMessageSize int
	// StallTimeout ends a turn whose client stops reading: a write to the
	// client that makes no progress for this long ends the turn as the
	// client leaving does (upstream cancelled, what was received stored,
	// the session freed); zero means 30 s, negative means never.
	StallTimeout time.Duration

	// Agent describes the agent in GET /meta. Zero value: see DefaultAgent.
	// Its server tools are those the agent runs as each session enables
	// and trusts them (see the README: the agent reads
	// forwardedProps.aap.agent and raises a tool_call interrupt before
	// running an untrusted one).
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
	// message alone when the agent did not read it; CancelRunSeparate the
	// cancellation as a run of its own, then the message; CancelRunSingle
	// one run only. See CancelRun.
	CancelRun CancelRun
	// ToolResultParts says the agent speaks @ag-ui/core 1.0: an AAP tool
	// result holding an image block reaches it as a tool message whose
	// content is an array of content parts (translate.ToolContentParts),
	// which a 0.0.x agent would refuse. Off: the JSON of the block list as
	// a string, as before (docs/MAPPING.md, "AG-UI 1.0").
	ToolResultParts bool

	// APIKeys are the accepted bearer keys. None: the API is open (the
	// program warns at start-up).
	APIKeys []string
	// Users names the person behind each request, beside the key: a
	// header the trusted caller sets, or a signed token (see the README's
	// "One key, many users"). Then sessions, their limits and their
	// locks are scoped to (key, user), and a request that names no valid
	// user is refused. The zero value scopes to the key alone.
	Users userid.Options
	// PublicMeta serves GET /meta without a key.
	PublicMeta bool
	// CORSOrigins are the browser origins allowed to call the API
	// directly (a web client on another origin); "*" allows any origin,
	// never with credentials. None: preflights are refused.
	CORSOrigins []string
	// AllowedHosts are the Host names (or addresses) served besides the
	// loopback names when APIKeys is empty, against DNS rebinding; "*"
	// serves any. With API keys every Host is served.
	AllowedHosts []string
	// KeepAlive is how often an idle SSE stream gets a comment line, so
	// that proxies and browsers keep it open; zero means 15 s, negative
	// means never.
	KeepAlive time.Duration
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
	// BodyTimeout bounds the time to receive a request body; zero means
	// 30 s, negative means no limit.
	BodyTimeout time.Duration
	// Limits are the optional per-key limits (sessions, concurrent turns,
	// requests per second); the zero value limits nothing.
	Limits Limits

	// Store keeps sessions. Required.
	Store store.Store
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
	// MaxEventSize caps one upstream SSE event; zero means 16 MiB.
	MaxEventSize int
	// PageSize is the number of sessions per GET /sessions page; zero
	// means 50.
	PageSize int
	// Logger receives one line per request and the events worth a look.
	// Zero value: no logging.
	Logger zerolog.Logger
	// Clock returns the time; nil means time.Now.
	Clock func() time.Time

	// SeparateMetrics leaves GET /metrics off the API handler: the program
	// serves Server.MetricsHandler on a listener of its own. Otherwise
	// /metrics is served beside the API, behind the same API key.
	SeparateMetrics bool
	// TracerProvider traces requests, upstream calls and store operations
	// (OpenTelemetry); nil means no tracing.
	TracerProvider trace.TracerProvider
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
	if err := web.CheckOrigins(c.CORSOrigins); err != nil {
		return fmt.Errorf("aap2agui: %w", err)
	}
	var err error
	if c.ThreadIDs, err = ParseThreadIDs(string(c.ThreadIDs)); err != nil {
		return fmt.Errorf("aap2agui: Config.ThreadIDs: %w", err)
	}
	if c.CancelRun, err = ParseCancelRun(string(c.CancelRun)); err != nil {
		return fmt.Errorf("aap2agui: Config.CancelRun: %w", err)
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = 5 * time.Minute
	}
	if c.MaxMessageSize == 0 {
		c.MaxMessageSize = 32 << 20
	}
	if c.StallTimeout == 0 {
		c.StallTimeout = 30 * time.Second
	}
	if c.KeepAlive == 0 {
		c.KeepAlive = 15 * time.Second
	}
	if c.MaxCheckpoints == 0 {
		c.MaxCheckpoints = 500
	}
	if c.CheckpointInterval == 0 {
		c.CheckpointInterval = time.Second
	}
	if c.BodyTimeout == 0 {
		c.BodyTimeout = 30 * time.Second
	}
	if c.HTTPClient == nil {
		c.HTTPClient = web.NewUpstreamClient()
	}
	if c.ConnectTimeout == 0 {
		c.ConnectTimeout = 60 * time.Second
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
	if c.Clock == nil {
		c.Clock = time.Now
	}
	return c.resolveAgents()
}

// checkHeader refuses an upstream header no HTTP request can carry: a
// name that is not a token, or a value holding a control character (a CR
// LF would add a header). Values are never shown.
func checkHeader(h http.Header) error {
	for name, values := range h {
		if !httpguts.ValidHeaderFieldName(name) {
			return fmt.Errorf("%q is not a header name", name)
		}
		for _, v := range values {
			if !httpguts.ValidHeaderFieldValue(v) {
				return fmt.Errorf("the value of %s holds a control character (the value is not shown)", name)
			}
		}
	}
	return nil
}
