package agui2aap_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/bridge/agui2aap"
	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/internal/sse"
	"github.com/aapagui/aapagui/store"
)

// testTimeout bounds every request of a test, so that a hang shows as a
// failure rather than a stuck test run.
const testTimeout = 20 * time.Second

// testContext ends with the test, or after testTimeout.
func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// weatherTool is the frontend tool the demo agent calls for "weather in
// <place>", as an AG-UI client declares it.
var weatherTool = types.Tool{
	Name:        demo.WeatherTool,
	Description: "Get the current weather for a place.",
	Parameters: map[string]any{
		"type":       "object",
		"properties": map[string]any{"location": map[string]any{"type": "string"}},
		"required":   []any{"location"},
	},
}

// env is agui2aap, over real HTTP, in front of an AAP server.
type env struct {
	URL       string        // the bridge's root URL
	AAP       string        // the AAP server's base URL
	AAPClient *aap.Client   // talks to the AAP server directly
	Store     store.Threads // the bridge's thread store
	server    *httptest.Server
}

// newEnv starts the AAP demo agent and agui2aap in front of it with a
// memory store and web_search enabled, untrusted; configure may change the
// Config.
func newEnv(t testing.TB, configure ...func(*agui2aap.Config)) *env {
	t.Helper()
	return newBridge(t, demoUpstream(t), configure...)
}

// demoUpstream starts the AAP demo agent and returns its URL.
func demoUpstream(t testing.TB) string {
	t.Helper()
	s := httptest.NewServer(demo.NewAAPAgent(demo.AAPAgentOptions{}))
	t.Cleanup(s.Close)
	return s.URL
}

// newBridge starts agui2aap in front of the AAP server at upstream.
func newBridge(t testing.TB, upstream string, configure ...func(*agui2aap.Config)) *env {
	t.Helper()
	cfg := agui2aap.Config{
		Upstream:    upstream,
		Store:       store.NewMemory(),
		ServerTools: []agui2aap.ServerTool{{Name: demo.SearchTool}},
	}
	for _, f := range configure {
		f(&cfg)
	}
	srv, err := agui2aap.New(cfg)
	require.NoError(t, err)
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return &env{URL: hs.URL, AAP: upstream, AAPClient: aap.NewClient(upstream, aap.ClientOptions{}), Store: cfg.Store, server: hs}
}

// response is one answer of the bridge, read to the end. A stream's events
// have been decoded and checked with agui.Verify.
type response struct {
	Status int
	Header http.Header
	Body   string
	Events []events.Event
}

// errorCode is the code of a JSON error body, "" if it is not one.
func (r *response) errorCode() string {
	var er aap.ErrorResponse
	if json.Unmarshal([]byte(r.Body), &er) != nil {
		return ""
	}
	return er.Error.Code
}

// errorMessage is the message of a JSON error body.
func (r *response) errorMessage() string {
	var er aap.ErrorResponse
	_ = json.Unmarshal([]byte(r.Body), &er)
	return er.Error.Message
}

// runError is the stream's RUN_ERROR, nil if it has none.
func (r *response) runError() *events.RunErrorEvent {
	for _, ev := range r.Events {
		if e, ok := ev.(*events.RunErrorEvent); ok {
			return e
		}
	}
	return nil
}

// errorCodeInBand is the code of the stream's RUN_ERROR, "" if none.
func (r *response) errorCodeInBand() string {
	if e := r.runError(); e != nil && e.Code != nil {
		return *e.Code
	}
	return ""
}

// types lists the stream's event types.
func (r *response) types() []string {
	out := make([]string, len(r.Events))
	for i, ev := range r.Events {
		out[i] = string(ev.Type())
	}
	return out
}

// post sends body (JSON-encoded unless it is a string or []byte) to the
// bridge the way HttpAgent does, with extra headers as name/value pairs.
func (e *env) post(t testing.TB, path string, body any, headers ...string) *response {
	t.Helper()
	return e.postCtx(testContext(t), t, path, body, headers...)
}

