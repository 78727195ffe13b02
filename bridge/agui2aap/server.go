package agui2aap

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/gin-gonic/gin"
	"golang.org/x/sync/singleflight"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/bridge/internal/edge"
	"github.com/aapagui/aapagui/bridge/internal/fault"
	"github.com/aapagui/aapagui/bridge/internal/turns"
	"github.com/aapagui/aapagui/store"
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
}

// New returns a Server for the configuration.
func New(cfg Config) (*Server, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	b, err := cfg.Serving.NewBase(turns.BaseOptions{Name: "agui2aap", Unit: "run", Keyed: len(cfg.APIKeys) > 0 || cfg.ForwardAuth, Limits: cfg.Limits.keyLimits(), MaxBody: cfg.MaxBody})
	if err != nil {
		return nil, err
	}
	cfg.Store = store.ObserveThreads(cfg.Store, b.Observe)
	s := &Server{cfg: cfg, base: b, meta: map[string]metaEntry{}}
	s.readiness = edge.NewReady(cfg.Clock, s.checkReady)
	s.forwarded = newForwarded(cfg.Limits)
	e, m := b.Engine, b.Metrics
	// Thread ids are the client's, "/" included: routes match the escaped
	// path, so that DELETE …/threads/a%2Fb names the thread "a/b", and
	// each path value is unescaped once matched (gin's own unescaping
	// would read "+" as a space).
	e.UseEscapedPath, e.UnescapePathValues = true, false
	e.Use(unescapeParams)
	e.GET("/readyz", s.ready)
	if !cfg.SeparateMetrics {
		e.GET("/metrics", s.auth, gin.WrapH(m.Handler()))
	}
	e.GET("/agents", s.auth, s.listAgents)
	e.POST("/agents/:name", s.authUser, s.runPlace, edge.JSONBody, s.handle(s.run))
	e.POST("/agents/:name/connect", s.authUser, edge.JSONBody, s.handle(s.connect))
	e.GET("/agents/:name/threads", s.authUser, s.listThreads)
	e.DELETE("/agents/:name/threads/:threadId", s.authUser, s.deleteThread)
	e.DELETE("/agents/:name/threads/:threadId/run", s.authUser, s.stopRun)
	return s, nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.base.Engine.ServeHTTP(w, r) }

// handle makes a handler of h, whose error (returned before its answer
// began) is answered as a failure (fail).
func (s *Server) handle(h func(*gin.Context) error) gin.HandlerFunc {
	return func(c *gin.Context) {
		if err := h(c); err != nil {
			s.fail(c, err)
		}
	}
}

// env is what a run uses of the server (runEnv).
func (s *Server) env() runEnv { return runEnv{cfg: &s.cfg, met: s.base.Metrics} }

// MetricsHandler serves the server's metrics in the Prometheus text
// format, without any key check: for a listener of its own (see
// Config.SeparateMetrics).
func (s *Server) MetricsHandler() http.Handler { return s.base.Metrics.Handler() }

// unescapeParams unescapes the path values of a route matched on the
// escaped path (see New).
func unescapeParams(c *gin.Context) {
	for i, p := range c.Params {
		v, err := url.PathUnescape(p.Value)
		if err != nil {
			edge.Reply(c, fault.Fail(fault.KindInvalid, "invalid_request", "the path's "+p.Key+" is not validly escaped"))
			return
		}
		c.Params[i].Value = v
	}
}

const ownerKey = "owner"

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
	c.Set(ownerKey, owner)
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

