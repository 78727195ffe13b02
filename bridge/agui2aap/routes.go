package agui2aap

import (
	"net/url"

	"github.com/gin-gonic/gin"

	"github.com/aapagui/aapagui/bridge/internal/edge"
	"github.com/aapagui/aapagui/bridge/internal/fault"
	"github.com/aapagui/aapagui/bridge/internal/turns"
	"github.com/aapagui/aapagui/store"
)

// New returns a Server for the configuration.
func New(cfg Config) (*Server, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	b, err := cfg.serving().NewBase(turns.BaseOptions{Name: "agui2aap", Unit: "run", Keyed: len(cfg.APIKeys) > 0 || cfg.ForwardAuth, Limits: cfg.Limits.keyLimits(), MaxBody: cfg.MaxBody})
	if err != nil {
		return nil, err
	}
	cfg.Store = store.ObserveThreads(cfg.Store, b.Observe)
	s := &Server{cfg: cfg, base: b, meta: map[string]metaEntry{}}
	if !cfg.ForwardAuth {
		s.shared = s.newClient(cfg.UpstreamAPIKey, nil)
	}
	s.readiness = edge.NewReady(cfg.Clock, s.checkReady)
	s.forwarded = newForwarded(cfg.Limits)
	e, m := b.Engine, b.Metrics
	// Thread ids are the client's, "/" included: routes match the escaped
	// path, so that DELETE …/threads/a%2Fb names the thread "a/b", and
	// each path value is unescaped once matched (gin's own unescaping
	// would read "+" as a space).
	e.UseEscapedPath, e.UnescapePathValues = true, false
	e.Use(unescapeParams)
	e.GET("/readyz", s.handle(s.ready))
	if !cfg.SeparateMetrics {
		e.GET("/metrics", s.auth, gin.WrapH(m.Handler()))
	}
	e.GET("/agents", s.auth, s.listAgents)
	e.POST("/agents/:name", s.authUser, s.runPlace, edge.JSONBody, s.handle(s.run))
	e.POST("/agents/:name/connect", s.authUser, s.followPlace, edge.JSONBody, s.handle(s.connect))
	e.GET("/agents/:name/threads", s.authUser, s.listThreads)
	e.DELETE("/agents/:name/threads/:threadId", s.authUser, s.deleteThread)
	e.DELETE("/agents/:name/threads/:threadId/run", s.authUser, s.stopRun)
	return s, nil
}

// handle makes a handler of h, whose error (returned before its answer
// began) is answered as a failure (fail).
func (s *Server) handle(h func(*gin.Context) error) gin.HandlerFunc {
	return func(c *gin.Context) {
		if err := h(c); err != nil {
			s.fail(c, err)
		}
	}
}

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

// runPlace holds one of the caller's run places (Limits.RunsPerKey) for
// the rest of the request, or answers 429.
func (s *Server) runPlace(c *gin.Context) {
	release, err := edge.Place(s.base.Limits, edge.Owner(c), "too_many_runs", "runs")
	if err != nil {
		s.fail(c, err)
		return
	}
	defer release()
	c.Next()
}

// followPlace holds one of the caller's places to follow a run's stream
// (limit.FollowsPerTurn for each of Limits.RunsPerKey) for the rest of
// the request, or answers 429 before the store is read.
func (s *Server) followPlace(c *gin.Context) {
	release, err := edge.Follow(s.base.Limits, edge.Owner(c), "runs")
	if err != nil {
		s.fail(c, err)
		return
	}
	defer release()
	c.Next()
}