func (e *env) postCtx(ctx context.Context, t testing.TB, path string, body any, headers ...string) *response {
	t.Helper()
	var data []byte
	switch b := body.(type) {
	case string:
		data = []byte(b)
	case []byte:
		data = b
	default:
		var err error
		data, err = json.Marshal(body)
		require.NoError(t, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.URL+path, bytes.NewReader(data))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return do(t, req)
}

// get sends a GET with extra headers as name/value pairs.
func (e *env) get(t testing.TB, path string, headers ...string) *response {
	t.Helper()
	req, err := http.NewRequestWithContext(testContext(t), http.MethodGet, e.URL+path, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return do(t, req)
}

// do sends the request and reads the answer; an event stream is decoded
// and verified.
func do(t testing.TB, req *http.Request) *response {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err, "reading the response")
	r := &response{Status: resp.StatusCode, Header: resp.Header, Body: string(body)}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		r.Events = decodeStream(t, body)
	}
	return r
}

// decodeStream decodes an AG-UI event stream, checking its framing (LF
// only, data lines only, each but a hydration's after the id of its run
// log, numbered on from 1) and that it passes agui.Verify.
func decodeStream(t testing.TB, body []byte) []events.Event {
	t.Helper()
	require.NotContains(t, string(body), "\r", "LF-only framing")
	log, n, idAbove := "", 0, false
	for _, line := range strings.Split(string(body), "\n") {
		switch {
		case line == "":
		case strings.HasPrefix(line, "id: "):
			id := strings.TrimPrefix(line, "id: ")
			if n++; n == 1 {
				log, _, _ = strings.Cut(id, ":")
			}
			require.Equal(t, fmt.Sprintf("%s:%d", log, n), id, "the events' ids")
			idAbove = true
		default:
			require.True(t, strings.HasPrefix(line, "data: "), "only id and data lines: %q", line)
			require.True(t, idAbove || n == 0, "an id on every event of a run: %q", line)
			idAbove = false
		}
	}
	var evs []events.Event
	for ev, err := range sse.Read(bytes.NewReader(body), sse.ReadOptions{MaxEventSize: 64 << 20}) {
		require.NoError(t, err)
		require.Empty(t, ev.Name, "AG-UI frames have no event name")
		decoded, err := agui.DecodeEvent(ev.Data)
		require.NoError(t, err, "event %s", ev.Data)
		evs = append(evs, decoded)
	}
	require.NoError(t, agui.Verify(evs), "the stream must pass the AG-UI verifier:\n%s", body)
	return evs
}

// conv is an AG-UI client's side of one thread, kept the way HttpAgent
// keeps it: every run sends the whole history, and the events of the run
// are applied to it.
type conv struct {
	e              *env
	ThreadID       string
	Messages       []types.Message
	Tools          []types.Tool
	Context        []types.Context
	ForwardedProps any
	// Headers are sent with every run (name/value pairs).
	Headers []string
	n       int
}

func (e *env) conv(threadID string) *conv {
	return &conv{e: e, ThreadID: threadID}
}

func (c *conv) newID(prefix string) string {
	c.n++
	return fmt.Sprintf("%s-%s-%d", prefix, c.ThreadID, c.n)
}

// say adds a user message and returns its id.
func (c *conv) say(text string) string {
	id := c.newID("user")
	c.Messages = append(c.Messages, types.Message{ID: id, Role: types.RoleUser, Content: text})
	return id
}

// answer adds the tool message for a call.
func (c *conv) answer(toolCallID, content string) {
	c.Messages = append(c.Messages, types.Message{ID: c.newID("tool"), Role: types.RoleTool, ToolCallID: toolCallID, Content: content})
}

// input is the RunAgentInput of the next run.
func (c *conv) input(runID string, resume []types.ResumeEntry) types.RunAgentInput {
	if runID == "" {
		runID = c.newID("run")
	}
	tools := c.Tools
	if tools == nil {
		tools = []types.Tool{}
	}
	ctx := c.Context
	if ctx == nil {
		ctx = []types.Context{}
	}
	fwd := c.ForwardedProps
	if fwd == nil {
		fwd = map[string]any{}
	}
	msgs := c.Messages
	if msgs == nil {
		msgs = []types.Message{}
	}
	return types.RunAgentInput{
		ThreadID: c.ThreadID, RunID: runID, State: map[string]any{}, Messages: msgs,
		Tools: tools, Context: ctx, ForwardedProps: fwd, Resume: resume,
	}
}

// run starts a run with a new run id.
func (c *conv) run(t testing.TB, resume ...types.ResumeEntry) *result {
	t.Helper()
	return c.runAs(t, "", resume...)
}

