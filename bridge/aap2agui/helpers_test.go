package aap2agui_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/store"
)

// testTimeout bounds every test's requests, so that a bug shows as a
// failure rather than a hung test run.
const testTimeout = 20 * time.Second

// The agent of the test servers: the bridge's default name and
// capabilities, with the demo's web_search as a server tool and one option
// of each kind.
const agentName = "agent"

var testOptions = []aap.AgentOption{
	{Type: aap.OptionText, Name: "language", Default: "English"},
	{Type: aap.OptionSelect, Name: "model", Options: []string{"small", "large"}, Default: "small"},
	{Type: aap.OptionSecret, Name: "api_key", Default: ""},
}

// weatherTool is the client-side tool the demo agent calls for "weather
// in <place>".
var weatherTool = aap.ToolSpec{
	Name:        demo.WeatherTool,
	Description: "Get the current weather for a place.",
	Parameters:  json.RawMessage(`{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}`),
}

// env is one aap2agui server under test, reached over real HTTP.
type env struct {
	URL    string // the AAP base URL, BasePath included
	Root   string // the server's root URL
	Store  store.Sessions
	Client *aap.Client
	Server *aap2agui.Server
	server *httptest.Server
}

// newEnv starts aap2agui in front of upstream with a memory store; the
// configure functions may change anything in the Config before New.
func newEnv(t *testing.T, upstream string, configure ...func(*aap2agui.Config)) *env {
	t.Helper()
	cfg := aap2agui.Config{
		Upstream: upstream,
		Store:    store.NewMemory(),
		Agent:    aap.AgentInfo{Tools: []aap.ToolSpec{demo.SearchToolSpec}, Options: testOptions},
	}
	for _, f := range configure {
		f(&cfg)
	}
	srv, err := aap2agui.New(cfg)
	require.NoError(t, err)
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	e := &env{URL: hs.URL + strings.TrimSuffix(cfg.BasePath, "/"), Root: hs.URL, Store: cfg.Store, Server: srv, server: hs}
	key := ""
	if len(cfg.APIKeys) > 0 {
		key = cfg.APIKeys[0]
	}
	e.Client = aap.NewClient(e.URL, aap.ClientOptions{APIKey: key})
	return e
}

// demoUpstream starts the demo AG-UI agent and returns its URL.
func demoUpstream(t testing.TB) string {
	t.Helper()
	return serve(t, demo.AGUIAgent{})
}

// lateUpstream starts the demo AG-UI agent answering a run's headers at
// once and its events once wait returns true (false: the run ends without
// them), as a model's time to first token; it returns the agent's URL.
func lateUpstream(t testing.TB, wait func(*http.Request) bool) string {
	t.Helper()
	return serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The run is read first: net/http closes a request's body once
		// its response has begun.
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		if wait(r) {
			demo.AGUIAgent{}.ServeHTTP(headersSent{w}, r)
		}
	}))
}

// headersSent is a ResponseWriter whose headers have gone out.
type headersSent struct{ http.ResponseWriter }

func (headersSent) WriteHeader(int)               {}
func (w headersSent) Flush()                      { w.ResponseWriter.(http.Flusher).Flush() }
func (w headersSent) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// serve starts h and returns its URL.
func serve(t testing.TB, h http.Handler) string {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s.URL
}

// testContext is a context that ends with the test, or after testTimeout.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// createSession creates a session of the test agent and returns its id.
func (e *env) createSession(t *testing.T, req aap.PostSessionsRequest) string {
	t.Helper()
	if req.Agent.Name == "" {
		req.Agent.Name = agentName
	}
	resp, err := e.Client.CreateSession(testContext(t), &req)
	require.NoError(t, err)
	return resp.SessionID
}