// checkReady pings the store and asks the AAP server for its GET /meta
// with the bridge's own key (UpstreamAPIKey) or none, never a caller's: a
// 401 or 403 is an answer, as any other status would not be.
func (s *Server) checkReady(ctx context.Context) readyCheck {
	if p, ok := s.cfg.Store.(interface{ Ping(context.Context) error }); ok {
		if err := p.Ping(ctx); err != nil {
			s.cfg.Logger.Warn().Err(err).Msg("store not ready")
			return readyCheck{notReady: "the thread store is not reachable"}
		}
	}
	cl := aap.NewClient(s.cfg.Upstream, aap.ClientOptions{HTTPClient: s.cfg.HTTPClient, APIKey: s.cfg.UpstreamAPIKey, Version: s.cfg.UpstreamVersion})
	_, err := cl.Meta(ctx)
	var he *aap.HTTPError
	if err == nil || errors.As(err, &he) && (he.StatusCode == http.StatusUnauthorized || he.StatusCode == http.StatusForbidden) {
		return readyCheck{}
	}
	s.cfg.Logger.Warn().Err(err).Msg("upstream not ready")
	return readyCheck{notReady: "the AAP server is not ready: " + s.cfg.upstreamFailure(err).Message}
}

// ready answers GET /readyz from the last readiness check (edge.Ready):
// ready or not to anyone, what is not ready only to a caller that may
// know (mayKnow).
func (s *Server) ready(c *gin.Context) {
	mayKnow := s.mayKnow(c.Request)
	r, err := s.readiness.Get(c.Request.Context())
	switch {
	case err != nil:
		s.fail(c, edge.NotReady("the readiness check did not finish", mayKnow))
	case r.notReady != "":
		s.fail(c, edge.NotReady(r.notReady, mayKnow))
	case !mayKnow:
		edge.JSON(c, http.StatusOK, readiness{Status: "ok"})
	default:
		edge.JSON(c, http.StatusOK, readiness{Status: "ok", Store: "ok", Upstream: "ok"})
	}
}

// mayKnow is turns.Base.MayKnow, but for a key forwarded to the AAP server
// (ForwardAuth without API keys), which only the AAP server could check:
// such callers are told ready or not.
func (s *Server) mayKnow(r *http.Request) bool {
	return !(s.cfg.ForwardAuth && s.base.Keys.Open()) && s.base.MayKnow(r)
}

func (s *Server) listAgents(c *gin.Context) {
	cl, key := s.client(c.Request)
	meta, err := s.upstreamMeta(c.Request.Context(), cl, key)
	if err != nil {
		s.fail(c, &upstreamError{err})
		return
	}
	out := struct {
		Agents []agui.AgentDescription `json:"agents"`
	}{Agents: []agui.AgentDescription{}}
	for i := range meta.Agents {
		a := &meta.Agents[i]
		d := agui.AgentDescription{Name: a.Name, URL: "/agents/" + a.Name, Title: a.Title, Description: a.Description, Version: a.Version}
		caps := &d.Capabilities
		caps.Identity.Name, caps.Identity.Type, caps.Identity.Description, caps.Identity.Version = a.Name, "aap", a.Description, a.Version
		caps.Transport.Streaming = true
		caps.Tools.Items = []any{}
		for _, t := range a.Tools {
			caps.Tools.Items = append(caps.Tools.Items, map[string]any{"name": t.Name, "description": t.Description, "parameters": t.Parameters})
		}
		caps.Tools.ClientProvided = a.Capabilities != nil && a.Capabilities.Application != nil && a.Capabilities.Application.Tools != nil
		caps.Tools.Supported = caps.Tools.ClientProvided || len(a.Tools) > 0
		// AAP has no reasoning capability flag; any agent may think.
		caps.Reasoning.Supported, caps.Reasoning.Streaming = true, a.Capabilities.SupportsStream(aap.StreamDelta)
		caps.Multimodal.Input.Image = a.Capabilities != nil && a.Capabilities.Image != nil && (a.Capabilities.Image.HTTP != nil || a.Capabilities.Image.Data != nil)
		hitl := len(a.Tools) > 0 && s.cfg.Policy == PolicyInterrupt
		caps.HumanInTheLoop.Supported, caps.HumanInTheLoop.Approvals, caps.HumanInTheLoop.Interrupts = hitl, hitl, hitl
		out.Agents = append(out.Agents, d)
	}
	edge.JSON(c, http.StatusOK, out)
}
