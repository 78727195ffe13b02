package aap2agui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gin-gonic/gin"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/internal/edge"
	"github.com/aapagui/aapagui/bridge/internal/fault"
	"github.com/aapagui/aapagui/bridge/internal/tracing"
	"github.com/aapagui/aapagui/bridge/internal/turns"
	"github.com/aapagui/aapagui/internal/aside"
	"github.com/aapagui/aapagui/internal/cursor"
	"github.com/aapagui/aapagui/internal/ident"
	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/translate"
)

// Server is the aap2agui HTTP handler.
type Server struct {
	cfg    Config
	base   *turns.Base            // metrics, keys, users, limits and the engine (turns.Serving.NewBase)
	roster atomic.Pointer[roster] // the agents served (SetAgents replaces them)

	readiness *edge.Ready[readyCheck] // GET /readyz's check, reused for edge.ReadyTTL

	streaming atomic.Int64  // turns whose answer is streaming: they share MaxCheckpoints
	cache     *historyCache // the histories cached between turns (nil: none)
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.base.Engine.ServeHTTP(w, r) }

// MetricsHandler serves the server's metrics in the Prometheus text
// format, without any key check: for a listener of its own (see
// Config.SeparateMetrics).
func (s *Server) MetricsHandler() http.Handler { return s.base.Metrics.Handler() }

// auth checks the caller's API key (and its user token, when users are
// named by tokens) for a route that touches no session: the owner is the
// key's.
func (s *Server) auth(c *gin.Context) error { return s.authAs(c, s.base.Users.JWT()) }

// authUser is auth for the routes of sessions: the owner is the key's,
// scoped to the request's user when Config.Users names one.
func (s *Server) authUser(c *gin.Context) error { return s.authAs(c, true) }

func (s *Server) authAs(c *gin.Context, user bool) error {
	owner, err := s.base.Keys.Owner(c.Request)
	if err != nil {
		return errUnauthorized
	}
	if user {
		if owner, err = edge.Scope(s.base.Users, owner, c.Request); err != nil {
			return err
		}
	}
	if err := edge.Allow(s.base.Limits, owner); err != nil {
		return err
	}
	edge.SetOwner(c, owner)
	return nil
}

// ready answers GET /readyz from the last readiness check (edge.Ready):
// ready or not to anyone, the store and each agent's upstream only to a
// caller that may know (turns.Base.MayKnow).
func (s *Server) ready(c *gin.Context) error {
	mayKnow := s.base.MayKnow(c.Request)
	r, err := s.readiness.Get(c.Request.Context())
	notReady := ""
	if r.store != nil {
		notReady = "the store is not reachable"
	}
	return edge.AnswerReady(c, mayKnow, err, notReady, readiness{Status: "ok", Store: "ok", Upstreams: r.upstreams})
}

// meta answers GET /meta in the given version: its own number, and tool
// specs in its shape.
func (s *Server) meta(version int) gin.HandlerFunc {
	return func(c *gin.Context) {
		m := &aap.GetMetaResponse{Version: version, Agents: s.roster.Load().infos}
		var body any = m
		if version != aap.Version3 {
			body = m.V1(version)
		}
		edge.JSON(c, http.StatusOK, body)
	}
}

// readBody reads the (size-limited) body and decodes it into v; the error
// is a *fault.Failure (400, 408 or 413).
func readBody(c *gin.Context, v json.Unmarshaler) error {
	data, err := edge.ReadBody(c.Request)
	if err != nil {
		return err
	}
	if len(strings.TrimSpace(string(data))) == 0 {
		return invalid("invalid_body", "the request body is empty; send a JSON object")
	}
	if !json.Valid(data) {
		return invalid("invalid_json", "the request body is not valid JSON")
	}
	if err := v.UnmarshalJSON(data); err != nil {
		return invalid("invalid_request", strings.TrimPrefix(err.Error(), "aap: "))
	}
	return nil
}

func (s *Server) createSession(c *gin.Context) error {
	var req aap.PostSessionsRequest
	if err := readBody(c, &req); err != nil {
		return err
	}
	if err := checkCarried(c, req.AGUI); err != nil {
		return err
	}
	sess, err := s.newSession(c, &req, nil)
	if err != nil {
		return err
	}
	edge.JSON(c, http.StatusCreated, aap.PostSessionsResponse{SessionID: sess.ID})
	return nil
}

