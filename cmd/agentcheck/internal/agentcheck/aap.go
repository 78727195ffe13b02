package agentcheck

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/aapagui/aapagui/aap"
)

// AAPOptions configure RunAAP.
type AAPOptions struct {
	// Key and Key2 are API keys; Key2, a second caller, enables the
	// isolation checks.
	Key, Key2 string
	// Agent is the one agent to check; empty checks each agent /meta
	// lists, one after the other.
	Agent   string
	Prompts Prompts
	// HTTPClient sends the requests; nil means http.DefaultClient.
	HTTPClient *http.Client
	// Timeout bounds each request, a whole turn included; zero means 60 s.
	Timeout time.Duration
}

// The sections of the AAP documents the checks rest on.
const (
	secMeta       = "endpoints.md § GET /meta"
	secCreate     = "endpoints.md § POST /sessions"
	secGetSession = "endpoints.md § GET /sessions/:id"
	secList       = "endpoints.md § GET /sessions"
	secDelete     = "endpoints.md § DELETE /sessions/:id"
	secHistory    = "endpoints.md § GET /sessions/:id/history; history.md § Server History"
	secTurn       = "endpoints.md § POST /sessions/:id/turns"
	secAuth       = "endpoints.md § Authentication"
	secNone       = "response.md § JSON Response (stream: none)"
	secMessage    = "response.md § stream: message; § SSE Events"
	secDelta      = "response.md § stream: delta; § SSE Events"
	secStop       = "response.md § turn_stop"
	secToolCall   = "tool-call.md"
	secPermission = "tool-call.md (step 4: tool_permission)"
	secSecret     = "schema.md § Agent (secret options)"
)

type aapRun struct {
	opts  AAPOptions
	base  string
	c, c2 *aap.Client
	http  *http.Client
	*Report
	meta *aap.GetMetaResponse
	// agents are the agents to check; agent is the one whose checks run
	// now, and about its name while they run (empty: the server's
	// checks, which its results carry).
	agents []*aap.AgentInfo
	agent  *aap.AgentInfo
	about  string
	// v is the server's protocol version. Versions 1 and 2 get the same
	// checks through their own routes (see path): a session is made by PUT
	// /session with its first turn, whose exchange opening holds.
	v       int
	opening struct{ sent, said string }
}

// legacy reports whether the server speaks version 1 or 2.
func (r *aapRun) legacy() bool { return r.v == aap.Version1 || r.v == aap.Version2 }

// The routes of a session, in the server's version.
func (r *aapRun) sessionPath(sid string) string {
	if r.legacy() {
		return "/session/" + sid
	}
	return "/sessions/" + sid
}

func (r *aapRun) turnPath(sid string) string {
	if r.legacy() {
		return "/session/" + sid
	}
	return "/sessions/" + sid + "/turns"
}

func (r *aapRun) historyPath(sid string, t aap.HistoryType) string {
	switch r.v {
	case aap.Version1:
		return "/session/" + sid + "?history=" + string(t)
	case aap.Version2:
		return "/session/" + sid + "/history?type=" + string(t)
	}
	return "/sessions/" + sid + "/history?type=" + string(t)
}

// legacyWords rewrites a version 3 check's title and document section
// into the routes of versions 1 and 2.
func (r *aapRun) legacyWords(s string) string {
	if !r.legacy() {
		return s
	}
	history := "GET /session/:id/history"
	if r.v == aap.Version1 {
		history = "GET /session/:id?history="
	}
	return strings.NewReplacer(
		"POST /sessions/:id/turns", "POST /session/:id",
		"GET /sessions/:id/history", history,
		"GET /sessions/:id", "GET /session/:id",
		"DELETE /sessions/:id", "DELETE /session/:id",
		"POST /sessions", "PUT /session",
	).Replace(s)
}

func (r *aapRun) section(s string) string {
	if !r.legacy() || strings.HasPrefix(s, "aap-v") {
		return s
	}
	return fmt.Sprintf("aap-v%d/%s", r.v, r.legacyWords(s))
}

// result is a check's result about the agent being checked (or the
// server), in the server's version's words.
func (r *aapRun) result(id, title, section string) Result {
	return Result{Agent: r.about, ID: id, Title: r.legacyWords(title), Section: r.section(section)}
}

func (r *aapRun) pass(id, title, section string) {
	res := r.result(id, title, section)
	res.Status = Pass
	r.add(res)
}

func (r *aapRun) skip(id, title, section, why string) {
	res := r.result(id, title, section)
	res.Status, res.Detail = Skip, why
	r.add(res)
}

func (r *aapRun) fail(id, title, section string, f failure) {
	r.add(failed(r.result(id, title, section), f))
}

// RunAAP checks the AAP server at base (its base URL, where GET /meta is),
// in the protocol version its /meta names: versions 1 and 2 get the same
// checks as version 3, through their own routes.
//
// The checks of the whole server (GET /meta, the error statuses, paging
// through the sessions of every agent checked) run once; then the checks
// about an agent (sessions, turns in each stream mode, history, thinking,
// errors, tools, permissions, secret options, key isolation, delete) run
// for each agent /meta lists, or for opts.Agent alone, each result naming
// its agent.
func RunAAP(ctx context.Context, base string, opts AAPOptions) *Report {
	defaults(&opts.HTTPClient, &opts.Timeout)
	base = strings.TrimRight(base, "/")
	r := &aapRun{opts: opts, base: base, http: opts.HTTPClient, Report: &Report{Mode: "aap", Target: base}}
	r.c = aap.NewClient(base, aap.ClientOptions{HTTPClient: opts.HTTPClient, APIKey: opts.Key})
	if opts.Key2 != "" {
		r.c2 = aap.NewClient(base, aap.ClientOptions{HTTPClient: opts.HTTPClient, APIKey: opts.Key2})
	}
	if !r.checkMeta(ctx) {
		return r.Report
	}
	r.v = r.meta.Version
	if r.v == 0 {
		r.v = aap.Version3 // a /meta without a version: the current protocol
	}
	if !aap.KnownVersion(r.v) {
		r.fail("meta.version", "GET /meta names a protocol version this checker knows", secMeta, failure{got: fmt.Sprint(r.v), want: "1, 2 or 3"})
		return r.Report
	}
	r.c = r.c.WithVersion(r.v)
	if r.c2 != nil {
		r.c2 = r.c2.WithVersion(r.v)
	}
	r.checkErrors(ctx)
	r.checkPaging(ctx)
	for _, a := range r.agents {
		r.checkAgent(ctx, a)
	}
	return r.Report
}

