package agui2aap

import (
	"errors"
	"math"
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/internal/fault"
)

// Under ForwardAuth without API keys the bridge holds no key to check a
// caller's against: the AAP server does. Each key is checked once, by the
// AAP server's GET /meta with it, before anything else of the request
// (and its per-key limits) runs, so that made-up keys cannot multiply
// upstream calls:
//
//   - a key the AAP server refused (401, 403) is refused here for
//     refusedTTL without asking again;
//   - keys not yet accepted share one rate (Limits.RequestsPerSecond and
//     Burst when set, else unverifiedRate and unverifiedBurst), taken
//     before the upstream is asked: however many keys a caller makes up,
//     they cost at most that many GET /meta;
//   - a key the AAP server accepted keeps its /meta cache entry, which
//     made-up keys cannot push out (upstreamMeta).

// refusedTTL is how long a key the AAP server refused is refused here.
const refusedTTL = 10 * time.Second

// maxRefused bounds the refused keys remembered; past it the expired are
// forgotten, then all (which costs only GET /meta calls, themselves
// bounded by the shared rate).
const maxRefused = 4096

// The shared rate of keys the AAP server has not accepted yet when
// Limits sets no rate: a cold start with many callers' keys passes
// within a few seconds, a flood of made-up ones costs 20 GET /meta a
// second at most.
const (
	unverifiedRate  = 20
	unverifiedBurst = 40
)

// forwarded is what the bridge remembers of the keys it forwards (see
// above).
type forwarded struct {
	mu         sync.Mutex
	refused    map[string]time.Time // by credentialKey: when the AAP server refused it
	unverified *rate.Limiter        // the keys not yet accepted, all together
}

func newForwarded(l Limits) *forwarded {
	r, burst := rate.Limit(unverifiedRate), unverifiedBurst
	if l.RequestsPerSecond > 0 {
		r, burst = rate.Limit(l.RequestsPerSecond), l.Burst
		if burst <= 0 {
			burst = max(int(math.Ceil(l.RequestsPerSecond)), 1)
		}
	}
	return &forwarded{refused: map[string]time.Time{}, unverified: rate.NewLimiter(r, burst)}
}

// forwardOnly reports whether callers' keys are forwarded and checked by
// the AAP server alone (ForwardAuth without API keys).
func (s *Server) forwardOnly() bool { return s.cfg.ForwardAuth && s.base.Keys.Open() }

// errRefusedKey answers a key the AAP server refused.
var errRefusedKey = fault.Fail(fault.KindUnauthorized, "unauthorized", "the AAP server refused the API key")

// verify checks r's forwarded key (see above): nil when the AAP server
// has accepted it, else the failure to answer.
func (s *Server) verify(r *http.Request) error {
	key := bearer(r)
	cred, now := credentialKey(key), s.cfg.Clock()
	f := s.forwarded
	f.mu.Lock()
	at, refused := f.refused[cred]
	f.mu.Unlock()
	if refused && now.Sub(at) < refusedTTL {
		return errRefusedKey
	}
	s.metaMu.Lock()
	_, known := s.meta[cred]
	s.metaMu.Unlock()
	if known {
		return nil // accepted before; upstreamMeta asks again when its entry is stale
	}
	if res := f.unverified.ReserveN(now, 1); !res.OK() || res.DelayFrom(now) > 0 {
		wait := time.Second
		if res.OK() {
			wait = res.DelayFrom(now)
			res.CancelAt(now)
		}
		return fault.Throttled("too_many_requests", "too many requests with keys the AAP server has not accepted yet; retry later", wait)
	}
	cl, _ := s.client(r)
	if _, err := s.upstreamMeta(r.Context(), cl, key); err != nil {
		return &upstreamError{err}
	}
	return nil
}

// noteRefused remembers that the AAP server refused the key cred names,
// when err says so; it returns err.
func (s *Server) noteRefused(cred string, err error) error {
	var he *aap.HTTPError
	if !s.forwardOnly() || !errors.As(err, &he) || (he.StatusCode != http.StatusUnauthorized && he.StatusCode != http.StatusForbidden) {
		return err
	}
	now := s.cfg.Clock()
	f := s.forwarded
	f.mu.Lock()
	if len(f.refused) >= maxRefused {
		for k, at := range f.refused {
			if now.Sub(at) >= refusedTTL {
				delete(f.refused, k)
			}
		}
		if len(f.refused) >= maxRefused {
			clear(f.refused)
		}
	}
	f.refused[cred] = now
	f.mu.Unlock()
	s.metaMu.Lock()
	delete(s.meta, cred) // accepted once, refused now: it starts over
	s.metaMu.Unlock()
	return err
}

// dropMetaStale makes room in the /meta cache, whose lock is held: it
// forgets the entries older than MetaTTL, never a fresh one, so that keys
// made up in numbers cannot push out those in use. It reports whether
// there is room.
func (s *Server) dropMetaStale(now time.Time) bool {
	if len(s.meta) < maxMetaEntries {
		return true
	}
	for k, e := range s.meta {
		if now.Sub(e.at) >= s.cfg.MetaTTL {
			delete(s.meta, k)
		}
	}
	return len(s.meta) < maxMetaEntries
}
