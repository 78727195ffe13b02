package demo

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/internal/apikey"
	"github.com/aapagui/aapagui/internal/cursor"
	"github.com/aapagui/aapagui/internal/ident"
	"github.com/aapagui/aapagui/internal/jsonenc"
	"github.com/aapagui/aapagui/translate"
)

// AAPAgentOptions configures an AAPAgent. The zero value serves an open
// agent named "demo".
type AAPAgentOptions struct {
	// APIKeys are the bearer keys the agent accepts on every endpoint but
	// GET /meta, which is public. Each key sees only the sessions it
	// created. Empty means no authentication: every caller shares one set
	// of sessions.
	APIKeys []string
	// Name is the agent's name in /meta and in sessions. Empty means "demo".
	Name string
	// QuietPermissionResults makes the agent behave like AAP servers (the
	// reference TypeScript SDK 0.8 is one) that, once a tool_permission
	// answers a call, store the outcome in the history — the granted
	// tool's result, or the denial message — but send it neither as a
	// tool_result event nor in a none-mode response. The answer that
	// follows is sent as usual.
	QuietPermissionResults bool
	// Version is the AAP protocol version served: 1, 2 or 3 (zero means
	// 3). Versions 1 and 2 create a session with its first turn (PUT
	// /session, whose stream opens with session_start), take turns at
	// POST /session/{id} and write tool schemas as inputSchema; version 1
	// returns history inline in GET /session/{id}?history=… and lists
	// session ids, version 2 serves GET /session/{id}/history and lists
	// session objects.
	Version int
	// LongPace is the pause between the deltas of a "long <n>" answer in
	// delta mode, each sent as it comes: an answer that takes a while, to
	// leave and rejoin. Zero sends them all at once. A client that went
	// away ends the answer where it was.
	LongPace time.Duration
}

// AAPAgent is the demo agent speaking AAP (version 3 unless
// AAPAgentOptions.Version says otherwise): the version's endpoints under
// the handler's root, sessions kept in memory for the life of the process, and
// turns answered by the script (see Decide) in the delta, message and none
// response modes. It says what AGUIAgent says, so that a conversation looks
// the same through either protocol.
//
// It is strict where the AAP documentation is and the reference server is
// not: malformed requests are a 400 with {"error":{"code","message"}}, a
// tool result or permission must answer a pending call, turn_stop always
// ends a stream, a granted permission emits tool_result (unless
// QuietPermissionResults), and tool permissions never enter the history.
type AAPAgent struct {
	info    aap.AgentInfo
	version int             // the protocol version served
	quiet   bool            // QuietPermissionResults
	pace    time.Duration   // LongPace
	secrets map[string]bool // names of secret options
	keys    apikey.Keys
	mux     *http.ServeMux

	mu       sync.Mutex
	sessions map[string]*aapSession
	owners   map[string][]*aapSession // each owner's sessions, oldest first
	seq      int64
}

// aapSession is one session. Its fields are guarded by AAPAgent.mu. The
// slices and maps it holds are replaced, never modified in place (history
// only grows), so a copy of them taken under the lock can be encoded after
// it is released.
type aapSession struct {
	id, owner string
	seq       int64
	agent     aap.AgentConfig
	tools     []aap.ToolSpec
	history   []aap.Message
	// pending are the tool calls of the last turn still waiting for a tool
	// result or a permission.
	pending []pendingCall
	// busy is set while a turn runs.
	busy bool
}

// pendingCall is a tool call waiting for the application.
type pendingCall struct {
	id, name string
	input    json.RawMessage
	// permission is set for an untrusted server tool call, which waits for
	// a tool_permission rather than a tool result.
	permission bool
}

const (
	// aapPageSize is the number of sessions in a page of GET /sessions.
	aapPageSize = 20
	// maxAAPBody bounds a request body.
	maxAAPBody = 32 << 20
	// flushSize is the size at which a stream's buffer is written out.
	flushSize = 32 << 10
	// redacted replaces the values of secret options.
	redacted = "***"
	// unansweredText closes a tool call that a new user message leaves
	// unanswered, so that every call in the history has a result.
	unansweredText = aap.ToolCallNotAnswered + ": the user sent a new message instead."
)

