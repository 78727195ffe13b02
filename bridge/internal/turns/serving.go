package turns

import (
	"fmt"
	"net/http"
	"time"

	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/trace"

	"github.com/aapagui/aapagui/bridge/internal/admit"
	"github.com/aapagui/aapagui/bridge/internal/edge"
	"github.com/aapagui/aapagui/bridge/internal/upstream"
	"github.com/aapagui/aapagui/internal/redirect"
	"github.com/aapagui/aapagui/internal/sse"
	"github.com/aapagui/aapagui/internal/userid"
	"github.com/aapagui/aapagui/store"
)

// Serving are the options both bridges serve with: how they call their
// upstream and bound a turn (aap2agui) or a run (agui2aap), who may call
// them, and what they report. It is, field for field, the public
// aap2agui.Serving and agui2aap.Serving, which say what each field and
// its zero value mean (go doc ./bridge/aap2agui Serving): a bridge's
// Config embeds its own, and the bridge sees it as this type through a
// pointer conversion ((*turns.Serving)(&cfg.Serving)), which compiles only
// while the three keep the same fields in the same order. What a zero
// field stands for is Defaults's, written here alone.
type Serving struct {
	HTTPClient         *http.Client
	HeaderTimeout      time.Duration
	IdleTimeout        time.Duration
	MaxTurnDuration    time.Duration
	StartTimeout       time.Duration
	StallTimeout       time.Duration
	OnClientGone       ClientGone
	KeepAlive          time.Duration
	LeaseTTL           time.Duration
	MaxSchedulingDelay time.Duration
	MaxRenewalLag      time.Duration
	MaxEventSize       int
	MaxMessageSize     int

	APIKeys      []string
	Users        userid.Options
	CORSOrigins  []string
	AllowedHosts []string
	BodyTimeout  time.Duration

	Logger          zerolog.Logger
	Clock           func() time.Time
	SeparateMetrics bool
	TracerProvider  trace.TracerProvider
}

// Defaults are the values Serving's zero fields stand for where a zero
// stands for a value (SetDefaults gives them): the one place they are
// written, which the programs' flags default to. The fields it leaves
// zero mean none (MaxTurnDuration) or depend on others (MaxRenewalLag:
// LeaseTTL/6).
func Defaults() Serving {
	return Serving{
		HeaderTimeout:      60 * time.Second,
		IdleTimeout:        5 * time.Minute,
		StartTimeout:       2 * time.Second,
		StallTimeout:       30 * time.Second,
		OnClientGone:       ClientGoneCancel,
		KeepAlive:          15 * time.Second,
		LeaseTTL:           store.LeaseTTL,
		MaxSchedulingDelay: admit.DefaultMaxSchedulingDelay,
		MaxEventSize:       sse.DefaultMaxEventSize,
		MaxMessageSize:     32 << 20,
		BodyTimeout:        30 * time.Second,
	}
}

// SetDefaults gives the zero fields their defaults and checks the rest;
// name ("aap2agui", "agui2aap") begins an error.
func (s *Serving) SetDefaults(name string) error {
	if err := edge.CheckOrigins(s.CORSOrigins); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if s.HTTPClient == nil {
		s.HTTPClient = upstream.NewClient()
	}
	s.HTTPClient = redirect.Client(s.HTTPClient)
	def := Defaults()
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{
		{&s.HeaderTimeout, def.HeaderTimeout},
		{&s.IdleTimeout, def.IdleTimeout},
		{&s.StallTimeout, def.StallTimeout},
		{&s.KeepAlive, def.KeepAlive},
		{&s.BodyTimeout, def.BodyTimeout},
		{&s.StartTimeout, def.StartTimeout},
		{&s.LeaseTTL, def.LeaseTTL},
		{&s.MaxSchedulingDelay, def.MaxSchedulingDelay},
	} {
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	if s.LeaseTTL < 0 {
		return fmt.Errorf("%s: LeaseTTL %s: want a positive duration", name, s.LeaseTTL)
	}
	if s.Clock == nil {
		s.Clock = time.Now
	}
	if s.MaxEventSize == 0 {
		s.MaxEventSize = def.MaxEventSize
	}
	if s.MaxMessageSize == 0 {
		s.MaxMessageSize = def.MaxMessageSize
	}
	switch s.OnClientGone {
	case "", ClientGoneCancel:
		s.OnClientGone = ClientGoneCancel
	case ClientGoneFinish:
		if s.MaxTurnDuration == 0 {
			// A turn nobody reads is bounded all the same.
			s.MaxTurnDuration = DefaultFinishBound
		}
	default:
		return fmt.Errorf("%s: OnClientGone %q: want cancel or finish", name, s.OnClientGone)
	}
	return nil
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

// DefaultFinishBound is MaxTurnDuration when a turn whose client left
// runs to its end (ClientGoneFinish) and none is set: 30 minutes.
const DefaultFinishBound = 30 * time.Minute
