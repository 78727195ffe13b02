package aap2agui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/internal/metrics"
	"github.com/aapagui/aapagui/internal/web"
	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/translate"
)

// Server is the aap2agui HTTP handler.
type Server struct {
	cfg     Config
	keys    web.Keys
	secrets map[string]bool // names of secret options
	engine  *gin.Engine
	metrics *metrics.Metrics
}

// New returns a Server for the configuration.
func New(cfg Config) (*Server, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	m := metrics.New(metrics.Options{Namespace: "aap2agui", Unit: "turn"})
	observe, hc, outer := web.Telemetry("aap2agui", m, cfg.TracerProvider, cfg.HTTPClient)
	cfg.Store, cfg.HTTPClient = store.Observe(cfg.Store, observe), hc
	s := &Server{cfg: cfg, keys: web.NewKeys(cfg.APIKeys), secrets: map[string]bool{}, metrics: m}
	for _, o := range cfg.Agent.Options {
		if o.Type == aap.OptionSecret {
			s.secrets[o.Name] = true
		}
	}
	guards := []gin.HandlerFunc{web.CORS(cfg.CORSOrigins, "GET, POST, DELETE, OPTIONS"), web.BodyTimeout(cfg.BodyTimeout)}
	if s.keys.Open() {
		guards = append(guards, web.HostAllow(cfg.AllowedHosts))
	}
	e := web.NewEngine(cfg.Logger, cfg.MaxBody, outer, guards...)
	e.GET("/readyz", s.ready)
	if !cfg.SeparateMetrics {
		e.GET("/metrics", s.auth, gin.WrapH(m.Handler()))
	}

	g := e.Group(strings.TrimSuffix(cfg.BasePath, "/"))
	if cfg.PublicMeta {
		g.GET("/meta", s.meta)
	} else {
		g.GET("/meta", s.auth, s.meta)
	}
	g.GET("/sessions", s.auth, s.listSessions)
	g.POST("/sessions", s.auth, web.JSONBody, s.createSession)
	g.GET("/sessions/:id", s.auth, s.getSession)
	g.DELETE("/sessions/:id", s.auth, s.deleteSession)
	g.GET("/sessions/:id/history", s.auth, s.history)
	g.POST("/sessions/:id/turns", s.auth, web.JSONBody, s.turn)
	s.engine = e
	return s, nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.engine.ServeHTTP(w, r) }

// MetricsHandler serves the server's metrics in the Prometheus text
// format, without any key check: for a listener of its own (see
// Config.SeparateMetrics).
func (s *Server) MetricsHandler() http.Handler { return s.metrics.Handler() }

const ownerKey = "owner"

func (s *Server) auth(c *gin.Context) {
	owner, err := s.keys.Owner(c.Request)
	if err != nil {
		c.Header("WWW-Authenticate", `Bearer realm="aap"`)
		web.Error(c, http.StatusUnauthorized, "unauthorized", "a valid API key is required: Authorization: Bearer <key>")
		return
	}
	c.Set(ownerKey, owner)
}

func owner(c *gin.Context) string { return c.GetString(ownerKey) }

func (s *Server) ready(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), 2e9)
	defer cancel()
	if err := s.cfg.Store.Ping(ctx); err != nil {
		web.Logger(c).Warn().Err(err).Msg("store not ready")
		web.Error(c, http.StatusServiceUnavailable, "not_ready", "the store is not reachable")
		return
	}
	c.String(http.StatusOK, "ok\n")
}

func (s *Server) meta(c *gin.Context) {
	web.JSON(c, http.StatusOK, aap.GetMetaResponse{Version: aap.Version, Agents: []aap.AgentInfo{s.cfg.Agent}})
}

// readBody reads the (size-limited) body and decodes it into v, answering
// 400/413 itself; it reports whether the handler may go on.
func readBody(c *gin.Context, v json.Unmarshaler) bool {
	data, err := io.ReadAll(c.Request.Body)
	if err != nil {
		web.ReadError(c, err)
		return false
	}
	if len(strings.TrimSpace(string(data))) == 0 {
		web.Error(c, http.StatusBadRequest, "invalid_body", "the request body is empty; send a JSON object")
		return false
	}
	if !json.Valid(data) {
		web.Error(c, http.StatusBadRequest, "invalid_json", "the request body is not valid JSON")
		return false
	}
	if err := v.UnmarshalJSON(data); err != nil {
		web.Error(c, http.StatusBadRequest, "invalid_request", strings.TrimPrefix(err.Error(), "aap: "))
		return false
	}
	return true
}

