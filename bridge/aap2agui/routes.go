package aap2agui

import (
	"fmt"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/internal/edge"
	"github.com/aapagui/aapagui/bridge/internal/turns"
	"github.com/aapagui/aapagui/store"
)

// New returns a Server for the configuration.
func New(cfg Config) (*Server, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	b, err := cfg.serving().NewBase(turns.BaseOptions{Name: "aap2agui", Unit: "turn", Keyed: len(cfg.APIKeys) > 0, Limits: cfg.Limits.keyLimits(), MaxBody: cfg.MaxBody})
	if err != nil {
		return nil, err
	}
	cfg.Store = store.ObserveSessions(cfg.Store, b.Observe)
	s := &Server{cfg: cfg, base: b}
	if cfg.HistoryCache > 0 {
		s.cache = newHistoryCache(cfg.HistoryCache)
	}
	s.roster.Store(s.newRoster(cfg.Agents))
	s.readiness = edge.NewReady(cfg.Clock, s.checkReady)
	e, m := b.Engine, b.Metrics
	e.GET("/readyz", s.handle(s.ready))
	if !cfg.SeparateMetrics {
		e.GET("/metrics", s.handle(s.auth), gin.WrapH(m.Handler()))
	}

	mounts, err := cfg.mounts()
	if err != nil {
		return nil, err
	}
	for _, m := range mounts {
		if err := s.route(e, m); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// route serves one protocol version's endpoints at its path. A path whose
// routes clash with another version's (version 1 at /sessions beside
// version 3 at the root, say) is an error, not a panic.
func (s *Server) route(e *gin.Engine, m Mount) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("aap2agui: AAP version %d at %s: its routes clash with another version's: %v", m.Version, m.Path, r)
		}
	}()
	g := e.Group(strings.TrimSuffix(m.Path, "/"))
	if m.Version == aap.Version3 {
		g.Use(grantAGUI)
	}
	auth, id, place, follow := s.handle(s.authUser), s.handle(checkSessionID), s.handleHere(s.turnPlace), s.handleHere(s.followPlace)
	if s.cfg.PublicMeta {
		g.GET("/meta", s.meta(m.Version))
	} else {
		g.GET("/meta", s.handle(s.auth), s.meta(m.Version))
	}
	if m.Version == aap.Version3 {
		g.GET("/sessions", auth, s.handle(s.listSessions(m.Version)))
		g.POST("/sessions", auth, edge.JSONBody, s.handle(s.createSession))
		g.GET("/sessions/:id", auth, id, s.handle(s.getSession(m.Version)))
		g.DELETE("/sessions/:id", auth, id, s.handle(s.deleteSession))
		g.GET("/sessions/:id/history", auth, id, s.handle(s.history))
		g.POST("/sessions/:id/turns", auth, id, place, edge.JSONBody, s.handleHere(s.turnV3))
		g.GET("/sessions/:id/turn", auth, id, follow, s.handleHere(s.rejoin))
		g.DELETE("/sessions/:id/turn", auth, id, s.handle(s.stopTurn))
		return nil
	}
	// Versions 1 and 2: singular routes, PUT /session runs the first turn.
	g.GET("/sessions", auth, s.handle(s.listSessions(m.Version)))
	g.PUT("/session", auth, place, edge.JSONBody, s.handleHere(s.putSession))
	g.GET("/session/:id", auth, id, s.handle(s.getSession(m.Version)))
	g.DELETE("/session/:id", auth, id, s.handle(s.deleteSession))
	g.POST("/session/:id", auth, id, place, edge.JSONBody, s.handleHere(s.turnV1))
	if m.Version == aap.Version2 {
		g.GET("/session/:id/history", auth, id, s.handle(s.history))
	}
	return nil
}

// turnPlace holds one of the caller's turn places (Limits.TurnsPerKey)
// for the rest of the request, or fails with a 429.
func (s *Server) turnPlace(c *gin.Context) error {
	release, err := edge.Place(s.base.Limits, edge.Owner(c), "too_many_turns", "turns")
	if err != nil {
		return err
	}
	defer release()
	c.Next()
	return nil
}

// followPlace holds one of the caller's places to follow a turn's stream
// (limit.FollowsPerTurn for each of Limits.TurnsPerKey) for the rest of
// the request, or fails with a 429 before the store is read.
func (s *Server) followPlace(c *gin.Context) error {
	release, err := edge.Follow(s.base.Limits, edge.Owner(c), "turns")
	if err != nil {
		return err
	}
	defer release()
	c.Next()
	return nil
}