// newSession checks a new session's agent, tools and seed history, and
// the messages of its first turn (PUT /session), then stores it.
func (s *Server) newSession(c *gin.Context, req *aap.PostSessionsRequest, first []aap.Message) (*store.Session, error) {
	a := s.agentNamed(req.Agent.Name)
	if a == nil {
		return nil, s.unknownAgent(req.Agent.Name)
	}
	tracing.Agent(c.Request.Context(), a.name())
	if err := a.check(&req.Agent, req.Tools); err != nil {
		return nil, invalid("invalid_request", err.Error())
	}
	if err := checkSeed(req.Messages); err != nil {
		return nil, invalid("invalid_request", err.Error())
	}
	seed := make([]store.Entry, len(req.Messages))
	meta := metadataAt(req.AGUI) // the page's metadata of the messages, under the AG-UI extension
	for i, m := range append(req.Messages[:len(req.Messages):len(req.Messages)], first...) {
		id := ident.Random("msg-")
		if i < len(seed) {
			seed[i] = store.Entry{Message: m, AGUIID: id, AGUI: meta.extras(i)}
		}
		if _, err := translate.AppendMessageToAGUI(nil, m, id); err != nil {
			return nil, invalid("invalid_request", fmt.Sprintf("messages[%d]: %v", i, err))
		}
	}
	sess := &store.Session{
		ID: ident.Random("sess_"), Owner: edge.Owner(c), Agent: req.Agent, Tools: req.Tools,
		CreatedAt: s.cfg.Clock().UTC(),
	}
	if req.AGUI != nil {
		sess.State = req.AGUI.State // the page's, under the AG-UI extension
	}
	// A seed that ends with calls of the agent's server tools left
	// unanswered (a conversation carried over from elsewhere) waits for
	// their permissions, as AAP's tool call resumption describes.
	for _, tu := range translate.OpenCalls(store.Messages(seed)) {
		if a.serverTool(tu.Name) {
			sess.Interrupts = append(sess.Interrupts, translate.PermissionInterrupt(&aap.ToolCall{ToolCallID: tu.ToolCallID, Name: tu.Name, Input: tu.Input}))
		}
	}
	if err := s.cfg.Store.CreateSession(c.Request.Context(), sess, seed, s.cfg.Limits.SessionsPerKey); err != nil {
		return nil, err // store.ErrLimit: too_many_sessions (failure)
	}
	s.cache.put(sess.ID, sess.HistoryVersion, seed)
	s.base.Metrics.InterruptsChanged(len(sess.Interrupts))
	return sess, nil
}