// checkAgent runs the checks about agent a, each result under its name.
// Key isolation is checked per agent: a server may keep each agent's
// sessions apart (a gateway in front of one backend per agent).
func (r *aapRun) checkAgent(ctx context.Context, a *aap.AgentInfo) {
	r.agent, r.about = a, a.Name
	r.opening.sent, r.opening.said = "", ""
	defer func() { r.about = "" }()
	id := r.checkCreate(ctx)
	if r.legacy() {
		r.checkLegacyStream(ctx)
	}
	r.checkModes(ctx, id)
	r.checkHistoryTypes(ctx, id)
	r.checkThinking(ctx)
	r.checkFailure(ctx)
	r.checkClientTool(ctx)
	r.checkPermissions(ctx)
	r.checkSecrets(ctx)
	r.checkIsolation(ctx, id)
	r.checkDelete(ctx, id)
}

func (r *aapRun) ctx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, r.opts.Timeout)
}

func (r *aapRun) checkMeta(ctx context.Context) bool {
	const id, title = "meta", "GET /meta describes the server and its agents"
	ctx, cancel := r.ctx(ctx)
	defer cancel()
	status, body, err := r.raw(ctx, http.MethodGet, "/meta", "", r.opts.Key)
	if err != nil {
		r.fail(id, title, secMeta, failure{detail: err.Error(), sent: "GET /meta"})
		return false
	}
	meta, derr := aap.DecodeMeta(body)
	switch {
	case status != http.StatusOK:
		r.fail(id, title, secMeta, failure{sent: "GET /meta", got: fmt.Sprintf("%d %s", status, body), want: "200 with the server's version and agents"})
		return false
	case derr != nil:
		r.fail(id, title, secMeta, failure{detail: derr.Error(), sent: "GET /meta", got: string(body), want: "a body that follows the schema"})
		return false
	case len(meta.Agents) == 0:
		r.fail(id, title, secMeta, failure{sent: "GET /meta", got: string(body), want: "at least one agent"})
		return false
	}
	r.meta = meta
	seen := map[string]bool{}
	for i := range meta.Agents {
		a := &meta.Agents[i]
		if seen[a.Name] {
			r.fail(id, title, secMeta, failure{detail: "two agents named " + a.Name + ": a session names its agent", sent: "GET /meta", got: string(body), want: "each agent named once"})
			return false
		}
		seen[a.Name] = true
		r.agents = append(r.agents, a)
	}
	if r.opts.Agent != "" {
		a, ok := meta.Agent(r.opts.Agent)
		if !ok {
			r.fail(id, title, secMeta, failure{detail: "no agent named " + r.opts.Agent, sent: "GET /meta", got: string(body)})
			return false
		}
		r.agents = []*aap.AgentInfo{a}
	}
	r.agent = r.agents[0]
	r.pass(id, title, secMeta)
	return true
}

// raw sends one request and returns the status and the body.
func (r *aapRun) raw(ctx context.Context, method, path, body, key string) (int, []byte, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, r.base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := r.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, data, err
}

// checkErrors: malformed JSON is the client's error (400, with a JSON
// body that names it), and an unknown session is 404.
func (r *aapRun) checkErrors(ctx context.Context) {
	ctx, cancel := r.ctx(ctx)
	defer cancel()
	const badJSON = `{"agent": {"name": `
	const nope = "agentcheck-no-such-session"
	create, createMethod := "/sessions", http.MethodPost
	if r.legacy() {
		create, createMethod = "/session", http.MethodPut
	}
	for _, c := range []struct{ id, title, section, method, path, body string }{
		{"errors.malformed-create", "POST /sessions with malformed JSON is 400", secCreate, createMethod, create, badJSON},
		{"errors.malformed-turn", "a turn with malformed JSON is 400 (or 404: no such session)", secTurn, http.MethodPost, r.turnPath(nope), badJSON},
	} {
		status, body, err := r.raw(ctx, c.method, c.path, c.body, r.opts.Key)
		sent := c.method + " " + c.path + "\n" + c.body
		switch {
		case err != nil:
			r.fail(c.id, c.title, c.section, failure{detail: err.Error(), sent: sent})
		case status == http.StatusBadRequest || (status == http.StatusNotFound && c.path == r.turnPath(nope)):
			if !json.Valid(body) {
				r.fail(c.id, c.title, c.section, failure{sent: sent, got: fmt.Sprintf("%d %s", status, body), want: "a JSON error body"})
				continue
			}
			r.pass(c.id, c.title, c.section)
		default:
			r.fail(c.id, c.title, c.section, failure{sent: sent, got: fmt.Sprintf("%d %s", status, body), want: "400: the request is malformed, a client error (5xx says the server failed)"})
		}
	}
	for _, c := range []struct{ id, title, section, method, path string }{
		{"errors.unknown-session", "GET /sessions/:id of an unknown session is 404", secGetSession, http.MethodGet, r.sessionPath(nope)},
		{"errors.unknown-history", "GET /sessions/:id/history of an unknown session is 404", secHistory, http.MethodGet, r.historyPath(nope, aap.HistoryFull)},
	} {
		status, body, err := r.raw(ctx, c.method, c.path, "", r.opts.Key)
		switch {
		case err != nil:
			r.fail(c.id, c.title, c.section, failure{detail: err.Error(), sent: c.method + " " + c.path})
		case status != http.StatusNotFound:
			r.fail(c.id, c.title, c.section, failure{sent: c.method + " " + c.path, got: fmt.Sprintf("%d %s", status, body), want: "404"})
		default:
			r.pass(c.id, c.title, c.section)
		}
	}
}

func (r *aapRun) newSession(ctx context.Context, c *aap.Client, tools []aap.ServerToolRef, specs []aap.ToolSpec) (string, error) {
	sid, _, err := r.newSessionWith(ctx, c, aap.AgentConfig{Name: r.agent.Name, Tools: tools}, specs)
	return sid, err
}