// runAs starts a run with the given run id ("" for a new one) and applies
// its events to the history.
func (c *conv) runAs(t testing.TB, runID string, resume ...types.ResumeEntry) *result {
	t.Helper()
	in := c.input(runID, resume)
	r := c.e.post(t, "/agents/demo", in, c.Headers...)
	require.Equal(t, http.StatusOK, r.Status, "run answered %d: %s", r.Status, r.Body)
	res := summarize(r)
	if rs, ok := r.Events[0].(*events.RunStartedEvent); ok {
		require.Equal(t, in.ThreadID, rs.ThreadID())
		require.Equal(t, in.RunID, rs.RunID())
	}
	c.apply(r.Events)
	return res
}

// apply adds a run's messages to the history as HttpAgent does.
func (c *conv) apply(evs []events.Event) {
	find := func(id string) int {
		for i := range c.Messages {
			if c.Messages[i].ID == id {
				return i
			}
		}
		return -1
	}
	findCall := func(id string) (int, int) {
		for i := range c.Messages {
			for j := range c.Messages[i].ToolCalls {
				if c.Messages[i].ToolCalls[j].ID == id {
					return i, j
				}
			}
		}
		return -1, -1
	}
	appendText := func(i int, delta string) {
		s, _ := c.Messages[i].Content.(string)
		c.Messages[i].Content = s + delta
	}
	for _, ev := range evs {
		switch e := ev.(type) {
		case *events.TextMessageStartEvent:
			if find(e.MessageID) < 0 {
				c.Messages = append(c.Messages, types.Message{ID: e.MessageID, Role: types.RoleAssistant, Content: ""})
			}
		case *events.TextMessageContentEvent:
			appendText(find(e.MessageID), e.Delta)
		case *events.ReasoningMessageStartEvent:
			if find(e.MessageID) < 0 {
				c.Messages = append(c.Messages, types.Message{ID: e.MessageID, Role: types.RoleReasoning, Content: ""})
			}
		case *events.ReasoningMessageContentEvent:
			appendText(find(e.MessageID), e.Delta)
		case *events.ToolCallStartEvent:
			i := -1
			if e.ParentMessageID != nil {
				i = find(*e.ParentMessageID)
			}
			if i < 0 {
				id := e.ToolCallID
				if e.ParentMessageID != nil {
					id = *e.ParentMessageID
				}
				c.Messages = append(c.Messages, types.Message{ID: id, Role: types.RoleAssistant})
				i = len(c.Messages) - 1
			}
			c.Messages[i].ToolCalls = append(c.Messages[i].ToolCalls, types.ToolCall{ID: e.ToolCallID, Type: "function", Function: types.FunctionCall{Name: e.ToolCallName}})
		case *events.ToolCallArgsEvent:
			i, j := findCall(e.ToolCallID)
			c.Messages[i].ToolCalls[j].Function.Arguments += e.Delta
		case *events.ToolCallResultEvent:
			m := types.Message{ID: e.MessageID, Role: types.RoleTool, ToolCallID: e.ToolCallID, Content: e.Content}
			i, _ := findCall(e.ToolCallID)
			if i < 0 {
				c.Messages = append(c.Messages, m)
				continue
			}
			at := i + 1
			for at < len(c.Messages) && c.Messages[at].Role == types.RoleTool {
				at++
			}
			c.Messages = append(c.Messages[:at], append([]types.Message{m}, c.Messages[at:]...)...)
		}
	}
}

// dropLast removes the last message (a regenerate) and returns it.
func (c *conv) dropLast() types.Message {
	m := c.Messages[len(c.Messages)-1]
	c.Messages = c.Messages[:len(c.Messages)-1]
	return m
}

// toolCall is one tool call of a run.
type toolCall struct {
	ID, Name, Args, Parent string
}

// result summarizes a run's stream.
type result struct {
	*response
	Text      []string          // the text of each text message, in order
	Reasoning []string          // the text of each reasoning message
	Calls     []toolCall        // tool calls, in order
	Results   map[string]string // tool call id → result content
	Finished  *events.RunFinishedEvent
	Error     *events.RunErrorEvent
}

