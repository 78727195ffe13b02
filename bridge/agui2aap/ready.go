package agui2aap

import (
	"context"
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/bridge/internal/edge"
)

// checkReady pings the store and asks the AAP server for its GET /meta
// with the bridge's own key (UpstreamAPIKey) or none, never a caller's: a
// 401 or 403 is an answer, as any other status would not be.
func (s *Server) checkReady(ctx context.Context) readyCheck {
	if err := s.cfg.Store.Ping(ctx); err != nil {
		s.cfg.Logger.Warn().Err(err).Msg("store not ready")
		return readyCheck{notReady: "the thread store is not reachable"}
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
func (s *Server) ready(c *gin.Context) error {
	r, err := s.readiness.Get(c.Request.Context())
	return edge.AnswerReady(c, s.mayKnow(c.Request), err, r.notReady, readiness{Status: "ok", Store: "ok", Upstream: "ok"})
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