// checkAgent validates server tool references, options and client tools
// against what the agent declares.
func (s *Server) checkAgent(cfg *aap.AgentConfig, clientTools []aap.ToolSpec) error {
	if cfg != nil {
		for i, t := range cfg.Tools {
			if s.ownTool(t.Name) {
				return fmt.Errorf("agent.tools[%d].name: agent %q runs %q on its own, whatever a session says (permissions: none in its configuration): it cannot be enabled or trusted", i, s.cfg.Agent.Name, t.Name)
			}
			if _, ok := s.cfg.Agent.Tool(t.Name); !ok {
				return fmt.Errorf("agent.tools[%d].name: %q is not a server tool of agent %q", i, t.Name, s.cfg.Agent.Name)
			}
		}
		for name, v := range cfg.Options {
			o, ok := s.cfg.Agent.Option(name)
			if !ok {
				return fmt.Errorf("agent.options.%s: agent %q has no such option", name, s.cfg.Agent.Name)
			}
			if o.Type == aap.OptionSelect && !slices.Contains(o.Options, v) {
				return fmt.Errorf("agent.options.%s: %q is not one of %q", name, v, o.Options)
			}
		}
	}
	seen := map[string]bool{}
	for i, t := range clientTools {
		if _, ok := s.cfg.Agent.Tool(t.Name); ok || s.ownTool(t.Name) {
			return fmt.Errorf("tools[%d].name: %q is already a server tool; tool names must be unique", i, t.Name)
		}
		if seen[t.Name] {
			return fmt.Errorf("tools[%d].name: %q is declared twice", i, t.Name)
		}
		seen[t.Name] = true
	}
	return nil
}

// ownTool reports whether name is a server tool the agent runs on its own
// (Config.OwnTools).
func (s *Server) ownTool(name string) bool {
	for _, t := range s.cfg.OwnTools {
		if t.Name == name {
			return true
		}
	}
	return false
}

