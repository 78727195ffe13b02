package aap2agui_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/store"
)

// The agent of the test servers: the bridge's default name and
// capabilities, with the demo's web_search as a server tool and one option
// of each kind.
const agentName = "agent"

var testOptions = []aap.AgentOption{
	{Type: aap.OptionText, Name: "language", Default: "English"},
	{Type: aap.OptionSelect, Name: "model", Options: []string{"small", "large"}, Default: "small"},
	{Type: aap.OptionSecret, Name: "api_key", Default: ""},
}

// weatherSpec is the client-side tool the demo agent calls for "weather
// in <place>".
var weatherSpec = aap.ToolSpec{
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

// demoAgent starts the demo AG-UI agent and returns its URL.
func demoAgent(t testing.TB) string {
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

// createSession creates a session of the test agent and returns its id.
func (e *env) createSession(t *testing.T, req aap.PostSessionsRequest) string {
	t.Helper()
	if req.Agent.Name == "" {
		req.Agent.Name = agentName
	}
	resp, err := e.Client.CreateSession(bridgetest.Context(t), &req)
	require.NoError(t, err)
	return resp.SessionID
}

// stream sends a streaming turn and returns its events; err is the error
// the stream ended with, if any.
func (e *env) stream(t *testing.T, id string, req aap.PostSessionTurnRequest) ([]aap.Event, error) {
	t.Helper()
	var evs []aap.Event
	for ev, err := range e.Client.StreamTurn(bridgetest.Context(t), id, &req) {
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
	msgs, err := e.Client.History(bridgetest.Context(t), id, ht)
	require.NoError(t, err)
	return messageLines(t, msgs)
}

// userTurn is a turn request holding one user message.
func userTurn(mode aap.StreamMode, text string) aap.PostSessionTurnRequest {
	return aap.PostSessionTurnRequest{Stream: mode, Messages: []aap.Message{aap.UserText(text)}}
}

// rawResponse is a response read in full.
type rawResponse struct {
	Status int
	Header http.Header
	Body   string
}

// doRaw sends a request with plain net/http: for what the AAP client would
// not send (malformed bodies, wrong methods, missing keys).
func doRaw(t *testing.T, method, url, key, body string) rawResponse {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(bridgetest.Context(t), method, url, rd)
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

// readAll reads and closes a response body.
func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}
