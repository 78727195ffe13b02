// Package serving holds the options both bridges serve with (Serving):
// how they call their upstream and bound a turn (aap2agui) or a run
// (agui2aap), who may call them, and what they report. Each bridge's
// Config has them as its Serving; each field's doc says what its zero
// value means, and the bridges' DefaultServing give the values the zero
// fields stand for.
package serving

import (
	"net/http"
	"time"

	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/trace"

	"github.com/aapagui/aapagui/internal/userid"
)

// Serving are the options both bridges serve with: how they call their
// upstream and bound a turn (aap2agui) or a run (agui2aap), who may call
// them, and what they report. Each field's doc says what its zero value
// means.
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

// ClientGone says what becomes of a turn whose client left (see
// Serving.OnClientGone).
type ClientGone string

// What becomes of a turn whose client left.
const (
	// ClientGoneCancel cancels the turn's upstream; what was received is
	// stored. Closing the stream is how AAP clients and AG-UI's abortRun
	// stop a turn.
	ClientGoneCancel ClientGone = "cancel"
	// ClientGoneFinish lets the turn run to its end and stores it whole.
	ClientGoneFinish ClientGone = "finish"
)