func summarize(r *response) *result {
	res := &result{response: r, Results: map[string]string{}}
	text := map[string]int{}
	reasoning := map[string]int{}
	calls := map[string]int{}
	for _, ev := range r.Events {
		switch e := ev.(type) {
		case *events.TextMessageStartEvent:
			text[e.MessageID] = len(res.Text)
			res.Text = append(res.Text, "")
		case *events.TextMessageContentEvent:
			res.Text[text[e.MessageID]] += e.Delta
		case *events.ReasoningMessageStartEvent:
			reasoning[e.MessageID] = len(res.Reasoning)
			res.Reasoning = append(res.Reasoning, "")
		case *events.ReasoningMessageContentEvent:
			res.Reasoning[reasoning[e.MessageID]] += e.Delta
		case *events.ToolCallStartEvent:
			calls[e.ToolCallID] = len(res.Calls)
			c := toolCall{ID: e.ToolCallID, Name: e.ToolCallName}
			if e.ParentMessageID != nil {
				c.Parent = *e.ParentMessageID
			}
			res.Calls = append(res.Calls, c)
		case *events.ToolCallArgsEvent:
			res.Calls[calls[e.ToolCallID]].Args += e.Delta
		case *events.ToolCallResultEvent:
			res.Results[e.ToolCallID] = e.Content
		case *events.RunFinishedEvent:
			res.Finished = e
		case *events.RunErrorEvent:
			res.Error = e
		}
	}
	return res
}

// outcome is the RUN_FINISHED outcome type, "" when there is none (or the
// run failed).
func (r *result) outcome() string {
	if r.Finished == nil || r.Finished.Outcome == nil {
		return ""
	}
	return string(r.Finished.Outcome.Type)
}

// interrupts are the run's interrupts.
func (r *result) interrupts() []types.Interrupt {
	if r.Finished == nil || r.Finished.Outcome == nil {
		return nil
	}
	return r.Finished.Outcome.Interrupts
}

// lastText is the text of the run's last text message.
func (r *result) lastText() string {
	if len(r.Text) == 0 {
		return ""
	}
	return r.Text[len(r.Text)-1]
}

// approve and deny are resume entries answering a permission interrupt.
func approve(interruptID string) types.ResumeEntry {
	return types.ResumeEntry{InterruptID: interruptID, Status: types.ResumeStatusResolved, Payload: map[string]any{"approved": true}}
}

func deny(interruptID, reason string) types.ResumeEntry {
	return types.ResumeEntry{InterruptID: interruptID, Status: types.ResumeStatusResolved, Payload: map[string]any{"approved": false, "reason": reason}}
}

// sessions lists the AAP server's sessions (the demo agent without keys
// shows every session to everyone).
func (e *env) sessions(t testing.TB) []aap.SessionInfo {
	t.Helper()
	var out []aap.SessionInfo
	for s, err := range e.AAPClient.Sessions(testContext(t)) {
		require.NoError(t, err)
		out = append(out, s)
	}
	return out
}

// onlySession requires the AAP server to have exactly one session and
// returns its id.
func (e *env) onlySession(t testing.TB) string {
	t.Helper()
	ss := e.sessions(t)
	require.Len(t, ss, 1, "the AAP server's sessions")
	return ss[0].SessionID
}

// history is the AAP session's full history.
func (e *env) history(t testing.TB, id string) []aap.Message {
	t.Helper()
	msgs, err := e.AAPClient.History(testContext(t), id, aap.HistoryFull)
	require.NoError(t, err)
	return msgs
}

// thread is the stored thread of the open (keyless) bridge.
func (e *env) thread(t testing.TB, id string) *store.Thread {
	t.Helper()
	th, err := e.Store.GetThread(testContext(t), "", id)
	require.NoError(t, err)
	return th
}

// userTexts are the texts of the history's user messages, in order.
func userTexts(hist []aap.Message) []string {
	var out []string
	for _, m := range hist {
		if u, ok := m.(*aap.UserMessage); ok {
			out = append(out, u.Content.PlainText())
		}
	}
	return out
}

// toolMessages are the history's tool messages, by tool call id.
func toolMessages(hist []aap.Message) map[string][]string {
	out := map[string][]string{}
	for _, m := range hist {
		if tm, ok := m.(*aap.ToolMessage); ok {
			out[tm.ToolCallID] = append(out[tm.ToolCallID], tm.Content.PlainText())
		}
	}
	return out
}

// roles are the roles of the history, in order.
func roles(hist []aap.Message) []string {
	out := make([]string, len(hist))
	for i, m := range hist {
		out[i] = string(m.Role())
	}
	return out
}