// stream sends a streaming turn and returns its events; err is the error
// the stream ended with, if any.
func (e *env) stream(t *testing.T, id string, req aap.PostSessionTurnRequest) ([]aap.Event, error) {
	t.Helper()
	var evs []aap.Event
	for ev, err := range e.Client.StreamTurn(testContext(t), id, &req) {
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

// history returns the session's history of type ht as JSON lines.
func (e *env) history(t *testing.T, id string, ht aap.HistoryType) []string {
	t.Helper()
	msgs, err := e.Client.History(testContext(t), id, ht)
	require.NoError(t, err)
	return messageLines(t, msgs)
}

// userTurn is a turn request holding one user message.
func userTurn(mode aap.StreamMode, text string) aap.PostSessionTurnRequest {
	return aap.PostSessionTurnRequest{Stream: mode, Messages: []aap.Message{aap.UserText(text)}}
}

// eventLines renders events as "name data" lines, as a client sees them.
func eventLines(t *testing.T, evs []aap.Event) []string {
	t.Helper()
	out := make([]string, len(evs))
	for i, ev := range evs {
		data, err := ev.AppendData(nil)
		require.NoError(t, err)
		out[i] = string(ev.EventName()) + " " + string(data)
	}
	return out
}

// messageLines renders messages as their JSON.
func messageLines(t *testing.T, msgs []aap.Message) []string {
	t.Helper()
	out := make([]string, len(msgs))
	for i, m := range msgs {
		b, err := json.Marshal(m)
		require.NoError(t, err)
		out[i] = string(b)
	}
	return out
}

// idNormalizer replaces the random tool call ids the demo agent makes
// (call_<32 hex>) with call#1, call#2… in the order it first sees them, so
// that expectations can be written out in full.
type idNormalizer struct {
	ids []string
}

var callIDPattern = regexp.MustCompile(`call_[0-9a-f]{32}`)

func (n *idNormalizer) lines(in []string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = callIDPattern.ReplaceAllStringFunc(s, func(id string) string {
			for j, known := range n.ids {
				if known == id {
					return "call#" + strconv.Itoa(j+1)
				}
			}
			n.ids = append(n.ids, id)
			return "call#" + strconv.Itoa(len(n.ids))
		})
	}
	return out
}

// rawResponse is a response read in full.
type rawResponse struct {
	Status int
	Header http.Header
	Body   string
}

// do sends a request with plain net/http: for what the AAP client would
// not send (malformed bodies, wrong methods, missing keys).
func do(t *testing.T, method, url, key, body string) rawResponse {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(testContext(t), method, url, rd)
	require.NoError(t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return rawResponse{Status: resp.StatusCode, Header: resp.Header, Body: string(b)}
}

// requireJSONError checks an error response: the status, a JSON body with
// the code and a non-empty message.
func requireJSONError(t *testing.T, r rawResponse, status int, code string) {
	t.Helper()
	require.Equal(t, status, r.Status, "body: %s", r.Body)
	assert.Equal(t, "application/json", r.Header.Get("Content-Type"))
	var er aap.ErrorResponse
	require.NoError(t, json.Unmarshal([]byte(r.Body), &er), "body: %s", r.Body)
	assert.Equal(t, code, er.Error.Code, "body: %s", r.Body)
	assert.NotEmpty(t, er.Error.Message)
}

// requireHTTPError checks that err is an error status from the server
// with the given code.
func requireHTTPError(t *testing.T, err error, status int, code string) {
	t.Helper()
	var he *aap.HTTPError
	require.True(t, errors.As(err, &he), "want HTTP %d %s, got %v", status, code, err)
	assert.Equal(t, status, he.StatusCode, "error: %v", err)
	assert.Equal(t, code, he.Code, "error: %v", err)
	assert.NotEmpty(t, he.Message)
}

// runInput is one RunAgentInput an upstream received: decoded, and as raw
// JSON for the fields whose exact shape matters.
type runInput struct {
	types.RunAgentInput
	Raw    map[string]json.RawMessage
	Header http.Header
}

// messageIDs returns the AG-UI ids of the run's messages.
func (in *runInput) messageIDs() []string {
	ids := make([]string, len(in.Messages))
	for i, m := range in.Messages {
		ids[i] = m.ID
	}
	return ids
}

// fakeUpstream is a scripted AG-UI agent: it records every RunAgentInput
// and answers with what respond writes.
type fakeUpstream struct {
	URL string

	mu     sync.Mutex
	inputs []*runInput
}

// newFakeUpstream starts an AG-UI agent whose answer to each run is
// written by respond (n counts runs from 0).
func newFakeUpstream(t testing.TB, respond func(w http.ResponseWriter, r *http.Request, in *runInput, n int)) *fakeUpstream {
	t.Helper()
	f := &fakeUpstream{}
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		in := &runInput{Header: r.Header.Clone()}
		if err := json.Unmarshal(body, &in.RunAgentInput); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if err := json.Unmarshal(body, &in.Raw); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body)) // for respond to read again
		f.mu.Lock()
		n := len(f.inputs)
		f.inputs = append(f.inputs, in)
		f.mu.Unlock()
		respond(w, r, in, n)
	}))
	t.Cleanup(s.Close)
	f.URL = s.URL
	return f
}