// newSessionWith creates a session of agent with the client tools specs.
// Versions 1 and 2 create it with its first turn, openingText in stream
// mode none; said is the answer's text.
func (r *aapRun) newSessionWith(ctx context.Context, c *aap.Client, agent aap.AgentConfig, specs []aap.ToolSpec) (sid, said string, err error) {
	if r.legacy() {
		out, err := c.PutSession(ctx, &aap.PutSessionRequest{Agent: agent, Messages: []aap.Message{aap.UserText(r.openingText())}, Tools: aap.ToolSpecsToV1(specs)})
		if err != nil {
			return "", "", err
		}
		if out.SessionID == "" {
			return "", "", errors.New("PUT /session answered without a sessionId")
		}
		for _, m := range out.Messages {
			if am, ok := m.(*aap.AssistantMessage); ok {
				said += contentText(am.Content)
			}
		}
		return out.SessionID, said, nil
	}
	out, err := c.CreateSession(ctx, &aap.PostSessionsRequest{Agent: agent, Tools: specs})
	if err != nil {
		return "", "", err
	}
	return out.SessionID, "", nil
}

// openingText is the first user message of a version 1 or 2 session.
func (r *aapRun) openingText() string {
	if r.opts.Prompts.Text != "" {
		return r.opts.Prompts.Text + " (first)"
	}
	return "hello"
}

func (r *aapRun) checkCreate(ctx context.Context) string {
	const id, title = "session.create", "POST /sessions creates a session (201, sessionId)"
	ctx, cancel := r.ctx(ctx)
	defer cancel()
	if r.legacy() {
		const lid, ltitle = "session.create", "PUT /session creates a session and answers its first turn (sessionId, the answer)"
		sid, said, err := r.newSessionWith(ctx, r.c, aap.AgentConfig{Name: r.agent.Name}, nil)
		sent := fmt.Sprintf(`PUT /session {"agent":{"name":%q},"messages":[{"role":"user","content":%q}]}`, r.agent.Name, r.openingText())
		switch {
		case err != nil:
			r.fail(lid, ltitle, secCreate, failure{detail: err.Error(), sent: sent})
			return ""
		case said == "":
			r.fail(lid, ltitle, secCreate, failure{sent: sent, got: "no assistant text", want: "the first turn's answer"})
			return sid
		}
		r.opening.sent, r.opening.said = r.openingText(), said
		r.pass(lid, ltitle, secCreate)
		return sid
	}
	sid, err := r.newSession(ctx, r.c, nil, nil)
	if err != nil {
		r.fail(id, title, secCreate, failure{detail: err.Error(), sent: fmt.Sprintf(`POST /sessions {"agent":{"name":%q}}`, r.agent.Name)})
		return ""
	}
	r.pass(id, title, secCreate)
	return sid
}

// turnResult is what one streamed turn gave.
type turnResult struct {
	events []aap.Event
	err    error // the stream's error (aap.ErrStreamIncomplete: no turn_stop)
}

func (t turnResult) stop() aap.StopReason {
	if n := len(t.events); n > 0 {
		if s, ok := t.events[n-1].(*aap.TurnStop); ok {
			return s.StopReason
		}
	}
	return ""
}

// text is what the turn said: its text deltas, or its text events.
func (t turnResult) text() string {
	var b strings.Builder
	for _, ev := range t.events {
		switch ev := ev.(type) {
		case *aap.TextDelta:
			b.WriteString(ev.Delta)
		case *aap.Text:
			b.WriteString(ev.Text)
		}
	}
	return b.String()
}

func (t turnResult) names() string {
	var names []string
	for _, ev := range t.events {
		names = append(names, eventName(ev))
	}
	if t.err != nil {
		names = append(names, "(error: "+t.err.Error()+")")
	}
	return strings.Join(names, " ")
}

func eventName(ev aap.Event) string {
	switch ev := ev.(type) {
	case *aap.TurnStart:
		return "turn_start"
	case *aap.TextDelta:
		return "text_delta"
	case *aap.ThinkingDelta:
		return "thinking_delta"
	case *aap.Text:
		return "text"
	case *aap.Thinking:
		return "thinking"
	case *aap.ToolCall:
		return "tool_call(" + ev.Name + ")"
	case *aap.ToolResult:
		return "tool_result"
	case *aap.TurnStop:
		return "turn_stop(" + string(ev.StopReason) + ")"
	case *aap.SessionStart:
		return "session_start"
	case *aap.UnknownEvent:
		return string(ev.Name)
	}
	return fmt.Sprintf("%T", ev)
}

func (r *aapRun) stream(ctx context.Context, c *aap.Client, sid string, req *aap.PostSessionTurnRequest) turnResult {
	var t turnResult
	for ev, err := range c.StreamTurn(ctx, sid, req) {
		if err != nil {
			t.err = err
			break
		}
		t.events = append(t.events, ev)
	}
	return t
}

func turnJSON(req *aap.PostSessionTurnRequest) string {
	b, _ := json.Marshal(req)
	return string(b)
}

// checkStream checks a stream's shape: turn_start first, turn_stop last
// (with a valid reason), nothing after it.
func checkStream(t turnResult) string {
	switch {
	case t.err != nil && errors.Is(t.err, aap.ErrStreamIncomplete):
		return "the stream ended without turn_stop"
	case t.err != nil:
		return t.err.Error()
	case len(t.events) == 0:
		return "no events"
	}
	if _, ok := t.events[0].(*aap.TurnStart); !ok {
		return "the first event is not turn_start"
	}
	if t.stop() == "" || !t.stop().Valid() {
		return "the last event is not turn_stop with a valid stopReason"
	}
	return ""
}

func (r *aapRun) supports(mode aap.StreamMode) bool {
	caps := r.agent.Capabilities
	if caps == nil || caps.Stream == nil {
		return true // nothing declared: the documents' three modes
	}
	switch mode {
	case aap.StreamDelta:
		return caps.Stream.Delta != nil
	case aap.StreamMessage:
		return caps.Stream.Message != nil
	}
	return caps.Stream.None != nil
}