// fakeAAP is a scripted AAP server for what the demo agent cannot do:
// fail, hang, cut streams, declare fewer stream modes, call two tools.
type fakeAAP struct {
	URL    string
	server *httptest.Server
	meta   aap.GetMetaResponse
	// turn answers the n-th turn (from 0).
	turn func(w http.ResponseWriter, r *http.Request, n int, req *aap.PostSessionTurnRequest)

	mu      sync.Mutex
	creates []aap.PostSessionsRequest
	turns   []aap.PostSessionTurnRequest
}

// newFakeAAP starts a fake AAP server with one agent, "demo", that has the
// demo's web_search server tool and every stream mode.
func newFakeAAP(t testing.TB, turn func(w http.ResponseWriter, r *http.Request, n int, req *aap.PostSessionTurnRequest)) *fakeAAP {
	t.Helper()
	f := &fakeAAP{turn: turn, meta: aap.GetMetaResponse{Version: aap.Version, Agents: []aap.AgentInfo{{
		Name: "demo", Version: "1.0.0", Tools: []aap.ToolSpec{demo.SearchToolSpec},
		Capabilities: &aap.Capabilities{
			Stream:      &aap.StreamCapabilities{Delta: &aap.Empty{}, Message: &aap.Empty{}, None: &aap.Empty{}},
			Application: &aap.ApplicationCapabilities{Tools: &aap.Empty{}},
		},
	}}}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /meta", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, f.meta)
	})
	mux.HandleFunc("POST /sessions", func(w http.ResponseWriter, r *http.Request) {
		var req aap.PostSessionsRequest
		if !readJSON(w, r, &req) {
			return
		}
		f.mu.Lock()
		f.creates = append(f.creates, req)
		n := len(f.creates)
		f.mu.Unlock()
		writeJSON(w, http.StatusCreated, aap.PostSessionsResponse{SessionID: fmt.Sprintf("sess-%d", n)})
	})
	mux.HandleFunc("POST /sessions/{id}/turns", func(w http.ResponseWriter, r *http.Request) {
		var req aap.PostSessionTurnRequest
		if !readJSON(w, r, &req) {
			return
		}
		f.mu.Lock()
		f.turns = append(f.turns, req)
		n := len(f.turns) - 1
		f.mu.Unlock()
		f.turn(w, r, n, &req)
	})
	f.server = httptest.NewServer(mux)
	t.Cleanup(f.server.Close)
	f.URL = f.server.URL
	return f
}

// turnRequests returns the turns received so far.
func (f *fakeAAP) turnRequests() []aap.PostSessionTurnRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]aap.PostSessionTurnRequest(nil), f.turns...)
}

func readJSON(w http.ResponseWriter, r *http.Request, v json.Unmarshaler) bool {
	data, err := io.ReadAll(r.Body)
	if err == nil {
		err = v.UnmarshalJSON(data)
	}
	if err != nil {
		writeJSON(w, http.StatusBadRequest, aap.ErrorResponse{Error: aap.ErrorBody{Code: "invalid_request", Message: err.Error()}})
		return false
	}
	return true
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeEvents writes AAP events as an SSE response and flushes.
func writeEvents(w http.ResponseWriter, evs ...aap.Event) {
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
	}
	var buf []byte
	for _, ev := range evs {
		var err error
		if buf, err = aap.AppendFrame(buf, ev); err != nil {
			panic(err) // the tests' own events
		}
	}
	_, _ = w.Write(buf)
	_ = http.NewResponseController(w).Flush()
}

// answerText is a fake turn that says text and ends the turn.
func answerText(text string) func(http.ResponseWriter, *http.Request, int, *aap.PostSessionTurnRequest) {
	return func(w http.ResponseWriter, _ *http.Request, _ int, req *aap.PostSessionTurnRequest) {
		if req.Mode() == aap.StreamNone {
			writeJSON(w, http.StatusOK, aap.PostSessionTurnResponse{StopReason: aap.StopEndTurn, Messages: []aap.Message{&aap.AssistantMessage{Content: aap.TextContent(text)}}})
			return
		}
		writeEvents(w, &aap.TurnStart{}, &aap.TextDelta{Delta: text}, &aap.TurnStop{StopReason: aap.StopEndTurn})
	}
}