// input returns the n-th (from 0) input received.
func (f *fakeUpstream) input(t *testing.T, n int) *runInput {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	require.Greater(t, len(f.inputs), n, "the upstream got %d runs", len(f.inputs))
	return f.inputs[n]
}

// count returns how many runs the upstream got.
func (f *fakeUpstream) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.inputs)
}

// sseEvents writes AG-UI events (JSON objects) as an SSE stream and
// flushes.
func sseEvents(w http.ResponseWriter, evs ...string) {
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "text/event-stream")
	}
	var b bytes.Buffer
	for _, ev := range evs {
		fmt.Fprintf(&b, "data: %s\n\n", ev)
	}
	_, _ = w.Write(b.Bytes())
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// AG-UI events for scripted upstreams.
func runStarted(in *runInput) string {
	return fmt.Sprintf(`{"type":"RUN_STARTED","threadId":%q,"runId":%q}`, in.ThreadID, in.RunID)
}

func runFinished(in *runInput) string {
	return fmt.Sprintf(`{"type":"RUN_FINISHED","threadId":%q,"runId":%q}`, in.ThreadID, in.RunID)
}

// textMessage is a whole text message: start, one content event per
// delta, end.
func textMessage(id string, deltas ...string) []string {
	out := []string{fmt.Sprintf(`{"type":"TEXT_MESSAGE_START","messageId":%q,"role":"assistant"}`, id)}
	for _, d := range deltas {
		b, _ := json.Marshal(d)
		out = append(out, fmt.Sprintf(`{"type":"TEXT_MESSAGE_CONTENT","messageId":%q,"delta":%s}`, id, b))
	}
	return append(out, fmt.Sprintf(`{"type":"TEXT_MESSAGE_END","messageId":%q}`, id))
}

// toolCall is a whole tool call: start, the arguments in one delta, end.
func toolCall(id, name, parent, args string) []string {
	b, _ := json.Marshal(args)
	return []string{
		fmt.Sprintf(`{"type":"TOOL_CALL_START","toolCallId":%q,"toolCallName":%q,"parentMessageId":%q}`, id, name, parent),
		fmt.Sprintf(`{"type":"TOOL_CALL_ARGS","toolCallId":%q,"delta":%s}`, id, b),
		fmt.Sprintf(`{"type":"TOOL_CALL_END","toolCallId":%q}`, id),
	}
}

// concat joins event lists.
func concat(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// textRun is a complete run saying one text message.
func textRun(in *runInput, id string, deltas ...string) []string {
	return concat([]string{runStarted(in)}, textMessage(id, deltas...), []string{runFinished(in)})
}

// notifyStore tells when a turn has released its session's lock: the
// last thing a turn does, after storing everything it received.
type notifyStore struct {
	store.Store
	unlocked chan string
}

func newNotifyStore(s store.Store) *notifyStore {
	return &notifyStore{Store: s, unlocked: make(chan string, 64)}
}

func (s *notifyStore) Unlock(ctx context.Context, id, holder string) error {
	err := s.Store.Unlock(ctx, id, holder)
	s.unlocked <- id
	return err
}

// SaveSession with a holder is a turn's usual end: its last save frees
// the lock (a failed one is followed by Unlock).
func (s *notifyStore) SaveSession(ctx context.Context, sess *store.Session, appended []store.Entry, holder string) error {
	err := s.Store.SaveSession(ctx, sess, appended, holder)
	if err == nil && holder != "" {
		s.unlocked <- sess.ID
	}
	return err
}

// waitUnlocked waits for the turn of session id to end.
func (s *notifyStore) waitUnlocked(t *testing.T, id string) {
	t.Helper()
	ctx := testContext(t)
	for {
		select {
		case got := <-s.unlocked:
			if got == id {
				return
			}
		case <-ctx.Done():
			t.Fatalf("the turn of session %s did not end", id)
		}
	}
}

// readAll reads and closes a response body.
func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}