// info renders a session for GET, with secret option values redacted.
func (s *Server) info(sess *store.Session) aap.SessionInfo {
	agent := sess.Agent
	if len(agent.Options) > 0 {
		a := s.agentNamed(agent.Name)
		opts := make(map[string]string, len(agent.Options))
		for k, v := range agent.Options {
			// A session of an agent no longer served shows no option's
			// value: which are secret is not known.
			if a == nil || a.secrets[k] {
				v = redactedValue
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
func (s *Server) getSession(version int) func(c *gin.Context) error {
	return func(c *gin.Context) error {
		var ht aap.HistoryType
		if h, asked := c.GetQuery("history"); asked && version == aap.Version1 {
			if ht = aap.HistoryType(h); ht != aap.HistoryFull && ht != aap.HistoryCompacted {
				return invalid("invalid_request", fmt.Sprintf("unknown history type %q (want full or compacted)", h))
			}
		}
		sess, err := s.loadSession(c)
		if err != nil {
			return err
		}
		info := s.info(sess)
		if version == aap.Version3 {
			if carries(c) {
				if info.AGUI, err = s.keptAGUI(c, sess); err != nil {
					return err
				}
			}
			edge.JSON(c, http.StatusOK, info)
			return nil
		}
		resp := info.V1()
		// Version 1 leaves out a history type the agent does not declare.
		if a := s.agentNamed(sess.Agent.Name); ht != "" && a != nil && a.cfg.Agent.Capabilities.SupportsHistory(ht) {
			if resp.History, err = s.historyOf(c, sess, ht); err != nil {
				return err
			}
		}
		edge.JSON(c, http.StatusOK, resp)
		return nil
	}
}

// loadSession reads the caller's session named in the path.
func (s *Server) loadSession(c *gin.Context) (*store.Session, error) {
	return s.cfg.Store.GetSession(c.Request.Context(), edge.Owner(c), c.Param("id"))
}

func (s *Server) deleteSession(c *gin.Context) error {
	if err := s.cfg.Store.DeleteSession(c.Request.Context(), edge.Owner(c), c.Param("id")); err != nil {
		return err
	}
	s.cache.drop(c.Param("id"))
	if err := s.cfg.Store.DeleteRunLogs(c.Request.Context(), edge.Owner(c), runKey(c.Param("id"))); err != nil {
		edge.Logger(c).Warn().Err(err).Str("session", c.Param("id")).Msg("the deleted session's run logs could not be dropped")
	}
	c.Status(http.StatusNoContent)
	return nil
}

// listSessions answers GET /sessions: session objects (version 3, and 2
// with tool specs in its shape) or ids (version 1), a page at a time.
func (s *Server) listSessions(version int) func(c *gin.Context) error {
	return func(c *gin.Context) error {
		var after int64
		if a := c.Query("after"); a != "" {
			var ok bool
			if after, ok = cursor.Parse(a); !ok {
				return invalid("invalid_cursor", "after is not a cursor this server issued")
			}
		}
		list, err := s.cfg.Store.ListSessions(c.Request.Context(), edge.Owner(c), after, s.cfg.PageSize+1)
		if err != nil {
			return err
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
			edge.JSON(c, http.StatusOK, resp)
		case aap.Version2:
			resp := aap.SessionListResponseV2{Sessions: make([]aap.SessionResponseV1, len(list)), Next: next}
			for i, sess := range list {
				info := s.info(sess)
				resp.Sessions[i] = info.V1()
			}
			edge.JSON(c, http.StatusOK, resp)
		default:
			resp := aap.GetSessionsResponse{Sessions: make([]aap.SessionInfo, len(list)), Next: next}
			for i, sess := range list {
				resp.Sessions[i] = s.info(sess)
			}
			edge.JSON(c, http.StatusOK, resp)
		}
		return nil
	}
}

func (s *Server) history(c *gin.Context) error {
	t, present := c.GetQuery("type")
	if !present || t == "" {
		return invalid("invalid_request", "the type query parameter is required: full or compacted")
	}
	ht := aap.HistoryType(t)
	if ht != aap.HistoryFull && ht != aap.HistoryCompacted {
		return invalid("invalid_request", fmt.Sprintf("unknown history type %q (want full or compacted)", t))
	}
	sess, err := s.loadSession(c)
	if err != nil {
		return err
	}
	// The history of a session whose agent is no longer served is still
	// the bridge's to give.
	if a := s.agentNamed(sess.Agent.Name); a != nil && !a.cfg.Agent.Capabilities.SupportsHistory(ht) {
		return fault.Fail(fault.KindNotFound, "history_type_not_supported", fmt.Sprintf("agent %q does not serve %s history", a.name(), ht))
	}
	hist, err := s.historyOf(c, sess, ht)
	if err != nil {
		return err
	}
	body, err := aap.AppendHistoryResponse(make([]byte, 0, 4096), hist)
	if err != nil {
		return err
	}
	c.Data(http.StatusOK, "application/json", append(body, '\n'))
	return nil
}

// historyOf reads the session's history as the given type.
func (s *Server) historyOf(c *gin.Context, sess *store.Session, ht aap.HistoryType) (*aap.SessionHistory, error) {
	entries, ok := s.cache.get(sess.ID, sess.HistoryVersion)
	if !ok {
		var err error
		if entries, err = s.cfg.Store.History(c.Request.Context(), sess.ID); err != nil {
			return nil, err
		}
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
	return &h, nil
}

// handle adapts a handler that returns its error to gin: the error is
// answered by fail. The handler and its answer run aside (see
// internal/aside): a stream later served on the same connection (a
// client's POST /sessions, then its turn) keeps the small stack it needs
// instead of the one decoding and storing a session grew.
func (s *Server) handle(h func(c *gin.Context) error) gin.HandlerFunc {
	here := s.handleHere(h)
	return func(c *gin.Context) { _ = aside.Do(func() error { here(c); return nil }) }
}

// handleHere is handle on the connection's goroutine, for a handler that
// streams or goes on down the chain: its deep steps run aside on their own
// (turns.Base.Run).
func (s *Server) handleHere(h func(c *gin.Context) error) gin.HandlerFunc {
	return func(c *gin.Context) {
		if err := h(c); err != nil {
			s.fail(c, err)
		}
	}
}

// fail answers a request that failed before its answer began: the one
// place aap2agui turns an error into a status, a code and a message
// (failure), and adds its WWW-Authenticate to an unauthorized caller.
func (s *Server) fail(c *gin.Context, err error) {
	edge.ReplyAs(c, s.failure(c, err), "aap")
}

// failure maps err to what the client is told, logging a failed store
// operation (at error level, or at debug level when only a client that
// went away saw it, which edge.Reply answers 499). A failed upstream call
// was logged where it failed, with its session.
func (s *Server) failure(c *gin.Context, err error) *fault.Failure {
	var f *fault.Failure
	var ue *upstreamError
	var held *store.HeldError
	switch {
	case errors.As(err, &f):
		return f
	case fault.StoreCause(err) != nil:
		// Before the upstream's error: a call cut short by a lost lease
		// is not the upstream's failure.
		return fault.StoreCause(err)
	case errors.As(err, &ue):
		return fault.Fail(ue.kind, ue.code, ue.message)
	case errors.As(err, &held):
		return fault.Locked("turn_in_progress", fmt.Sprintf("a turn is already running in this session; wait for it to finish (its lock runs out in %.1f s unless the turn is still alive)", held.Left.Seconds()), held.Left)
	case errors.Is(err, store.ErrLimit):
		return fault.Throttled("too_many_sessions", fmt.Sprintf("this key holds %d sessions, its limit; delete one to create another", s.cfg.Limits.SessionsPerKey), sessionRetry)
	case errors.Is(err, store.ErrNotFound):
		msg := "no session with id " + strconv.Quote(c.Param("id"))
		if c.Param("id") == "" {
			// PUT /session (versions 1 and 2), whose path holds no id:
			// the session it made was deleted while the turn started.
			// An empty id in a path is refused before (checkSessionID).
			msg = "the session no longer exists"
		}
		return fault.Fail(fault.KindNotFound, "session_not_found", msg)
	}
	edge.FailureLog(c, edge.Logger(c)).Err(err).Msg("store")
	return errStore
}

// newRoster makes the roster of agents, each resolved (Config.resolveAgents).
func (s *Server) newRoster(agents []AgentConfig) *roster {
	r := &roster{byName: make(map[string]*agent, len(agents))}
	for _, ac := range agents {
		a := newAgent(s.cfg.HTTPClient, ac)
		r.list = append(r.list, a)
		r.byName[a.name()] = a
		r.infos = append(r.infos, publicInfo(a.cfg.Agent))
	}
	return r
}

// agentNamed returns the agent served under name, or nil.
func (s *Server) agentNamed(name string) *agent { return s.roster.Load().byName[name] }

// SetAgents replaces the agents the Server serves, as Config.Agents sets
// them at New (the Server's defaults filled in, each agent checked the
// same way; an error changes nothing). GET /meta, /readyz and new
// sessions see the new agents at once. A session keeps its agent by name:
// an agent that is still served under its name takes the session's next
// turn with its new upstream and description; a session whose agent is
// gone gets 404 unknown_agent for its turns, and is served again if an
// agent of that name comes back. A turn in flight ends with the agent it
// started with. The program reloads its --agent-config this way on
// SIGHUP.
func (s *Server) SetAgents(agents []AgentConfig) error {
	if len(agents) == 0 {
		return errors.New("aap2agui: SetAgents: at least one agent is needed")
	}
	c := s.cfg
	c.Upstream, c.UpstreamHeader, c.Agent, c.OwnTools = "", nil, aap.AgentInfo{}, nil
	c.Agents = slices.Clone(agents)
	if err := c.resolveAgents(); err != nil {
		return err
	}
	s.roster.Store(s.newRoster(c.Agents))
	return nil
}

// unknownAgent is the answer to a new session naming an agent not served.
func (s *Server) unknownAgent(name string) error {
	agents := s.roster.Load().list
	names := make([]string, len(agents))
	for i, a := range agents {
		names[i] = fmt.Sprintf("%q", a.name())
	}
	return invalid("unknown_agent", fmt.Sprintf("agent %q is not served here (agents: %s)", name, strings.Join(names, ", ")))
}

// checkReady pings the store and, when it answers, probes every agent's
// upstream.
func (s *Server) checkReady(ctx context.Context) readyCheck {
	if err := s.cfg.Store.Ping(ctx); err != nil {
		s.cfg.Logger.Warn().Err(err).Msg("store not ready")
		return readyCheck{store: err}
	}
	return readyCheck{upstreams: s.probeUpstreams(ctx)}
}

// probeUpstreams asks every agent's upstream at once whether it answers
// (probe), within ctx.
func (s *Server) probeUpstreams(ctx context.Context) []upstreamReadiness {
	agents := s.roster.Load().list
	out := make([]upstreamReadiness, len(agents))
	var wg sync.WaitGroup
	for i, a := range agents {
		wg.Go(func() {
			out[i] = upstreamReadiness{Agent: a.name(), Status: "ok"}
			if err := a.probe(ctx); err != nil {
				out[i].Status, out[i].Error = "unreachable", err.Error()
			}
		})
	}
	wg.Wait()
	return out
}
