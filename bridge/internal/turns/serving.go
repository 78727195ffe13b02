package turns

import (
	"fmt"
	"time"

	"github.com/aapagui/aapagui/bridge/internal/admit"
	"github.com/aapagui/aapagui/bridge/internal/edge"
	"github.com/aapagui/aapagui/bridge/internal/upstream"
	"github.com/aapagui/aapagui/bridge/serving"
	"github.com/aapagui/aapagui/internal/redirect"
	"github.com/aapagui/aapagui/internal/sse"
	"github.com/aapagui/aapagui/store"
)

// Serving are the options both bridges serve with (serving.Serving,
// which says what each field and its zero value mean), as the turns see
// them: a bridge's Config holds a serving.Serving, seen as this type
// through a pointer conversion ((*turns.Serving)(&cfg.Serving)). What a
// zero field stands for is Defaults's, written here alone.
type Serving serving.Serving

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

// ClientGone says what becomes of a turn whose client left
// (serving.ClientGone).
type ClientGone = serving.ClientGone

// What becomes of a turn whose client left (serving.ClientGoneCancel,
// serving.ClientGoneFinish).
const (
	ClientGoneCancel = serving.ClientGoneCancel
	ClientGoneFinish = serving.ClientGoneFinish
)

// DefaultFinishBound is MaxTurnDuration when a turn whose client left
// runs to its end (ClientGoneFinish) and none is set: 30 minutes.
const DefaultFinishBound = 30 * time.Minute
