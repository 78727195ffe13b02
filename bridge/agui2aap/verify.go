package agui2aap

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/internal/edge"
	"github.com/aapagui/aapagui/bridge/internal/fault"
	"github.com/aapagui/aapagui/internal/limit"
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
//     they cost at most that many GET /meta; the rate is shared fairly
//     between the callers' addresses (limit.Fair), so that one address
//     flooding it with made-up keys leaves room for another's real key;
//   - a key the AAP server accepted keeps its /meta cache entry, which
//     made-up keys cannot push out (upstreamMeta).

// The shared rate of keys the AAP server has not accepted yet when
// Limits sets no rate: a cold start with many callers' keys passes
// within a few seconds, a flood of made-up ones costs 20 GET /meta a
// second at most, and while one address floods, another's key passes
// within about a second (limit.Fair).
const (
	unverifiedRate  = 20
	unverifiedBurst = 40
)

func newForwarded(l Limits) *forwarded {
	r, burst := float64(unverifiedRate), unverifiedBurst
	if l.RequestsPerSecond > 0 {
		r, burst = l.RequestsPerSecond, l.Burst
		if burst <= 0 {
			burst = max(int(math.Ceil(l.RequestsPerSecond)), 1)
		}
	}
	return &forwarded{refused: map[string]time.Time{}, unverified: limit.NewFair(r, burst)}
}

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
	if ok, wait := f.unverified.Take(limit.Client(r.RemoteAddr), now); !ok {
		return fault.Throttled("too_many_requests", "too many requests with keys the AAP server has not accepted yet; retry later", wait)
	}
	cl, _ := s.client(r)
	if _, err := s.upstreamMeta(r.Context(), cl, key); err != nil {
		return &upstreamError{err}
	}
	return nil
}

// auth checks the caller's key and works out who the caller is: the hash
// of its bridge key, or of the key it forwards upstream. With ForwardAuth
// a caller must present a bearer key, whether or not the bridge has keys
// of its own: the AAP server checks it, and threads are scoped to it.
// When users are named by tokens, every route needs a valid one.
func (s *Server) auth(c *gin.Context) { s.authAs(c, s.base.Users.JWT()) }

// authUser is auth for the routes of threads: the owner is the caller's,
// scoped to the request's user when Config.Users names one.
func (s *Server) authUser(c *gin.Context) { s.authAs(c, true) }

func (s *Server) authAs(c *gin.Context, user bool) {
	owner, err := s.owner(c.Request)
	if err == nil && user {
		if owner, err = edge.Scope(s.base.Users, owner, c.Request); err == nil {
			c.Request = s.withUser(c.Request, owner)
		}
	}
	if err == nil && s.forwardOnly() {
		// Before the key's own limits: a key the AAP server has not
		// accepted gets none (verify.go).
		err = s.verify(c.Request)
	}
	if err == nil {
		err = edge.Allow(s.base.Limits, owner)
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	edge.SetOwner(c, owner)
}

// owner is the caller of r (see auth), or why it may not call.
func (s *Server) owner(r *http.Request) (string, error) {
	owner, err := s.base.Keys.Owner(r)
	if err != nil {
		return "", fault.Fail(fault.KindUnauthorized, "unauthorized", "a valid API key is required: Authorization: Bearer <key>")
	}
	if s.cfg.ForwardAuth && bearer(r) == "" {
		return "", fault.Fail(fault.KindUnauthorized, "unauthorized",
			"an API key is required: Authorization: Bearer <key> (this bridge forwards it to the AAP server)")
	}
	if s.cfg.ForwardAuth && s.base.Keys.Open() {
		// The upstream checks the key; threads are scoped to it, named
		// as apikey names a key (a prefix of its hash).
		owner = credentialKey(bearer(r))
	}
	return owner, nil
}

// upstream returns the upstream's /meta (cached, see upstreamMeta) and the
// client speaking the upstream's protocol version: Config.UpstreamVersion,
// else the one /meta names.
func (s *Server) upstream(ctx context.Context, cl *aap.Client, key string) (*aap.Client, *aap.GetMetaResponse, error) {
	meta, err := s.upstreamMeta(ctx, cl, key)
	if err != nil {
		return nil, nil, err
	}
	if s.cfg.UpstreamVersion != 0 {
		return cl, meta, nil
	}
	v := meta.Version
	if v == 0 {
		v = aap.Version3 // a /meta without a version: the current protocol
	}
	if !aap.KnownVersion(v) {
		return nil, nil, fmt.Errorf("%w %d: agui2aap speaks 1, 2 and 3 (--upstream-aap-version forces one)", aap.ErrUnsupportedVersion, v)
	}
	if cl == s.shared {
		return s.sharedVersion(v), meta, nil
	}
	return cl.WithVersion(v), meta, nil
}
