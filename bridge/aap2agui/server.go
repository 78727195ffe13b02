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
	"sync/atomic"

	"github.com/gin-gonic/gin"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/internal/metrics"
	"github.com/aapagui/aapagui/bridge/internal/web"
	"github.com/aapagui/aapagui/internal/apikey"
	"github.com/aapagui/aapagui/internal/cursor"
	"github.com/aapagui/aapagui/internal/ident"
	"github.com/aapagui/aapagui/internal/limit"
	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/translate"
)

// Server is the aap2agui HTTP handler.
type Server struct {
	cfg     Config
	keys    apikey.Keys
	secrets map[string]bool // names of secret options
	engine  *gin.Engine
	metrics *metrics.Metrics
	limits  *limit.Keys // nil: no per-key rate or turn limit

	streaming atomic.Int64 // turns whose answer is streaming: they share MaxCheckpoints
}

// New returns a Server for the configuration.
func New(cfg Config) (*Server, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	if err := cfg.Limits.check(); err != nil {
		return nil, err
	}
	if err := checkHeader(cfg.UpstreamHeader); err != nil {
		return nil, err
	}
	m := metrics.New(metrics.Options{Namespace: "aap2agui", Unit: "turn"})
	observe, hc, outer := web.Telemetry("aap2agui", m, cfg.TracerProvider, cfg.HTTPClient)
	cfg.Store, cfg.HTTPClient = store.Observe(cfg.Store, observe), hc
	s := &Server{cfg: cfg, keys: apikey.New(cfg.APIKeys), secrets: map[string]bool{}, metrics: m, limits: newLimits(cfg.Limits)}
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

	mounts, err := cfg.mounts()
	if err != nil {
		return nil, err
	}
	for _, m := range mounts {
		if err := s.route(e, m); err != nil {
			return nil, err
		}
	}
	s.engine = e
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
	if s.cfg.PublicMeta {
		g.GET("/meta", s.meta(m.Version))
	} else {
		g.GET("/meta", s.auth, s.meta(m.Version))
	}
	if m.Version == aap.Version3 {
		g.GET("/sessions", s.auth, s.listSessions(m.Version))
		g.POST("/sessions", s.auth, web.JSONBody, s.createSession)
		g.GET("/sessions/:id", s.auth, checkSessionID, s.getSession(m.Version))
		g.DELETE("/sessions/:id", s.auth, checkSessionID, s.deleteSession)
		g.GET("/sessions/:id/history", s.auth, checkSessionID, s.history)
		g.POST("/sessions/:id/turns", s.auth, checkSessionID, s.turnPlace, web.JSONBody, s.turn)
		return nil
	}
	// Versions 1 and 2: singular routes, PUT /session runs the first turn.
	g.GET("/sessions", s.auth, s.listSessions(m.Version))
	g.PUT("/session", s.auth, s.turnPlace, web.JSONBody, s.putSession)
	g.GET("/session/:id", s.auth, checkSessionID, s.getSession(m.Version))
	g.DELETE("/session/:id", s.auth, checkSessionID, s.deleteSession)
	g.POST("/session/:id", s.auth, checkSessionID, s.turnPlace, web.JSONBody, s.turnV1)
	if m.Version == aap.Version2 {
		g.GET("/session/:id/history", s.auth, checkSessionID, s.history)
	}
	return nil
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
	if !s.allow(c, owner) {
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

// meta answers GET /meta in the given version: its own number, and tool
// specs in its shape.
func (s *Server) meta(version int) gin.HandlerFunc {
	m := &aap.GetMetaResponse{Version: version, Agents: []aap.AgentInfo{s.cfg.Agent}}
	var body any = m
	if version != aap.Version3 {
		body = m.V1(version)
	}
	return func(c *gin.Context) { web.JSON(c, http.StatusOK, body) }
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
	sess, ok := s.newSession(c, &req, nil)
	if !ok {
		return
	}
	web.JSON(c, http.StatusCreated, aap.PostSessionsResponse{SessionID: sess.ID})
}

// newSession checks a new session's agent, tools and seed history, and
// the messages of its first turn (PUT /session), then stores it. It
// answers the client itself and returns false when it cannot.
func (s *Server) newSession(c *gin.Context, req *aap.PostSessionsRequest, first []aap.Message) (*store.Session, bool) {
	if req.Agent.Name != s.cfg.Agent.Name {
		web.Error(c, http.StatusNotFound, "unknown_agent", fmt.Sprintf("agent %q is not served here (the agent is %q)", req.Agent.Name, s.cfg.Agent.Name))
		return nil, false
	}
	if err := s.checkAgent(&req.Agent, req.Tools); err != nil {
		web.Error(c, http.StatusBadRequest, "invalid_request", err.Error())
		return nil, false
	}
	if err := checkSeed(req.Messages); err != nil {
		web.Error(c, http.StatusBadRequest, "invalid_request", err.Error())
		return nil, false
	}
	seed := make([]store.Entry, len(req.Messages))
	for i, m := range append(req.Messages[:len(req.Messages):len(req.Messages)], first...) {
		id := ident.Random("msg-")
		if i < len(seed) {
			seed[i] = store.Entry{Message: m, AGUIID: id}
		}
		if _, err := translate.AppendMessageToAGUI(nil, m, id); err != nil {
			web.Error(c, http.StatusBadRequest, "invalid_request", fmt.Sprintf("messages[%d]: %v", i, err))
			return nil, false
		}
	}
	sess := &store.Session{
		ID: ident.Random("sess_"), Owner: owner(c), Agent: req.Agent, Tools: req.Tools,
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
	if err := s.cfg.Store.CreateSessionWithin(c.Request.Context(), sess, seed, s.cfg.Limits.SessionsPerKey); err != nil {
		if errors.Is(err, store.ErrLimit) {
			s.tooManySessions(c)
		} else {
			s.storeError(c, err)
		}
		return nil, false
	}
	s.metrics.InterruptsChanged(len(sess.Interrupts))
	return sess, true
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

// getSession answers GET /sessions/:id (version 3) or GET /session/:id
// (versions 1 and 2, tool specs with inputSchema; version 1 adds the
// history ?history= asks for, when the agent serves that type).
func (s *Server) getSession(version int) gin.HandlerFunc {
	return func(c *gin.Context) {
		var ht aap.HistoryType
		if h, asked := c.GetQuery("history"); asked && version == aap.Version1 {
			if ht = aap.HistoryType(h); ht != aap.HistoryFull && ht != aap.HistoryCompacted {
				web.Error(c, http.StatusBadRequest, "invalid_request", fmt.Sprintf("unknown history type %q (want full or compacted)", h))
				return
			}
		}
		sess, ok := s.loadSession(c)
		if !ok {
			return
		}
		info := s.info(sess)
		if version == aap.Version3 {
			web.JSON(c, http.StatusOK, info)
			return
		}
		resp := info.V1()
		// Version 1 leaves out a history type the agent does not declare.
		if ht != "" && s.cfg.Agent.Capabilities.SupportsHistory(ht) {
			if resp.History, ok = s.historyOf(c, sess, ht); !ok {
				return
			}
		}
		web.JSON(c, http.StatusOK, resp)
	}
}

func (s *Server) loadSession(c *gin.Context) (*store.Session, bool) {
	return s.loadSessionID(c, c.Param("id"))
}

// loadSessionID reads the caller's session with the given id; it answers
// the client itself and returns false when it cannot.
func (s *Server) loadSessionID(c *gin.Context, id string) (*store.Session, bool) {
	sess, err := s.cfg.Store.GetSession(c.Request.Context(), owner(c), id)
	if err != nil {
		s.storeError(c, err)
		return nil, false
	}
	return sess, true
}

func (s *Server) storeError(c *gin.Context, err error) {
	if errors.Is(err, store.ErrNotFound) {
		msg := "no session with id " + strconv.Quote(c.Param("id"))
		if c.Param("id") == "" {
			// PUT /session (versions 1 and 2), whose path holds no id:
			// the session it made was deleted while the turn started.
			// An empty id in a path is refused before (checkSessionID).
			msg = "the session no longer exists"
		}
		web.Error(c, http.StatusNotFound, "session_not_found", msg)
		return
	}
	web.FailureLog(c, web.Logger(c)).Err(err).Msg("store")
	web.Error(c, http.StatusInternalServerError, "store_error", "the session store failed")
}

func (s *Server) deleteSession(c *gin.Context) {
	if err := s.cfg.Store.DeleteSession(c.Request.Context(), owner(c), c.Param("id")); err != nil {
		s.storeError(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// listSessions answers GET /sessions: session objects (version 3, and 2
// with tool specs in its shape) or ids (version 1), a page at a time.
func (s *Server) listSessions(version int) gin.HandlerFunc {
	return func(c *gin.Context) {
		var after int64
		if a := c.Query("after"); a != "" {
			var ok bool
			if after, ok = cursor.Parse(a); !ok {
				web.Error(c, http.StatusBadRequest, "invalid_cursor", "after is not a cursor this server issued")
				return
			}
		}
		list, err := s.cfg.Store.ListSessions(c.Request.Context(), owner(c), after, s.cfg.PageSize+1)
		if err != nil {
			s.storeError(c, err)
			return
		}
		next := ""
		if len(list) > s.cfg.PageSize {
			list = list[:s.cfg.PageSize]
			next = cursor.Encode(list[len(list)-1].Seq)
		}
		switch version {
		case aap.Version1:
			resp := aap.SessionListResponseV1{Sessions: make([]string, len(list)), Next: next}
			for i, sess := range list {
				resp.Sessions[i] = sess.ID
			}
			web.JSON(c, http.StatusOK, resp)
		case aap.Version2:
			resp := aap.SessionListResponseV2{Sessions: make([]aap.SessionResponseV1, len(list)), Next: next}
			for i, sess := range list {
				info := s.info(sess)
				resp.Sessions[i] = info.V1()
			}
			web.JSON(c, http.StatusOK, resp)
		default:
			resp := aap.GetSessionsResponse{Sessions: make([]aap.SessionInfo, len(list)), Next: next}
			for i, sess := range list {
				resp.Sessions[i] = s.info(sess)
			}
			web.JSON(c, http.StatusOK, resp)
		}
	}
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
	hist, ok := s.historyOf(c, sess, ht)
	if ok {
		web.JSON(c, http.StatusOK, aap.GetSessionHistoryResponse{History: *hist})
	}
}

// historyOf reads the session's history as the given type; it answers the
// client itself and returns false when the store fails.
func (s *Server) historyOf(c *gin.Context, sess *store.Session, ht aap.HistoryType) (*aap.SessionHistory, bool) {
	entries, err := s.cfg.Store.History(c.Request.Context(), sess.ID)
	if err != nil {
		s.storeError(c, err)
		return nil, false
	}
	msgs := make([]aap.Message, len(entries))
	for i, e := range entries {
		msgs[i] = e.Message
	}
	// The bridge does not compact: the agent behind it keeps its own
	// context, so the compacted history is the full one.
	var h aap.SessionHistory
	if ht == aap.HistoryFull {
		h.Full = msgs
	} else {
		h.Compacted = msgs
	}
	return &h, true
}