// NewAAPAgent returns the demo agent with the given options.
func NewAAPAgent(opts AAPAgentOptions) *AAPAgent {
	name := opts.Name
	if name == "" {
		name = "demo"
	}
	a := &AAPAgent{
		info: aap.AgentInfo{
			Name:        name,
			Title:       "Demo agent",
			Version:     "1.0.0",
			Description: "A scripted agent for trying AAP clients: echo, think, fail, weather in <place>, search <query>, long <n>.",
			Tools:       []aap.ToolSpec{SearchToolSpec},
			Options: []aap.AgentOption{
				{Type: aap.OptionText, Name: "language", Default: "English"},
				{Type: aap.OptionSecret, Name: "api_key", Default: ""},
			},
			Capabilities: &aap.Capabilities{
				History:     &aap.HistoryCapabilities{Compacted: &aap.Empty{}, Full: &aap.Empty{}},
				Stream:      &aap.StreamCapabilities{Delta: &aap.Empty{}, Message: &aap.Empty{}, None: &aap.Empty{}},
				Application: &aap.ApplicationCapabilities{Tools: &aap.Empty{}},
				Image:       &aap.ImageCapabilities{HTTP: &aap.Empty{}, Data: &aap.Empty{}},
			},
		},
		quiet:    opts.QuietPermissionResults,
		pace:     opts.LongPace,
		secrets:  map[string]bool{},
		keys:     apikey.New(opts.APIKeys),
		sessions: map[string]*aapSession{},
		owners:   map[string][]*aapSession{},
	}
	for _, o := range a.info.Options {
		if o.Type == aap.OptionSecret {
			a.secrets[o.Name] = true
		}
	}
	a.version = opts.Version
	if a.version == 0 {
		a.version = aap.Version3
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /meta", a.meta)
	mux.HandleFunc("GET /sessions", a.authed(a.listSessions))
	// Each path answers the methods it has no route for: a pattern with a
	// method is more specific, and the catch-all "/" would otherwise take
	// them before ServeMux's own (plain-text) 405.
	allowed := map[string]string{"/meta": "GET, HEAD"}
	if a.version == aap.Version3 {
		mux.HandleFunc("POST /sessions", a.authed(a.createSession))
		mux.HandleFunc("GET /sessions/{id}", a.authed(a.getSession))
		mux.HandleFunc("DELETE /sessions/{id}", a.authed(a.deleteSession))
		mux.HandleFunc("GET /sessions/{id}/history", a.authed(a.history))
		mux.HandleFunc("POST /sessions/{id}/turns", a.authed(a.turn))
		maps.Copy(allowed, map[string]string{
			"/sessions":              "GET, HEAD, POST",
			"/sessions/{id}":         "GET, HEAD, DELETE",
			"/sessions/{id}/history": "GET, HEAD",
			"/sessions/{id}/turns":   "POST",
		})
	} else {
		mux.HandleFunc("PUT /session", a.authed(a.putSession))
		mux.HandleFunc("GET /session/{id}", a.authed(a.getSession))
		mux.HandleFunc("DELETE /session/{id}", a.authed(a.deleteSession))
		mux.HandleFunc("POST /session/{id}", a.authed(a.turn))
		maps.Copy(allowed, map[string]string{
			"/sessions":     "GET, HEAD",
			"/session":      "PUT",
			"/session/{id}": "GET, HEAD, DELETE, POST",
		})
		if a.version == aap.Version2 {
			mux.HandleFunc("GET /session/{id}/history", a.authed(a.history))
			allowed["/session/{id}/history"] = "GET, HEAD"
		}
	}
	for path, allow := range allowed {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", allow)
			aap.WriteError(w, http.StatusMethodNotAllowed, "method_not_allowed", r.Method+" is not allowed on "+r.URL.Path+" (allowed: "+allow+")")
		})
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		aap.WriteError(w, http.StatusNotFound, "not_found", "no such endpoint: "+r.URL.Path)
	})
	a.mux = mux
	return a
}

// ServeHTTP serves the AAP endpoints.
func (a *AAPAgent) ServeHTTP(w http.ResponseWriter, r *http.Request) { a.mux.ServeHTTP(w, r) }

