package turns

import (
	"errors"
	"net/http"
	"slices"

	"github.com/gin-gonic/gin"
	"github.com/rs/zerolog"

	"github.com/aapagui/aapagui/bridge/internal/admit"
	"github.com/aapagui/aapagui/bridge/internal/edge"
	"github.com/aapagui/aapagui/bridge/internal/metrics"
	"github.com/aapagui/aapagui/bridge/internal/runlog"
	"github.com/aapagui/aapagui/internal/apikey"
	"github.com/aapagui/aapagui/internal/limit"
	"github.com/aapagui/aapagui/internal/userid"
	"github.com/aapagui/aapagui/store"
)

// Base is what both bridges' servers stand on, made once from their
// Serving options: the metrics, the store observer and upstream client
// with telemetry, the keys and the users behind them, the per-key limits,
// and the engine with its guards (CORS, the body timeout, and the Host
// check of an open server), to which each bridge adds its routes.
type Base struct {
	Metrics *metrics.Metrics
	// Observe observes the bridge's store operations (metrics, spans):
	// the bridge wraps its store with it.
	Observe store.Observer
	Keys    apikey.Keys
	Users   *userid.Users // nil: conversations are scoped to the key alone
	Limits  *limit.Keys   // nil: no per-key rate or turn limit
	Engine  *gin.Engine
	// Load admits turns by what the process can carry (Admit), and is
	// told of their leases (LeaseOptions).
	Load *admit.Load

	serving *Serving    // the options it was made from (Run)
	runs    *runlog.Hub // the runs this process records (Turn.KeepRunLog)
}

// BaseOptions are what differs between the bridges' bases.
type BaseOptions struct {
	Name string // "aap2agui", "agui2aap": the metrics' namespace, the service's name
	Unit string // "turn", "run"
	// Keyed says that callers present a key (API keys, or a key they
	// forward upstream): a user token then rides beside it.
	Keyed   bool
	Limits  edge.KeyLimits
	MaxBody int64
}

// NewBase makes the base of a bridge's server; s.HTTPClient gets the
// upstream calls' telemetry.
func (s *Serving) NewBase(o BaseOptions) (*Base, error) {
	limits, err := o.Limits.Keys(o.Name)
	if err != nil {
		return nil, err
	}
	users, err := userid.New(s.Users, o.Keyed)
	if err != nil {
		return nil, err
	}
	if slices.Contains(s.CORSOrigins, "*") && !o.Keyed && !users.JWT() {
		// Any web site the local user visits could then list, read and
		// run conversations from the user's browser: the Host check does
		// not stop a page on another origin that CORS lets in.
		return nil, errors.New(o.Name + ": CORS origin * on a server that asks callers for no key would let every web site call it from a visitor's browser: " +
			"set API keys (--api-key) or name the origins allowed (--cors-origin https://app.example.com)")
	}
	m := metrics.New(metrics.Options{Namespace: o.Name, Unit: o.Unit})
	observe, hc, outer := Telemetry(o.Name, m, s.TracerProvider, s.HTTPClient)
	s.HTTPClient = hc
	runs := runlog.NewHub()
	log := s.Logger
	runs.Log = &log
	b := &Base{serving: s, runs: runs, Metrics: m, Observe: observe, Keys: apikey.New(s.APIKeys), Users: users, Limits: limits, Load: admit.New(m, s.MaxSchedulingDelay, s.MaxRenewalLag, s.LeaseTTL)}
	guards := []gin.HandlerFunc{edge.CORS(s.CORSOrigins, "GET, POST, DELETE, OPTIONS"), edge.BodyTimeout(s.BodyTimeout)}
	if b.Keys.Open() && !users.JWT() {
		guards = append(guards, edge.HostAllow(s.AllowedHosts))
	}
	b.Engine = edge.NewEngine(s.Logger, o.MaxBody, outer, guards...)
	return b, nil
}

// MayKnow reports whether r may see what a readiness probe found beyond
// ready or not (which upstreams answer, and why not): r presents one of
// the API keys, and a valid user token when users are named by tokens. An
// open server (no keys) tells anyone, as it serves anyone everything
// else.
func (b *Base) MayKnow(r *http.Request) bool {
	if _, err := b.Keys.Owner(r); err != nil {
		return false
	}
	if b.Users.JWT() {
		if _, err := b.Users.User(r); err != nil {
			return false
		}
	}
	return true
}

// LeaseOptions are the options of a turn's lease on the conversation
// what (session, thread) id: the configured TTL, failures logged and
// counted, renewals' lag told to the load.
func (b *Base) LeaseOptions(log *zerolog.Logger, what, id string) store.LeaseOptions {
	o := store.LeaseOptions{TTL: b.serving.LeaseTTL, OnError: edge.LeaseLog(log, what, id)}
	logged := o.OnError
	o.OnError = func(op string, err error) {
		b.Metrics.LeaseEvent(op)
		logged(op, err)
	}
	o.OnRenew = b.Load.Renewed
	return o
}