// checkModes runs Prompts.Text in each stream mode the agent declares, and
// checks the history against what was said.
func (r *aapRun) checkModes(ctx context.Context, sid string) {
	p := r.opts.Prompts
	ids := []string{"turn.none", "turn.message", "turn.delta", "history.exact"}
	if sid == "" || p.Text == "" {
		for _, id := range ids {
			r.skip(id, id, secTurn, "no session (session.create failed) or no text prompt")
		}
		return
	}
	ctx, cancel := r.ctx(ctx)
	defer cancel()
	var said []string // the answers, in order
	var sent []string
	if r.legacy() && r.opening.sent != "" {
		said, sent = []string{r.opening.said}, []string{r.opening.sent}
	}
	for _, m := range []struct {
		id, section string
		mode        aap.StreamMode
	}{{"turn.none", secNone, aap.StreamNone}, {"turn.message", secMessage, aap.StreamMessage}, {"turn.delta", secDelta, aap.StreamDelta}} {
		title := fmt.Sprintf("a plain message in stream mode %q is answered", m.mode)
		if !r.supports(m.mode) {
			r.skip(m.id, title, m.section, "the agent does not declare this stream mode")
			continue
		}
		msg := fmt.Sprintf("%s (%s)", p.Text, m.mode)
		req := &aap.PostSessionTurnRequest{Stream: m.mode, Messages: []aap.Message{aap.UserText(msg)}}
		if m.mode == aap.StreamNone {
			resp, err := r.c.Turn(ctx, sid, req)
			if err != nil {
				r.fail(m.id, title, m.section, failure{detail: err.Error(), sent: turnJSON(req)})
				continue
			}
			text := ""
			for _, hm := range resp.Messages {
				if am, ok := hm.(*aap.AssistantMessage); ok {
					text += contentText(am.Content)
				}
			}
			if resp.StopReason != aap.StopEndTurn || text == "" {
				got, _ := json.Marshal(resp)
				r.fail(m.id, title, m.section, failure{sent: turnJSON(req), got: string(got), want: `stopReason "end_turn" and an assistant message with text`})
				continue
			}
			said, sent = append(said, text), append(sent, msg)
			r.pass(m.id, title, m.section)
			continue
		}
		t := r.stream(ctx, r.c, sid, req)
		problem := checkStream(t)
		if problem == "" && t.stop() != aap.StopEndTurn {
			problem = "stopReason is not end_turn"
		}
		if problem == "" && t.text() == "" {
			problem = "no text"
		}
		if problem == "" && m.mode == aap.StreamMessage && slices.ContainsFunc(t.events, func(ev aap.Event) bool { _, ok := ev.(*aap.TextDelta); return ok }) {
			problem = "text_delta in message mode"
		}
		if problem == "" && m.mode == aap.StreamDelta && !slices.ContainsFunc(t.events, func(ev aap.Event) bool { _, ok := ev.(*aap.TextDelta); return ok }) {
			problem = "no text_delta in delta mode"
		}
		if problem != "" {
			r.fail(m.id, title, m.section, failure{detail: problem, sent: turnJSON(req), got: t.names(), want: "turn_start, the answer, turn_stop(end_turn)"})
			continue
		}
		said, sent = append(said, t.text()), append(sent, msg)
		r.pass(m.id, title, m.section)
	}

	const hid, htitle = "history.exact", "the full history holds each message and answer as sent and streamed"
	hist, err := r.c.History(ctx, sid, aap.HistoryFull)
	if err != nil {
		r.fail(hid, htitle, secHistory, failure{detail: err.Error(), sent: "GET " + r.historyPath(sid, aap.HistoryFull)})
		return
	}
	var users, answers []string
	for _, m := range hist {
		switch m := m.(type) {
		case *aap.UserMessage:
			users = append(users, contentText(m.Content))
		case *aap.AssistantMessage:
			answers = append(answers, contentText(m.Content))
		}
	}
	if !slices.Equal(users, sent) || !slices.Equal(answers, said) {
		got, _ := json.Marshal(map[string]any{"users": users, "answers": answers})
		want, _ := json.Marshal(map[string]any{"users": sent, "answers": said})
		r.fail(hid, htitle, secHistory, failure{sent: "GET " + r.historyPath(sid, aap.HistoryFull), got: string(got), want: string(want)})
		return
	}
	r.pass(hid, htitle, secHistory)
}

// checkHistoryTypes: each history type /meta declares is served, as a
// history of that type.
func (r *aapRun) checkHistoryTypes(ctx context.Context, sid string) {
	const id, title = "history.types", "each history type /meta declares is served"
	if sid == "" {
		r.skip(id, title, secHistory, "no session")
		return
	}
	declared := []aap.HistoryType{aap.HistoryFull, aap.HistoryCompacted} // nothing declared: both
	if caps := r.agent.Capabilities; caps != nil && caps.History != nil {
		declared = nil
		if caps.History.Full != nil {
			declared = append(declared, aap.HistoryFull)
		}
		if caps.History.Compacted != nil {
			declared = append(declared, aap.HistoryCompacted)
		}
	}
	if len(declared) == 0 {
		r.skip(id, title, secHistory, "the agent declares no history type")
		return
	}
	ctx, cancel := r.ctx(ctx)
	defer cancel()
	for _, typ := range declared {
		path := r.historyPath(sid, typ)
		status, body, err := r.raw(ctx, http.MethodGet, path, "", r.opts.Key)
		if err != nil || status != http.StatusOK {
			r.fail(id, title, secHistory, failure{detail: fmt.Sprint(err), sent: "GET " + path, got: fmt.Sprintf("%d %s", status, body), want: "200"})
			return
		}
		var h struct {
			History map[string]json.RawMessage `json:"history"`
		}
		if err := json.Unmarshal(body, &h); err != nil || h.History[string(typ)] == nil {
			r.fail(id, title, secHistory, failure{sent: "GET " + path, got: string(body), want: fmt.Sprintf(`{"history": {%q: [...]}}`, typ)})
			return
		}
		if _, err := aap.DecodeHistory(h.History[string(typ)]); err != nil {
			r.fail(id, title, secHistory, failure{detail: err.Error(), sent: "GET " + path, got: string(body), want: "messages that follow the schema"})
			return
		}
	}
	r.pass(id, title, secHistory)
}