func (s *Server) createSession(c *gin.Context) {
	var req aap.PostSessionsRequest
	if !readBody(c, &req) {
		return
	}
	if req.Agent.Name != s.cfg.Agent.Name {
		web.Error(c, http.StatusNotFound, "unknown_agent", fmt.Sprintf("agent %q is not served here (the agent is %q)", req.Agent.Name, s.cfg.Agent.Name))
		return
	}
	if err := s.checkAgent(&req.Agent, req.Tools); err != nil {
		web.Error(c, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	if err := checkSeed(req.Messages); err != nil {
		web.Error(c, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	seed := make([]store.Entry, len(req.Messages))
	for i, m := range req.Messages {
		seed[i] = store.Entry{Message: m, AGUIID: translate.RandomID("msg-")}
		if _, err := translate.AppendMessageToAGUI(nil, m, seed[i].AGUIID); err != nil {
			web.Error(c, http.StatusBadRequest, "invalid_request", fmt.Sprintf("messages[%d]: %v", i, err))
			return
		}
	}
	sess := &store.Session{
		ID: translate.RandomID("sess_"), Owner: owner(c), Agent: req.Agent, Tools: req.Tools,
		CreatedAt: s.cfg.Clock().UTC(),
	}
	// A seed that ends with calls of the agent's server tools left
	// unanswered (a conversation carried over from elsewhere) waits for
	// their permissions, as AAP's tool call resumption describes.
	p := pendingState(sess, seed)
	for _, id := range p.order {
		if _, server := s.cfg.Agent.Tool(p.calls[id]); server {
			sess.Interrupts = append(sess.Interrupts, translate.PermissionInterrupt(seedCall(seed, id)))
		}
	}
	if err := s.cfg.Store.CreateSession(c.Request.Context(), sess, seed); err != nil {
		s.storeError(c, err)
		return
	}
	s.metrics.InterruptsChanged(len(sess.Interrupts))
	web.JSON(c, http.StatusCreated, aap.PostSessionsResponse{SessionID: sess.ID})
}

// seedCall finds a tool call in the seed history.
func seedCall(seed []store.Entry, id string) *aap.ToolCall {
	for _, e := range seed {
		if am, ok := e.Message.(*aap.AssistantMessage); ok {
			for _, b := range am.Content.Blocks {
				if tu, ok := b.(*aap.ToolUseBlock); ok && tu.ToolCallID == id {
					return &aap.ToolCall{ToolCallID: tu.ToolCallID, Name: tu.Name, Input: tu.Input}
				}
			}
		}
	}
	return &aap.ToolCall{ToolCallID: id}
}

// info renders a session for GET, with secret option values redacted.
func (s *Server) info(sess *store.Session) aap.SessionInfo {
	agent := sess.Agent
	if len(agent.Options) > 0 {
		opts := make(map[string]string, len(agent.Options))
		for k, v := range agent.Options {
			if s.secrets[k] {
				v = "***"
			}
			opts[k] = v
		}
		agent.Options = opts
	}
	return aap.SessionInfo{SessionID: sess.ID, Agent: agent, Tools: sess.Tools}
}

func (s *Server) getSession(c *gin.Context) {
	sess, ok := s.loadSession(c)
	if !ok {
		return
	}
	web.JSON(c, http.StatusOK, s.info(sess))
}

func (s *Server) loadSession(c *gin.Context) (*store.Session, bool) {
	sess, err := s.cfg.Store.GetSession(c.Request.Context(), owner(c), c.Param("id"))
	if err != nil {
		s.storeError(c, err)
		return nil, false
	}
	return sess, true
}

func (s *Server) storeError(c *gin.Context, err error) {
	if errors.Is(err, store.ErrNotFound) {
		web.Error(c, http.StatusNotFound, "session_not_found", "no session with id "+strconv.Quote(c.Param("id")))
		return
	}
	web.Logger(c).Error().Err(err).Msg("store")
	web.Error(c, http.StatusInternalServerError, "store_error", "the session store failed")
}

func (s *Server) deleteSession(c *gin.Context) {
	if err := s.cfg.Store.DeleteSession(c.Request.Context(), owner(c), c.Param("id")); err != nil {
		s.storeError(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

func (s *Server) listSessions(c *gin.Context) {
	var after int64
	if a := c.Query("after"); a != "" {
		var ok bool
		if after, ok = web.ParseCursor(a); !ok {
			web.Error(c, http.StatusBadRequest, "invalid_cursor", "after is not a cursor this server issued")
			return
		}
	}
	list, err := s.cfg.Store.ListSessions(c.Request.Context(), owner(c), after, s.cfg.PageSize+1)
	if err != nil {
		s.storeError(c, err)
		return
	}
	resp := aap.GetSessionsResponse{Sessions: []aap.SessionInfo{}}
	if len(list) > s.cfg.PageSize {
		list = list[:s.cfg.PageSize]
		resp.Next = web.Cursor(list[len(list)-1].Seq)
	}
	for _, sess := range list {
		resp.Sessions = append(resp.Sessions, s.info(sess))
	}
	web.JSON(c, http.StatusOK, resp)
}

func (s *Server) history(c *gin.Context) {
	t, present := c.GetQuery("type")
	if !present || t == "" {
		web.Error(c, http.StatusBadRequest, "invalid_request", "the type query parameter is required: full or compacted")
		return
	}
	ht := aap.HistoryType(t)
	if ht != aap.HistoryFull && ht != aap.HistoryCompacted {
		web.Error(c, http.StatusBadRequest, "invalid_request", fmt.Sprintf("unknown history type %q (want full or compacted)", t))
		return
	}
	sess, ok := s.loadSession(c)
	if !ok {
		return
	}
	if !s.cfg.Agent.Capabilities.SupportsHistory(ht) {
		web.Error(c, http.StatusNotFound, "history_type_not_supported", fmt.Sprintf("agent %q does not serve %s history", s.cfg.Agent.Name, ht))
		return
	}
	entries, err := s.cfg.Store.History(c.Request.Context(), sess.ID)
	if err != nil {
		s.storeError(c, err)
		return
	}
	msgs := make([]aap.Message, len(entries))
	for i, e := range entries {
		msgs[i] = e.Message
	}
	// The bridge does not compact: the agent behind it keeps its own
	// context, so the compacted history is the full one.
	var resp aap.GetSessionHistoryResponse
	if ht == aap.HistoryFull {
		resp.History.Full = msgs
	} else {
		resp.History.Compacted = msgs
	}
	web.JSON(c, http.StatusOK, resp)
}