// authed checks the API key and passes the key's owner id to h.
func (a *AAPAgent) authed(h func(w http.ResponseWriter, r *http.Request, owner string)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		owner, err := a.keys.Owner(r)
		if err != nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="aap"`)
			aap.WriteError(w, http.StatusUnauthorized, "unauthorized", "a valid API key is required: Authorization: Bearer <key>")
			return
		}
		h(w, r, owner)
	}
}

func (a *AAPAgent) meta(w http.ResponseWriter, _ *http.Request) {
	m := &aap.GetMetaResponse{Version: a.version, Agents: []aap.AgentInfo{a.info}}
	if a.version != aap.Version3 {
		writeJSON(w, http.StatusOK, m.V1(a.version))
		return
	}
	writeJSON(w, http.StatusOK, m)
}

// writeJSON writes v without HTML escaping, which would rewrite raw JSON
// such as tool input and schemas.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var b bytes.Buffer
	_ = jsonenc.Encode(&b, v)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(b.Len())) // with its length, as JSON frameworks (Express, FastAPI) answer
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

// readBody reads the body and decodes it with v's strict decoder, answering
// 400 or 413 itself; it reports whether the handler may go on.
func readBody(w http.ResponseWriter, r *http.Request, v json.Unmarshaler) bool {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxAAPBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			aap.WriteError(w, http.StatusRequestEntityTooLarge, "body_too_large", "the request body is larger than the limit of "+strconv.FormatInt(mbe.Limit, 10)+" bytes")
			return false
		}
		aap.WriteError(w, http.StatusBadRequest, "invalid_body", "could not read the request body: "+err.Error())
		return false
	}
	if len(bytes.TrimSpace(data)) == 0 {
		aap.WriteError(w, http.StatusBadRequest, "invalid_body", "the request body is empty; send a JSON object")
		return false
	}
	if !json.Valid(data) {
		aap.WriteError(w, http.StatusBadRequest, "invalid_json", "the request body is not valid JSON")
		return false
	}
	if err := v.UnmarshalJSON(data); err != nil {
		aap.WriteError(w, http.StatusBadRequest, "invalid_request", strings.TrimPrefix(err.Error(), "aap: "))
		return false
	}
	return true
}

// checkConfig validates server tool references, options and client tools
// against what the agent declares.
func (a *AAPAgent) checkConfig(cfg *aap.AgentConfig, clientTools []aap.ToolSpec) error {
	if cfg != nil {
		seen := map[string]bool{}
		for i, t := range cfg.Tools {
			if _, ok := a.info.Tool(t.Name); !ok {
				return fmt.Errorf("agent.tools[%d].name: %q is not a server tool of agent %q", i, t.Name, a.info.Name)
			}
			if seen[t.Name] {
				return fmt.Errorf("agent.tools[%d].name: %q is listed twice", i, t.Name)
			}
			seen[t.Name] = true
		}
		names := make([]string, 0, len(cfg.Options))
		for name := range cfg.Options {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			if _, ok := a.info.Option(name); !ok {
				return fmt.Errorf("agent.options.%s: agent %q has no such option", name, a.info.Name)
			}
		}
	}
	seen := map[string]bool{}
	for i, t := range clientTools {
		if _, ok := a.info.Tool(t.Name); ok {
			return fmt.Errorf("tools[%d].name: %q is already a server tool; tool names must be unique", i, t.Name)
		}
		if seen[t.Name] {
			return fmt.Errorf("tools[%d].name: %q is declared twice", i, t.Name)
		}
		seen[t.Name] = true
	}
	return nil
}

func (a *AAPAgent) createSession(w http.ResponseWriter, r *http.Request, owner string) {
	var req aap.PostSessionsRequest
	if !readBody(w, r, &req) {
		return
	}
	s, ok := a.newSession(w, owner, &req, false)
	if !ok {
		return
	}
	writeJSON(w, http.StatusCreated, aap.PostSessionsResponse{SessionID: s.id})
}

// putSession answers PUT /session (versions 1 and 2): the session is made
// of the messages before the last, busy, and the last (a user message) is
// its first turn, whose answer opens with session_start.
func (a *AAPAgent) putSession(w http.ResponseWriter, r *http.Request, owner string) {
	var req aap.PutSessionRequest
	if !readBody(w, r, &req) {
		return
	}
	s, ok := a.newSession(w, owner, &aap.PostSessionsRequest{Agent: req.Agent, Messages: req.Seed(), Tools: aap.ToolSpecsFromV1(req.Tools)}, true)
	if !ok {
		return
	}
	a.mu.Lock()
	// The first turn cannot fail its checks: a user message answers
	// whatever the seed left open, and the configuration was checked.
	t, _, _ := a.startTurn(s, &aap.PostSessionTurnRequest{Messages: req.Turn()})
	a.mu.Unlock()
	a.play(w, r, s, t, req.Mode(), s.id)
}

// newSession checks a new session's configuration and stores it, busy
// when its first turn follows at once. It answers the client itself and
// returns false when the request is refused.
func (a *AAPAgent) newSession(w http.ResponseWriter, owner string, req *aap.PostSessionsRequest, busy bool) (*aapSession, bool) {
	if req.Agent.Name != a.info.Name {
		aap.WriteError(w, http.StatusNotFound, "unknown_agent", fmt.Sprintf("agent %q is not served here (the agent is %q)", req.Agent.Name, a.info.Name))
		return nil, false
	}
	if err := a.checkConfig(&req.Agent, req.Tools); err != nil {
		aap.WriteError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return nil, false
	}
	history := slices.Clip(req.Messages)
	if history == nil {
		history = []aap.Message{}
	}
	s := &aapSession{
		id:      ident.Random("sess_"),
		owner:   owner,
		agent:   req.Agent,
		tools:   req.Tools,
		history: history,
		pending: pendingIn(history),
		busy:    busy,
	}
	a.mu.Lock()
	a.seq++
	s.seq = a.seq
	a.sessions[s.id] = s
	a.owners[owner] = append(a.owners[owner], s)
	a.mu.Unlock()
	return s, true
}

// pendingIn finds the tool calls since the last user message of a seeded
// history that have no result yet. A web_search call waits for permission
// (a trusted one would have its result), any other call for its result.
func pendingIn(history []aap.Message) []pendingCall {
	var calls []pendingCall
	for _, tu := range translate.OpenCalls(slices.Values(history)) {
		calls = append(calls, pendingCall{id: tu.ToolCallID, name: tu.Name, input: tu.Input, permission: tu.Name == SearchTool})
	}
	return calls
}

// lookup returns the owner's session with the given id. The caller holds
// a.mu.
func (a *AAPAgent) lookup(owner, id string) *aapSession {
	s := a.sessions[id]
	if s == nil || s.owner != owner {
		return nil
	}
	return s
}

func sessionNotFound(w http.ResponseWriter, id string) {
	aap.WriteError(w, http.StatusNotFound, "session_not_found", "no session with id "+strconv.Quote(id))
}

// infoOf renders a session, with secret option values redacted. The caller
// holds a.mu.
func (a *AAPAgent) infoOf(s *aapSession) aap.SessionInfo {
	agent := s.agent
	if len(agent.Options) > 0 {
		opts := make(map[string]string, len(agent.Options))
		for k, v := range agent.Options {
			if a.secrets[k] {
				v = redacted
			}
			opts[k] = v
		}
		agent.Options = opts
	}
	return aap.SessionInfo{SessionID: s.id, Agent: agent, Tools: s.tools}
}

// getSession answers GET /sessions/{id}, or GET /session/{id} in versions
// 1 and 2 (tool specs with inputSchema; in version 1, the history
// ?history= asks for, inline).
func (a *AAPAgent) getSession(w http.ResponseWriter, r *http.Request, owner string) {
	var ht aap.HistoryType
	if h, asked := r.URL.Query()["history"]; asked && a.version == aap.Version1 {
		if ht = aap.HistoryType(h[0]); ht != aap.HistoryFull && ht != aap.HistoryCompacted {
			aap.WriteError(w, http.StatusBadRequest, "invalid_request", fmt.Sprintf("unknown history type %q (want full or compacted)", h[0]))
			return
		}
	}
	id := r.PathValue("id")
	a.mu.Lock()
	s := a.lookup(owner, id)
	var info aap.SessionInfo
	var msgs []aap.Message
	if s != nil {
		info = a.infoOf(s)
		msgs = slices.Clip(s.history)
	}
	a.mu.Unlock()
	if s == nil {
		sessionNotFound(w, id)
		return
	}
	if a.version == aap.Version3 {
		writeJSON(w, http.StatusOK, info)
		return
	}
	resp := info.V1()
	if ht != "" {
		resp.History = historyOf(ht, msgs)
	}
	writeJSON(w, http.StatusOK, resp)
}

// historyOf is the history of the given type: the demo agent does not
// compact, so both are the whole conversation.
func historyOf(ht aap.HistoryType, msgs []aap.Message) *aap.SessionHistory {
	if ht == aap.HistoryFull {
		return &aap.SessionHistory{Full: msgs}
	}
	return &aap.SessionHistory{Compacted: msgs}
}

func (a *AAPAgent) deleteSession(w http.ResponseWriter, r *http.Request, owner string) {
	id := r.PathValue("id")
	a.mu.Lock()
	s := a.lookup(owner, id)
	if s != nil {
		delete(a.sessions, id)
		a.owners[owner] = slices.DeleteFunc(a.owners[owner], func(x *aapSession) bool { return x == s })
		if len(a.owners[owner]) == 0 {
			delete(a.owners, owner)
		}
	}
	a.mu.Unlock()
	if s == nil {
		sessionNotFound(w, id)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (a *AAPAgent) listSessions(w http.ResponseWriter, r *http.Request, owner string) {
	var after int64
	if c := r.URL.Query().Get("after"); c != "" {
		var ok bool
		if after, ok = cursor.Parse(c); !ok {
			aap.WriteError(w, http.StatusBadRequest, "invalid_cursor", "after is not a cursor this server issued")
			return
		}
	}
	resp := aap.GetSessionsResponse{Sessions: []aap.SessionInfo{}}
	a.mu.Lock()
	list := a.owners[owner]
	i := sort.Search(len(list), func(i int) bool { return list[i].seq > after })
	end := min(i+aapPageSize, len(list))
	for _, s := range list[i:end] {
		resp.Sessions = append(resp.Sessions, a.infoOf(s))
	}
	if end < len(list) {
		resp.Next = cursor.Encode(list[end-1].seq)
	}
	a.mu.Unlock()
	switch a.version {
	case aap.Version1: // ids only
		ids := aap.SessionListResponseV1{Sessions: make([]string, len(resp.Sessions)), Next: resp.Next}
		for i, info := range resp.Sessions {
			ids.Sessions[i] = info.SessionID
		}
		writeJSON(w, http.StatusOK, ids)
	case aap.Version2:
		objs := aap.SessionListResponseV2{Sessions: make([]aap.SessionResponseV1, len(resp.Sessions)), Next: resp.Next}
		for i := range resp.Sessions {
			objs.Sessions[i] = resp.Sessions[i].V1()
		}
		writeJSON(w, http.StatusOK, objs)
	default:
		writeJSON(w, http.StatusOK, resp)
	}
}

func (a *AAPAgent) history(w http.ResponseWriter, r *http.Request, owner string) {
	t := r.URL.Query().Get("type")
	ht := aap.HistoryType(t)
	switch {
	case t == "":
		aap.WriteError(w, http.StatusBadRequest, "invalid_request", "the type query parameter is required: full or compacted")
		return
	case ht != aap.HistoryFull && ht != aap.HistoryCompacted:
		aap.WriteError(w, http.StatusBadRequest, "invalid_request", fmt.Sprintf("unknown history type %q (want full or compacted)", t))
		return
	}
	id := r.PathValue("id")
	a.mu.Lock()
	s := a.lookup(owner, id)
	var msgs []aap.Message
	if s != nil {
		msgs = slices.Clip(s.history)
	}
	a.mu.Unlock()
	if s == nil {
		sessionNotFound(w, id)
		return
	}
	writeJSON(w, http.StatusOK, aap.GetSessionHistoryResponse{History: *historyOf(ht, msgs)})
}

// answer is a pending call and what the turn answered it with: a tool
// result or a permission.
type answer struct {
	call   pendingCall
	result *aap.ToolMessage
	perm   *aap.ToolPermissionMessage
}

// checkAnswers matches a turn of tool results and permissions with the
// pending calls: each must answer a pending call of the right kind, and
// every pending call must be answered.
func checkAnswers(pending []pendingCall, msgs []aap.Message) ([]answer, error) {
	find := func(id string) (pendingCall, bool) {
		for _, c := range pending {
			if c.id == id {
				return c, true
			}
		}
		return pendingCall{}, false
	}
	answers := make([]answer, 0, len(msgs))
	for i, m := range msgs {
		switch m := m.(type) {
		case *aap.ToolMessage:
			c, ok := find(m.ToolCallID)
			switch {
			case !ok:
				return nil, fmt.Errorf("messages[%d].toolCallId: no tool call %q is waiting for a result", i, m.ToolCallID)
			case c.permission:
				return nil, fmt.Errorf("messages[%d]: tool call %q is waiting for a tool_permission, not a result", i, m.ToolCallID)
			}
			answers = append(answers, answer{call: c, result: m})
		case *aap.ToolPermissionMessage:
			c, ok := find(m.ToolCallID)
			switch {
			case !ok:
				return nil, fmt.Errorf("messages[%d].toolCallId: no tool call %q is waiting for permission", i, m.ToolCallID)
			case !c.permission:
				return nil, fmt.Errorf("messages[%d]: tool call %q is waiting for its result, not a tool_permission", i, m.ToolCallID)
			}
			answers = append(answers, answer{call: c, perm: m})
		}
	}
	for _, c := range pending {
		if !slices.ContainsFunc(answers, func(an answer) bool { return an.call.id == c.id }) {
			what := "its result"
			if c.permission {
				what = "a tool_permission"
			}
			return nil, fmt.Errorf("tool call %q is waiting for %s: answer every pending call in the same turn", c.id, what)
		}
	}
	return answers, nil
}

// aapTurn is what the script needs to answer a turn, taken from the session
// under the lock.
type aapTurn struct {
	user    *aap.UserMessage // the turn's user message, or nil
	answers []answer         // otherwise, the answered calls in request order
	weather bool             // the application declared get_weather
	search  bool             // web_search is enabled
	trusted bool             // and trusted
}

func (a *AAPAgent) turn(w http.ResponseWriter, r *http.Request, owner string) {
	var req aap.PostSessionTurnRequest
	if a.version == aap.Version3 {
		if !readBody(w, r, &req) {
			return
		}
	} else {
		var old aap.SessionTurnRequestV1 // tool specs with inputSchema
		if !readBody(w, r, &old) {
			return
		}
		req = *old.V3()
	}
	id := r.PathValue("id")
	a.mu.Lock()
	s := a.lookup(owner, id)
	if s == nil {
		a.mu.Unlock()
		sessionNotFound(w, id)
		return
	}
	if s.busy {
		a.mu.Unlock()
		aap.WriteError(w, http.StatusConflict, "turn_in_progress", "a turn is already running in this session; wait for it to finish")
		return
	}
	t, code, err := a.startTurn(s, &req)
	if err != nil {
		a.mu.Unlock()
		aap.WriteError(w, http.StatusBadRequest, code, err.Error())
		return
	}
	s.busy = true
	a.mu.Unlock()
	a.play(w, r, s, t, req.Mode(), "")
}

// play runs a turn of a busy session, records it and frees the session.
// A sessionStart id opens the answer with session_start (PUT /session).
func (a *AAPAgent) play(w http.ResponseWriter, r *http.Request, s *aapSession, t *aapTurn, mode aap.StreamMode, sessionStart string) {
	committed := false
	defer func() {
		if !committed { // the turn did not get to commit: free the session
			a.release(s)
		}
	}()

	out := newTurnOutput(w, mode, sessionStart)
	out.quiet, out.pace, out.gone = a.quiet, a.pace, r.Context().Done()
	t.run(out)
	// The session is updated before the last write, which holds turn_stop:
	// a client that sends its next turn as soon as it sees turn_stop must
	// find this one finished.
	a.mu.Lock()
	s.history = append(s.history, out.msgs...)
	s.pending = out.pending
	s.busy = false
	a.mu.Unlock()
	committed = true
	out.end()
}

func (a *AAPAgent) release(s *aapSession) {
	a.mu.Lock()
	s.busy = false
	a.mu.Unlock()
}

// startTurn validates the turn against the session, applies its overrides
// and stores its messages: the results closing calls a new user message
// leaves unanswered, then the user message or the tool results (tool
// permissions are answers, not history). Its error comes with the code of
// the 400: invalid_request for a bad configuration, invalid_turn for
// messages that do not fit what the session is waiting for. The caller
// holds a.mu.
func (a *AAPAgent) startTurn(s *aapSession, req *aap.PostSessionTurnRequest) (*aapTurn, string, error) {
	if req.Agent != nil && req.Agent.Name != "" && req.Agent.Name != s.agent.Name {
		return nil, "invalid_request", fmt.Errorf("agent.name: a session's agent cannot change (it is %q)", s.agent.Name)
	}
	if err := a.checkConfig(req.Agent, req.Tools); err != nil {
		return nil, "invalid_request", err
	}
	t := &aapTurn{}
	var added []aap.Message
	if u, ok := req.Messages[0].(*aap.UserMessage); ok {
		t.user = u
		for _, c := range s.pending {
			added = append(added, &aap.ToolMessage{ToolCallID: c.id, Content: aap.TextContent(unansweredText)})
		}
		added = append(added, u)
	} else {
		answers, err := checkAnswers(s.pending, req.Messages)
		if err != nil {
			return nil, "invalid_turn", err
		}
		t.answers = answers
		for _, m := range req.Messages {
			if m.Role() == aap.RoleTool {
				added = append(added, m)
			}
		}
	}

	s.agent.Override(req.Agent)
	if req.Tools != nil {
		s.tools = req.Tools
	}
	s.history = append(s.history, added...)
	s.pending = nil

	t.weather = slices.ContainsFunc(s.tools, func(x aap.ToolSpec) bool { return x.Name == WeatherTool })
	for _, ref := range s.agent.Tools {
		if ref.Name == SearchTool {
			t.search, t.trusted = true, ref.Trust
		}
	}
	return t, "", nil
}

// run plays the script for the turn.
func (t *aapTurn) run(o *turnOutput) {
	if t.user == nil {
		for _, an := range t.answers {
			switch {
			case an.result != nil:
				content := translate.ToolContentString(an.result.Content)
				if an.call.name == WeatherTool {
					o.text(WeatherText(inputString(an.call.input, "location"), content))
				} else {
					o.text(ResultText(content))
				}
			case an.perm.Granted:
				result := SearchResult(inputString(an.call.input, "query"))
				o.permissionResult(an.call.id, result)
				o.text(SearchAnswer(result))
			default:
				o.permissionResult(an.call.id, DeniedResult(an.perm.Reason))
				o.text(DeniedText(an.perm.Reason))
			}
			o.closeMessage()
		}
		o.stop(aap.StopEndTurn)
		return
	}
	act := Decide(userText(t.user.Content))
	switch act.Kind {
	case Fail:
		o.text(FailPrefix)
		o.stop(aap.StopError)
		return
	case Think:
		o.thinking(ThinkingText(act.Arg))
		o.text(DoneThinking)
	case Weather:
		if !t.weather {
			o.text(NoWeatherTool)
			break
		}
		id := ident.Random("call_")
		input := objectInput("location", act.Arg)
		o.toolCall(id, WeatherTool, input)
		o.pending = append(o.pending, pendingCall{id: id, name: WeatherTool, input: input})
		o.stop(aap.StopToolUse)
		return
	case Search:
		if !t.search {
			o.text(NoSearchTool)
			break
		}
		id := ident.Random("call_")
		input := objectInput("query", act.Arg)
		o.toolCall(id, SearchTool, input)
		if !t.trusted {
			o.pending = append(o.pending, pendingCall{id: id, name: SearchTool, input: input, permission: true})
			o.stop(aap.StopToolUse)
			return
		}
		result := SearchResult(act.Arg)
		o.toolResult(id, result)
		o.text(SearchAnswer(result))
	case Long:
		o.long(act.N)
	default:
		o.text(EchoText(act.Arg))
	}
	o.stop(aap.StopEndTurn)
}

// userText is the text of a user message; text blocks are joined with a
// space, as AGUIAgent joins the text parts of a message.
func userText(c aap.Content) string {
	if !c.IsBlocks() {
		return c.Text
	}
	var parts []string
	for _, b := range c.Blocks {
		if t, ok := b.(*aap.TextBlock); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, " ")
}

// objectInput is the tool input {"<key>":"<value>"}, without encoding/json's
// HTML escaping.
func objectInput(key, value string) json.RawMessage {
	in := jsonenc.AppendString(append([]byte(nil), '{'), key)
	in = append(in, ':')
	in = jsonenc.AppendString(in, value)
	return append(in, '}')
}

// inputString reads a string argument of a tool call; it is empty when the
// argument is missing or not a string.
func inputString(input json.RawMessage, key string) string {
	var m map[string]any
	_ = json.Unmarshal(input, &m)
	s, _ := m[key].(string)
	return s
}

// turnOutput renders a turn in its response mode while recording the
// messages it adds to the history. Stream frames are appended to a buffer
// written out in flushSize pieces; in StreamNone mode nothing is written
// until end.
type turnOutput struct {
	mode    aap.StreamMode
	w       http.ResponseWriter
	rc      *http.ResponseController
	buf     []byte
	err     error // the first write error: the client is gone
	started bool
	delta   aap.TextDelta // reused for every text delta

	open       []aap.ContentBlock   // blocks of the assistant message being said
	msgs       []aap.Message        // the messages the turn adds to the history
	quiet      bool                 // permission results are stored, not sent
	pace       time.Duration        // AAPAgentOptions.LongPace
	gone       <-chan struct{}      // closed once the client has gone (its request's context)
	hidden     map[aap.Message]bool // messages of msgs a none-mode response leaves out
	pending    []pendingCall        // the calls the turn leaves waiting
	stopReason aap.StopReason
	sessionID  string // set for PUT /session: its none answer carries it
}

func newTurnOutput(w http.ResponseWriter, mode aap.StreamMode, sessionStart string) *turnOutput {
	o := &turnOutput{mode: mode, w: w, rc: http.NewResponseController(w), sessionID: sessionStart}
	if mode != aap.StreamNone {
		o.buf = make([]byte, 0, flushSize+flushSize/4)
		if sessionStart != "" {
			o.emit(&aap.SessionStart{SessionID: sessionStart})
		}
		o.emit(&aap.TurnStart{})
	}
	return o
}

// emit appends one frame, writing the buffer out when it is large.
func (o *turnOutput) emit(ev aap.Event) {
	o.add(ev)
	if len(o.buf) >= flushSize {
		o.flush()
	}
}

// add appends one frame to the buffer.
func (o *turnOutput) add(ev aap.Event) {
	if o.mode == aap.StreamNone || o.err != nil {
		return
	}
	buf, err := aap.AppendFrame(o.buf, ev)
	if err != nil {
		// Only tool input that is not a JSON object fails, and the script
		// builds its own.
		o.err = err
		return
	}
	o.buf = buf
}

func (o *turnOutput) flush() {
	if o.err != nil || len(o.buf) == 0 {
		return
	}
	if !o.started {
		o.started = true
		h := o.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Accel-Buffering", "no")
		o.w.WriteHeader(http.StatusOK)
	}
	if _, err := o.w.Write(o.buf); err != nil {
		o.err = err
	} else if err := o.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		o.err = err
	}
	o.buf = o.buf[:0]
}

func (o *turnOutput) text(s string) {
	switch o.mode {
	case aap.StreamDelta:
		for _, c := range Chunks(s) {
			o.delta.Delta = c
			o.emit(&o.delta)
		}
	case aap.StreamMessage:
		o.emit(&aap.Text{Text: s})
	}
	o.open = append(o.open, &aap.TextBlock{Text: s})
}

func (o *turnOutput) thinking(s string) {
	switch o.mode {
	case aap.StreamDelta:
		for _, c := range Chunks(s) {
			o.emit(&aap.ThinkingDelta{Delta: c})
		}
	case aap.StreamMessage:
		o.emit(&aap.Thinking{Thinking: s})
	}
	o.open = append(o.open, &aap.ThinkingBlock{Thinking: s})
}

// long says n words, one delta each in delta mode. Paced, each word is
// written as it comes, and the answer ends where its client went away:
// the history keeps the words written before then, no word after (a word
// whose write failed, or one written once the client was seen gone, never
// reached it), so a reloaded page shows the stopped answer as delivered.
func (o *turnOutput) long(n int) {
	var sb strings.Builder
	sb.Grow(len(" word") * n)
	for i := range n {
		w := LongWord(i)
		if o.mode == aap.StreamDelta && o.pace > 0 {
			if !o.sendPaced(w) {
				break
			}
		} else if o.mode == aap.StreamDelta {
			o.delta.Delta = w
			o.emit(&o.delta)
		}
		sb.WriteString(w)
	}
	if o.mode == aap.StreamMessage {
		o.emit(&aap.Text{Text: sb.String()})
	}
	o.open = append(o.open, &aap.TextBlock{Text: sb.String()})
}

// sendPaced writes delta w at once, then waits the pace; false when w
// did not reach the client: it was gone before w was written, or the
// write failed.
func (o *turnOutput) sendPaced(w string) bool {
	select {
	case <-o.gone:
		return false
	default:
	}
	o.delta.Delta = w
	o.emit(&o.delta)
	if o.flush(); o.err != nil {
		return false
	}
	t := time.NewTimer(o.pace)
	defer t.Stop()
	select {
	case <-t.C:
	case <-o.gone:
	}
	return true
}

func (o *turnOutput) toolCall(id, name string, input json.RawMessage) {
	o.emit(&aap.ToolCall{ToolCallID: id, Name: name, Input: input})
	o.open = append(o.open, &aap.ToolUseBlock{ToolCallID: id, Name: name, Input: input})
}

// toolResult records a server tool's result, which ends the assistant
// message that called it.
func (o *turnOutput) toolResult(id, content string) {
	o.closeMessage()
	o.emit(&aap.ToolResult{ToolCallID: id, Content: aap.TextContent(content)})
	o.msgs = append(o.msgs, &aap.ToolMessage{ToolCallID: id, Content: aap.TextContent(content)})
}

// permissionResult records the outcome of a call a tool_permission
// answered: like toolResult, or, for a quiet agent, stored in the history
// only.
func (o *turnOutput) permissionResult(id, content string) {
	if !o.quiet {
		o.toolResult(id, content)
		return
	}
	o.closeMessage()
	m := &aap.ToolMessage{ToolCallID: id, Content: aap.TextContent(content)}
	o.msgs = append(o.msgs, m)
	if o.hidden == nil {
		o.hidden = map[aap.Message]bool{}
	}
	o.hidden[m] = true
}

// closeMessage ends the assistant message being said. A message that is a
// single text has string content.
func (o *turnOutput) closeMessage() {
	if len(o.open) == 0 {
		return
	}
	c := aap.BlockContent(o.open...)
	if len(o.open) == 1 {
		if t, ok := o.open[0].(*aap.TextBlock); ok {
			c = aap.TextContent(t.Text)
		}
	}
	o.msgs = append(o.msgs, &aap.AssistantMessage{Content: c})
	o.open = nil
}

// stop ends the turn. turn_stop is buffered, not written: end writes it,
// after the session is updated.
func (o *turnOutput) stop(reason aap.StopReason) {
	o.closeMessage()
	o.stopReason = reason
	o.add(&aap.TurnStop{StopReason: reason})
}

// end writes what is left: the rest of the stream, or the JSON response.
func (o *turnOutput) end() {
	if o.mode != aap.StreamNone {
		o.flush()
		return
	}
	msgs := make([]aap.Message, 0, len(o.msgs))
	for _, m := range o.msgs {
		if !o.hidden[m] {
			msgs = append(msgs, m)
		}
	}
	if o.sessionID != "" {
		writeJSON(o.w, http.StatusOK, aap.PutSessionResponse{SessionID: o.sessionID, StopReason: o.stopReason, Messages: msgs})
		return
	}
	writeJSON(o.w, http.StatusOK, aap.PostSessionTurnResponse{StopReason: o.stopReason, Messages: msgs})
}
