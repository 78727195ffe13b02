package agui2aap

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/internal/edge"
	"github.com/aapagui/aapagui/bridge/internal/turns"
	"github.com/aapagui/aapagui/internal/limit"
)

// Server is the agui2aap HTTP handler.
type Server struct {
	cfg  Config
	base *turns.Base // metrics, keys, users, limits and the engine (turns.Serving.NewBase)

	metaMu sync.Mutex
	meta   map[string]metaEntry // by upstream credential
	// metaCalls shares one GET /meta among the runs that miss the cache
	// together (a cold start, an expired entry), by credential.
	metaCalls singleflight.Group

	readiness *edge.Ready[readyCheck] // GET /readyz's check, reused for edge.ReadyTTL
	forwarded *forwarded              // the forwarded keys the AAP server refused, and the rate of new ones (verify.go)

	// shared is the AAP client of the requests that forward neither their
	// caller's key nor its user (nil with ForwardAuth), and versions[v] it
	// speaking version v, made when first needed: made once, not for every
	// run (client, upstream).
	shared   *aap.Client
	versions [aap.Version3 + 1]atomic.Pointer[aap.Client]
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.base.Engine.ServeHTTP(w, r) }

// MetricsHandler serves the server's metrics in the Prometheus text
// format, without any key check: for a listener of its own (see
// Config.SeparateMetrics).
func (s *Server) MetricsHandler() http.Handler { return s.base.Metrics.Handler() }

func credentialKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:16])
}

func bearer(r *http.Request) string {
	scheme, key, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(key)
}

// readiness is the body of GET /readyz: ok, and to a caller that may know
// (mayKnow) the store and the AAP server.
type readiness struct {
	Status   string `json:"status"`
	Store    string `json:"store,omitempty"`
	Upstream string `json:"upstream,omitempty"`
}

// readyCheck is what a readiness check found (edge.Ready reuses it for
// edge.ReadyTTL): why the store or the AAP server is not ready, if either.
type readyCheck struct{ notReady string }

type metaEntry struct {
	meta *aap.GetMetaResponse
	at   time.Time
}

// forwarded is what the bridge remembers of the keys it forwards (see
// above).
type forwarded struct {
	mu         sync.Mutex
	refused    map[string]time.Time // by credentialKey: when the AAP server refused it
	unverified *limit.Fair          // the keys not yet accepted, all together, fair between addresses
}