// contentText is the text of a content: the string, or its text blocks.
func contentText(c aap.Content) string {
	if !c.IsBlocks() {
		return c.Text
	}
	var b strings.Builder
	for _, bl := range c.Blocks {
		if t, ok := bl.(*aap.TextBlock); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// firstTurn is what sessionTurn sends: the session's server tools and
// client tools, and its first turn, the prompt text in mode.
type firstTurn struct {
	tools []aap.ServerToolRef
	specs []aap.ToolSpec
	mode  aap.StreamMode
	text  string
}

// sessionTurn creates a session (with ft's server tools and client tools)
// and streams its first turn, ft's prompt in its mode. A failure of
// either, or a stream that breaks the documents' shape, is reported as
// check id's failure and gives ok false. The caller deletes the session.
func (r *aapRun) sessionTurn(ctx context.Context, id, title, section string, ft firstTurn) (sid string, req *aap.PostSessionTurnRequest, t turnResult, ok bool) {
	tools, specs, mode := ft.tools, ft.specs, ft.mode
	req = &aap.PostSessionTurnRequest{Stream: mode, Messages: []aap.Message{aap.UserText(ft.text)}}
	if r.legacy() {
		// The session and its first turn in one PUT /session, whose
		// stream opens with session_start.
		put := &aap.PutSessionRequest{Agent: aap.AgentConfig{Name: r.agent.Name, Tools: tools}, Stream: mode, Messages: req.Messages, Tools: aap.ToolSpecsToV1(specs)}
		var opened bool
		sid, opened, t = r.streamPut(ctx, put)
		b, _ := json.Marshal(put)
		if !opened {
			r.fail(id, title, section, failure{detail: "the stream did not open with session_start", sent: "PUT /session " + string(b), got: t.names(), want: "session_start, turn_start, …, turn_stop"})
			return "", req, t, false
		}
		if problem := checkStream(t); problem != "" {
			r.fail(id, title, section, failure{detail: problem, sent: "PUT /session " + string(b), got: t.names(), want: "turn_start after session_start, turn_stop last (response.md § turn_stop)"})
			return sid, req, t, false
		}
		return sid, req, t, true
	}
	sid, err := r.newSession(ctx, r.c, tools, specs)
	if err != nil {
		r.fail(id, title, section, failure{detail: "creating a session: " + err.Error()})
		return "", nil, t, false
	}
	t = r.stream(ctx, r.c, sid, req)
	if problem := checkStream(t); problem != "" {
		r.fail(id, title, section, failure{detail: problem, sent: turnJSON(req), got: t.names(), want: "turn_start first, turn_stop last (response.md § turn_stop)"})
		return sid, req, t, false
	}
	return sid, req, t, true
}

// deleteSession deletes a session a check made; a failure is not the
// check's business.
func (r *aapRun) deleteSession(ctx context.Context, sid string) {
	if sid != "" {
		_ = r.c.DeleteSession(context.WithoutCancel(ctx), sid)
	}
}

// checkThinking: reasoning streams before the answer, and the history
// keeps it before the text, as it was said.
func (r *aapRun) checkThinking(ctx context.Context) {
	const id, title = "thinking.order", "reasoning streams before the answer and stays before it in history (delta mode)"
	section := secDelta + "; " + secHistory
	p := r.opts.Prompts
	if p.Think == "" || !r.supports(aap.StreamDelta) {
		r.skip(id, title, section, "no think prompt, or no delta mode")
		return
	}
	ctx, cancel := r.ctx(ctx)
	defer cancel()
	sid, req, t, ok := r.sessionTurn(ctx, id, title, section, firstTurn{mode: aap.StreamDelta, text: p.Think})
	defer r.deleteSession(ctx, sid)
	if !ok {
		return
	}
	firstThinking, firstText := -1, -1
	for i, ev := range t.events {
		switch ev.(type) {
		case *aap.ThinkingDelta:
			if firstThinking < 0 {
				firstThinking = i
			}
		case *aap.TextDelta:
			if firstText < 0 {
				firstText = i
			}
		}
	}
	if firstThinking < 0 {
		r.skip(id, title, section, "the agent did not think on the prompt "+p.Think)
		return
	}
	if firstText >= 0 && firstText < firstThinking {
		r.fail(id, title, section, failure{sent: turnJSON(req), got: t.names(), want: "thinking_delta before text_delta"})
		return
	}
	hist, err := r.c.History(ctx, sid, aap.HistoryFull)
	if err != nil {
		r.fail(id, title, section, failure{detail: err.Error(), sent: "GET /sessions/" + sid + "/history?type=full"})
		return
	}
	var kinds []string
	for _, m := range hist {
		am, ok := m.(*aap.AssistantMessage)
		if !ok {
			continue
		}
		for _, b := range am.Content.Blocks {
			switch b.(type) {
			case *aap.ThinkingBlock:
				kinds = append(kinds, "thinking")
			case *aap.TextBlock:
				kinds = append(kinds, "text")
			}
		}
	}
	ti, xi := slices.Index(kinds, "thinking"), slices.Index(kinds, "text")
	if ti < 0 || (xi >= 0 && xi < ti) {
		r.fail(id, title, section, failure{detail: "the history's assistant blocks are not in the order they streamed",
			sent: "GET /sessions/" + sid + "/history?type=full", got: strings.Join(kinds, ", "), want: "thinking, then text"})
		return
	}
	r.pass(id, title, section)
}

// checkFailure: a model error ends the turn with turn_stop(error), in
// message mode as in delta mode.
func (r *aapRun) checkFailure(ctx context.Context) {
	p := r.opts.Prompts
	for _, m := range []struct {
		id   string
		mode aap.StreamMode
	}{{"error.message-mode", aap.StreamMessage}, {"error.delta-mode", aap.StreamDelta}} {
		title := fmt.Sprintf("an agent error ends the %s stream with turn_stop(error)", m.mode)
		if p.Fail == "" || !r.supports(m.mode) {
			r.skip(m.id, title, secStop, "no fail prompt, or the mode is not declared")
			continue
		}
		func() {
			ctx, cancel := r.ctx(ctx)
			defer cancel()
			sid, _, t, ok := r.sessionTurn(ctx, m.id, title, secStop, firstTurn{mode: m.mode, text: p.Fail})
			defer r.deleteSession(ctx, sid)
			if !ok {
				return
			}
			if t.stop() != aap.StopError {
				r.skip(m.id, title, secStop, fmt.Sprintf("the agent did not fail on %q (stopReason %s)", p.Fail, t.stop()))
				return
			}
			r.pass(m.id, title, secStop)
		}()
	}
}

func (r *aapRun) toolSpec() aap.ToolSpec {
	t := r.opts.Prompts.Tool
	params := t.Parameters
	if len(params) == 0 {
		params = json.RawMessage(`{"type":"object"}`)
	}
	return aap.ToolSpec{Name: t.Name, Description: t.Description, Parameters: params}
}

// checkClientTool: a client tool call stops the turn with tool_use, and
// the result sent back gets an answer.
func (r *aapRun) checkClientTool(ctx context.Context) {
	const id, title = "tools.client", "a client tool is called (tool_call, turn_stop tool_use) and its result answered"
	p := r.opts.Prompts
	if p.ClientTool == "" || p.Tool.Name == "" || !r.supports(aap.StreamDelta) {
		r.skip(id, title, secToolCall, "no client-tool prompt, or no delta mode")
		return
	}
	ctx, cancel := r.ctx(ctx)
	defer cancel()
	sid, req, t, ok := r.sessionTurn(ctx, id, title, secToolCall, firstTurn{specs: []aap.ToolSpec{r.toolSpec()}, mode: aap.StreamDelta, text: p.ClientTool})
	defer r.deleteSession(ctx, sid)
	if !ok {
		return
	}
	var call *aap.ToolCall
	for _, ev := range t.events {
		if c, ok := ev.(*aap.ToolCall); ok && c.Name == p.Tool.Name {
			call = c
		}
	}
	if call == nil {
		r.skip(id, title, secToolCall, fmt.Sprintf("the agent did not call %s on %q", p.Tool.Name, p.ClientTool))
		return
	}
	if t.stop() != aap.StopToolUse || !json.Valid(call.Input) {
		r.fail(id, title, secToolCall, failure{sent: turnJSON(req), got: t.names(), want: "tool_call with a JSON object input, then turn_stop(tool_use)"})
		return
	}
	res := &aap.PostSessionTurnRequest{Stream: aap.StreamDelta, Messages: []aap.Message{&aap.ToolMessage{ToolCallID: call.ToolCallID, Content: aap.TextContent(p.Tool.Result)}}}
	t2 := r.stream(ctx, r.c, sid, res)
	if problem := checkStream(t2); problem != "" || t2.stop() != aap.StopEndTurn || t2.text() == "" {
		r.fail(id, title, secToolCall, failure{detail: problem, sent: turnJSON(res), got: t2.names(), want: "an answer: text, then turn_stop(end_turn)"})
		return
	}
	r.pass(id, title, secToolCall)
}

// serverTool is the server tool the permission checks use: the prompts'
// when the agent declares it, else the first the agent declares (so that
// agents with other tools are checked too); none when it declares none.
func (r *aapRun) serverTool() string {
	name := r.opts.Prompts.ServerTool
	if slices.ContainsFunc(r.agent.Tools, func(t aap.ToolSpec) bool { return t.Name == name }) {
		return name
	}
	if len(r.agent.Tools) > 0 {
		return r.agent.Tools[0].Name
	}
	return ""
}

// checkPermissions: an untrusted server tool asks permission; a grant gets
// the tool's result streamed (tool_result) before the answer, a denial a
// tool result "Tool call denied: <reason>"; neither the result nor the
// permission is doubled in history.
func (r *aapRun) checkPermissions(ctx context.Context) {
	p := r.opts.Prompts
	tool := r.serverTool()
	ids := []struct{ id, title string }{
		{"permission.grant", "a granted server tool call streams its tool_result, then the answer"},
		{"permission.deny", `a denied call's result is "Tool call denied: <reason>"`},
		{"history.tool-results", "the history holds each tool result once, right after its call"},
	}
	if p.Permission == "" || tool == "" || !r.supports(aap.StreamDelta) {
		for _, c := range ids {
			r.skip(c.id, c.title, secPermission, "no permission prompt, no server tool, or no delta mode")
		}
		return
	}
	ctx, cancel := r.ctx(ctx)
	defer cancel()
	var histories [][]aap.Message
	for i, grant := range []bool{true, false} {
		c := ids[i]
		hist, ok := r.permissionRound(ctx, c.id, c.title, tool, grant)
		if !ok {
			continue
		}
		histories = append(histories, hist)
	}
	c := ids[2]
	if len(histories) == 0 {
		r.skip(c.id, c.title, secHistory, "no permission round ran")
		return
	}
	for _, hist := range histories {
		if problem := toolResultsOnce(hist); problem != "" {
			got, _ := json.Marshal(hist)
			r.fail(c.id, c.title, secHistory+"; "+secPermission, failure{detail: problem, sent: "GET /sessions/:id/history?type=full", got: string(got), want: "one tool message per call, after the assistant message that made it"})
			return
		}
	}
	r.pass(c.id, c.title, secHistory+"; "+secPermission)
}

func (r *aapRun) permissionRound(ctx context.Context, id, title, tool string, grant bool) ([]aap.Message, bool) {
	p := r.opts.Prompts
	sid, _, t, ok := r.sessionTurn(ctx, id, title, secPermission, firstTurn{tools: []aap.ServerToolRef{{Name: tool}}, mode: aap.StreamDelta, text: p.Permission})
	defer r.deleteSession(ctx, sid)
	if !ok {
		return nil, false
	}
	var call *aap.ToolCall
	for _, ev := range t.events {
		if c, ok := ev.(*aap.ToolCall); ok && c.Name == tool {
			call = c
		}
	}
	if call == nil || t.stop() != aap.StopToolUse {
		r.skip(id, title, secPermission, fmt.Sprintf("the agent did not ask to run %s on %q (%s)", tool, p.Permission, t.names()))
		return nil, false
	}
	const reason = "not now"
	perm := &aap.ToolPermissionMessage{ToolCallID: call.ToolCallID, Granted: grant}
	if !grant {
		perm.Reason = reason
	}
	answer := &aap.PostSessionTurnRequest{Stream: aap.StreamDelta, Messages: []aap.Message{perm}}
	t2 := r.stream(ctx, r.c, sid, answer)
	if problem := checkStream(t2); problem != "" {
		r.fail(id, title, secPermission, failure{detail: problem, sent: turnJSON(answer), got: t2.names()})
		return nil, false
	}
	var result *aap.ToolResult
	for _, ev := range t2.events {
		if res, ok := ev.(*aap.ToolResult); ok && res.ToolCallID == call.ToolCallID {
			result = res
		}
	}
	hist, err := r.c.History(ctx, sid, aap.HistoryFull)
	if err != nil {
		r.fail(id, title, secHistory, failure{detail: err.Error(), sent: "GET /sessions/" + sid + "/history?type=full"})
		return nil, false
	}
	if grant {
		if result == nil {
			r.fail(id, title, secPermission, failure{detail: "no tool_result for the granted call " + call.ToolCallID,
				sent: turnJSON(answer), got: t2.names(), want: "tool_result (toolCallId " + call.ToolCallID + "), then the answer"})
			return hist, true
		}
		r.pass(id, title, secPermission)
		return hist, true
	}
	denial := ""
	for _, m := range hist {
		if tm, ok := m.(*aap.ToolMessage); ok && tm.ToolCallID == call.ToolCallID {
			denial = contentText(tm.Content)
		}
	}
	if result != nil {
		denial = contentText(result.Content)
	}
	if want := aap.DeniedResult(reason); denial != want {
		r.fail(id, title, secPermission, failure{sent: turnJSON(answer), got: fmt.Sprintf("%q", denial), want: fmt.Sprintf("%q (the tool result of a denied call)", want)})
		return hist, true
	}
	r.pass(id, title, secPermission)
	return hist, true
}

// toolResultsOnce reports a tool result that appears twice, or before its
// call.
func toolResultsOnce(hist []aap.Message) string {
	calls := map[string]bool{}
	seen := map[string]bool{}
	for i, m := range hist {
		switch m := m.(type) {
		case *aap.AssistantMessage:
			for _, b := range m.Content.Blocks {
				if tu, ok := b.(*aap.ToolUseBlock); ok {
					calls[tu.ToolCallID] = true
				}
			}
		case *aap.ToolMessage:
			if seen[m.ToolCallID] {
				return fmt.Sprintf("message %d: a second tool result for %s", i, m.ToolCallID)
			}
			if !calls[m.ToolCallID] {
				return fmt.Sprintf("message %d: a tool result for %s before (or without) its call", i, m.ToolCallID)
			}
			seen[m.ToolCallID] = true
		}
	}
	return ""
}

// checkPaging: GET /sessions pages through every session once, whichever
// agent it is of (three sessions at least, one of each agent checked).
func (r *aapRun) checkPaging(ctx context.Context) {
	const id, title = "sessions.list", "GET /sessions lists every session once, page after page"
	ctx, cancel := r.ctx(ctx)
	defer cancel()
	created, err := r.pagingSessions(ctx)
	defer func() {
		for _, sid := range created {
			r.deleteSession(ctx, sid)
		}
	}()
	if err != nil {
		r.fail(id, title, secList, failure{detail: "creating sessions: " + err.Error()})
		return
	}
	count := map[string]int{}
	pages := 0
	for s, err := range r.c.Sessions(ctx) {
		if err != nil {
			r.fail(id, title, secList, failure{detail: err.Error(), sent: "GET /sessions"})
			return
		}
		count[s.SessionID]++
		pages++
		if pages > 100000 {
			r.fail(id, title, secList, failure{detail: "more than 100,000 sessions listed: the paging does not end"})
			return
		}
	}
	for _, sid := range created {
		if count[sid] != 1 {
			r.fail(id, title, secList, failure{sent: "GET /sessions (and ?after= each next)", got: fmt.Sprintf("session %s listed %d times", sid, count[sid]), want: "once"})
			return
		}
	}
	r.pass(id, title, secList)
}

// pagingSessions creates the sessions checkPaging lists: three at least,
// of each agent in turn. An agent none of whose sessions can be created
// is left out (its session.create check says so); none left is an error.
func (r *aapRun) pagingSessions(ctx context.Context) ([]string, error) {
	agents := slices.Clone(r.agents)
	var created []string
	var errs []error
	for i := 0; len(agents) > 0 && len(created) < max(3, len(r.agents)); {
		name := agents[i%len(agents)].Name
		sid, _, err := r.newSessionWith(ctx, r.c, aap.AgentConfig{Name: name}, nil)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			agents = slices.Delete(agents, i%len(agents), i%len(agents)+1)
			continue
		}
		created = append(created, sid)
		i++
	}
	if len(agents) == 0 {
		return created, errors.Join(errs...)
	}
	return created, nil
}

// checkSecrets: a secret option's value never comes back.
func (r *aapRun) checkSecrets(ctx context.Context) {
	const id, title = "options.secret-redacted", "a secret option's value is never returned"
	var secret string
	for _, o := range r.agent.Options {
		if o.Type == aap.OptionSecret {
			secret = o.Name
			break
		}
	}
	if secret == "" {
		r.skip(id, title, secSecret, "the agent declares no secret option")
		return
	}
	ctx, cancel := r.ctx(ctx)
	defer cancel()
	const value = "agentcheck-secret-value-7f3a"
	sid, _, err := r.newSessionWith(ctx, r.c, aap.AgentConfig{Name: r.agent.Name, Options: map[string]string{secret: value}}, nil)
	if err != nil {
		r.fail(id, title, secSecret, failure{detail: "creating a session with the secret option: " + err.Error()})
		return
	}
	defer r.deleteSession(ctx, sid)
	for _, path := range []string{r.sessionPath(sid), "/sessions"} {
		status, body, err := r.raw(ctx, http.MethodGet, path, "", r.opts.Key)
		if err != nil || status != http.StatusOK {
			r.fail(id, title, secSecret, failure{detail: fmt.Sprint(status, " ", err), sent: "GET " + path})
			return
		}
		if bytes.Contains(body, []byte(value)) {
			r.fail(id, title, secSecret, failure{sent: "GET " + path, got: string(body), want: "the value of " + secret + " redacted"})
			return
		}
	}
	r.pass(id, title, secSecret)
}

// checkIsolation: another key's caller cannot see, list or use the
// session.
func (r *aapRun) checkIsolation(ctx context.Context, sid string) {
	const id, title = "keys.isolation", "another key cannot see, list, read or use a session"
	if r.c2 == nil || sid == "" {
		r.skip(id, title, secAuth, "no --key2 (or no session)")
		return
	}
	ctx, cancel := r.ctx(ctx)
	defer cancel()
	for _, path := range []string{r.sessionPath(sid), r.historyPath(sid, aap.HistoryFull)} {
		status, body, err := r.raw(ctx, http.MethodGet, path, "", r.opts.Key2)
		if err != nil || status != http.StatusNotFound {
			r.fail(id, title, secAuth, failure{detail: fmt.Sprint(err), sent: "GET " + path + " with the second key", got: fmt.Sprintf("%d %s", status, body), want: "404"})
			return
		}
	}
	for s, err := range r.c2.Sessions(ctx) {
		if err != nil {
			r.fail(id, title, secAuth, failure{detail: err.Error(), sent: "GET /sessions with the second key"})
			return
		}
		if s.SessionID == sid {
			r.fail(id, title, secAuth, failure{sent: "GET /sessions with the second key", got: "the first key's session " + sid, want: "only the second key's sessions"})
			return
		}
	}
	body := fmt.Sprintf(`{"messages":[{"role":"user","content":%q}]}`, r.opts.Prompts.Text)
	status, resp, err := r.raw(ctx, http.MethodPost, r.turnPath(sid), body, r.opts.Key2)
	if err != nil || status != http.StatusNotFound {
		r.fail(id, title, secAuth, failure{detail: fmt.Sprint(err), sent: "POST " + r.turnPath(sid) + " with the second key", got: fmt.Sprintf("%d %s", status, resp), want: "404"})
		return
	}
	r.pass(id, title, secAuth)
}

// checkDelete: DELETE answers 204, and the session is gone.
func (r *aapRun) checkDelete(ctx context.Context, sid string) {
	const id, title = "session.delete", "DELETE /sessions/:id is 204, then the session is 404"
	if sid == "" {
		r.skip(id, title, secDelete, "no session")
		return
	}
	ctx, cancel := r.ctx(ctx)
	defer cancel()
	status, body, err := r.raw(ctx, http.MethodDelete, r.sessionPath(sid), "", r.opts.Key)
	if err != nil || status != http.StatusNoContent {
		r.fail(id, title, secDelete, failure{detail: fmt.Sprint(err), sent: "DELETE " + r.sessionPath(sid), got: fmt.Sprintf("%d %s", status, body), want: "204"})
		return
	}
	status, body, err = r.raw(ctx, http.MethodGet, r.sessionPath(sid), "", r.opts.Key)
	if err != nil || status != http.StatusNotFound {
		r.fail(id, title, secDelete, failure{detail: fmt.Sprint(err), sent: "GET " + r.sessionPath(sid) + " after the delete", got: fmt.Sprintf("%d %s", status, body), want: "404"})
		return
	}
	r.pass(id, title, secDelete)
}

// streamPut streams a PUT /session: sid is the id of its session_start,
// opened whether that was the stream's first event, and t the other
// events.
func (r *aapRun) streamPut(ctx context.Context, put *aap.PutSessionRequest) (sid string, opened bool, t turnResult) {
	first := true
	for ev, err := range r.c.StreamPutSession(ctx, put) {
		if err != nil {
			t.err = err
			break
		}
		if s, ok := ev.(*aap.SessionStart); ok {
			if sid == "" {
				sid, opened = s.SessionID, first
			}
			first = false
			continue
		}
		first = false
		t.events = append(t.events, ev)
	}
	return sid, opened, t
}

// checkLegacyStream checks a version 1 or 2 conversation end to end: PUT
// /session streaming opens with session_start and the first turn, POST
// /session/:id continues it, and the history holds both.
func (r *aapRun) checkLegacyStream(ctx context.Context) {
	sec := fmt.Sprintf("aap-v%d/endpoints.md § PUT /session", r.v)
	ctx, cancel := r.ctx(ctx)
	defer cancel()
	const id, title = "legacy.conversation", "PUT /session starts with session_start and the first turn; POST /session/:id continues; history holds both"
	p := r.opts.Prompts
	if p.Text == "" {
		r.skip(id, title, sec, "no text prompt")
		return
	}
	put := &aap.PutSessionRequest{Agent: aap.AgentConfig{Name: r.agent.Name}, Stream: aap.StreamDelta, Messages: []aap.Message{aap.UserText(p.Text)}}
	sid, _, t := r.streamPut(ctx, put)
	if problem := checkStream(t); problem != "" || sid == "" {
		if sid == "" && problem == "" {
			problem = "no session_start with a sessionId"
		}
		b, _ := json.Marshal(put)
		r.fail(id, title, sec, failure{detail: problem, sent: "PUT /session " + string(b), got: t.names(), want: "session_start, turn_start, …, turn_stop"})
		return
	}
	defer r.deleteSession(ctx, sid)
	second := &aap.PostSessionTurnRequest{Stream: aap.StreamDelta, Messages: []aap.Message{aap.UserText(p.Text + " again")}}
	t2 := r.stream(ctx, r.c, sid, second)
	if problem := checkStream(t2); problem != "" {
		r.fail(id, title, sec, failure{detail: problem, sent: "POST /session/" + sid + " " + turnJSON(second), got: t2.names()})
		return
	}
	hist, err := r.c.History(ctx, sid, aap.HistoryFull)
	if err != nil {
		r.fail(id, title, sec, failure{detail: err.Error(), sent: "the session's full history"})
		return
	}
	var users []string
	for _, m := range hist {
		if u, ok := m.(*aap.UserMessage); ok {
			users = append(users, contentText(u.Content))
		}
	}
	if want := []string{p.Text, p.Text + " again"}; !slices.Equal(users, want) {
		r.fail(id, title, sec, failure{sent: "the session's full history", got: strings.Join(users, " | "), want: strings.Join(want, " | ")})
		return
	}
	r.pass(id, title, sec)
}
