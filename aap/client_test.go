package aap_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
)

// Response bodies of the reference server captures, byte for byte.
const (
	streamDeltaText = "event: turn_start\ndata: {}\n\n" +
		"event: text_delta\ndata: {\"delta\":\"Hello! You said: \"}\n\n" +
		"event: text_delta\ndata: {\"delta\":\"hello there\"}\n\n" +
		"event: turn_stop\ndata: {\"stopReason\":\"end_turn\"}\n\n"

	streamDeltaThinking = "event: turn_start\ndata: {}\n\n" +
		"event: thinking_delta\ndata: {\"delta\":\"The user asked \"}\n\n" +
		"event: thinking_delta\ndata: {\"delta\":\"me to think \"}\n\n" +
		"event: thinking_delta\ndata: {\"delta\":\"about: please think. \"}\n\n" +
		"event: thinking_delta\ndata: {\"delta\":\"I will reason \"}\n\n" +
		"event: thinking_delta\ndata: {\"delta\":\"briefly before answering.\"}\n\n" +
		"event: text_delta\ndata: {\"delta\":\"After thinking it \"}\n\n" +
		"event: text_delta\ndata: {\"delta\":\"over: the answer \"}\n\n" +
		"event: text_delta\ndata: {\"delta\":\"is 42.\"}\n\n" +
		"event: turn_stop\ndata: {\"stopReason\":\"end_turn\"}\n\n"

	streamDeltaToolCall = "event: turn_start\ndata: {}\n\n" +
		"event: tool_call\ndata: {\"toolCallId\":\"call_001\",\"name\":\"get_weather\",\"input\":{\"location\":\"Tokyo\"}}\n\n" +
		"event: turn_stop\ndata: {\"stopReason\":\"tool_use\"}\n\n"

	streamDeltaToolAnswer = "event: turn_start\ndata: {}\n\n" +
		"event: text_delta\ndata: {\"delta\":\"The weather tool \"}\n\n" +
		"event: text_delta\ndata: {\"delta\":\"says: Tokyo: 18°C, \"}\n\n" +
		"event: text_delta\ndata: {\"delta\":\"partly cloudy\"}\n\n" +
		"event: turn_stop\ndata: {\"stopReason\":\"end_turn\"}\n\n"

	streamDeltaTrusted = "event: turn_start\ndata: {}\n\n" +
		"event: tool_call\ndata: {\"toolCallId\":\"call_004\",\"name\":\"web_search\",\"input\":{\"query\":\"dogs\"}}\n\n" +
		"event: tool_result\ndata: {\"toolCallId\":\"call_004\",\"content\":\"\\\"Top result for dogs: AAP is the Agent Application Protocol (agentapplicationprotocol.com)\\\"\"}\n\n" +
		"event: text_delta\ndata: {\"delta\":\"Search result: \\\"Top \"}\n\n" +
		"event: text_delta\ndata: {\"delta\":\"result for dogs: \"}\n\n" +
		"event: text_delta\ndata: {\"delta\":\"AAP is the \"}\n\n" +
		"event: text_delta\ndata: {\"delta\":\"Agent Application Protocol \"}\n\n" +
		"event: text_delta\ndata: {\"delta\":\"(agentapplicationprotocol.com)\\\"\"}\n\n" +
		"event: turn_stop\ndata: {\"stopReason\":\"end_turn\"}\n\n"

	streamMessageToolCall = "event: turn_start\ndata: {}\n\n" +
		"event: tool_call\ndata: {\"toolCallId\":\"call_005\",\"name\":\"get_weather\",\"input\":{\"location\":\"Tokyo\"}}\n\n" +
		"event: turn_stop\ndata: {\"stopReason\":\"tool_use\"}\n\n"

	streamMessageText = "event: turn_start\ndata: {}\n\n" +
		"event: text\ndata: {\"text\":\"The weather tool says: Tokyo: 18°C, partly cloudy\"}\n\n" +
		"event: turn_stop\ndata: {\"stopReason\":\"end_turn\"}\n\n"
)

// recorded is what a test server saw of one request.
type recorded struct {
	Method, URI string
	Header      http.Header
	Body        string
}

// newServer starts a server that records every request and answers with
// handle. Requests are recorded in order.
func newServer(t *testing.T, handle http.HandlerFunc) (*httptest.Server, func() []recorded) {
	t.Helper()
	var mu sync.Mutex
	var reqs []recorded
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		reqs = append(reqs, recorded{Method: r.Method, URI: r.RequestURI, Header: r.Header.Clone(), Body: string(body)})
		mu.Unlock()
		handle(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []recorded {
		mu.Lock()
		defer mu.Unlock()
		return append([]recorded(nil), reqs...)
	}
}

// reply answers with a status and a JSON body.
func reply(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

// sse answers with an event stream of the given bytes.
func sse(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, body)
	}
}

func TestClientEndpoints(t *testing.T) {
	const meta = `{"version":3,"agents":[{"name":"scripted-agent","version":"0.1.0","options":[{"type":"secret","name":"apiKey","default":""}],"capabilities":{"history":{"full":{}},"stream":{"delta":{},"message":{},"none":{}}}}]}`
	const page = `{"sessions":[` + wireSession + `],"next":"c/2 +="}`
	ctx := context.Background()

	tests := []struct {
		name       string
		status     int
		respBody   string
		call       func(c *aap.Client) (any, error)
		wantMethod string
		wantURI    string
		wantBody   string // empty: no body
		want       string // the result, JSON-encoded
	}{
		{
			name: "meta", status: 200, respBody: meta,
			call:       func(c *aap.Client) (any, error) { return c.Meta(ctx) },
			wantMethod: "GET", wantURI: "/v1/meta", want: meta,
		},
		{
			name: "list sessions first page", status: 200, respBody: page,
			call:       func(c *aap.Client) (any, error) { return c.ListSessions(ctx, "") },
			wantMethod: "GET", wantURI: "/v1/sessions", want: page,
		},
		{
			name: "list sessions after an escaped cursor", status: 200, respBody: `{"sessions":[]}`,
			call:       func(c *aap.Client) (any, error) { return c.ListSessions(ctx, "c/2 +=") },
			wantMethod: "GET", wantURI: "/v1/sessions?after=c%2F2+%2B%3D", want: `{"sessions":[]}`,
		},
		{
			name: "create session", status: 201, respBody: `{"sessionId":"sess_d00e325e19ff4ad6"}`,
			call: func(c *aap.Client) (any, error) {
				return c.CreateSession(ctx, &aap.PostSessionsRequest{
					Agent:    aap.AgentConfig{Name: "scripted-agent", Tools: []aap.ServerToolRef{{Name: "web_search", Trust: true}}, Options: map[string]string{"language": "French"}},
					Messages: []aap.Message{&aap.SystemMessage{Content: "You are a test agent."}},
				})
			},
			wantMethod: "POST", wantURI: "/v1/sessions",
			wantBody: `{"agent":{"name":"scripted-agent","tools":[{"name":"web_search","trust":true}],"options":{"language":"French"}},"messages":[{"role":"system","content":"You are a test agent."}]}`,
			want:     `{"sessionId":"sess_d00e325e19ff4ad6"}`,
		},
		{
			name: "get session", status: 200, respBody: wireSession,
			call:       func(c *aap.Client) (any, error) { return c.GetSession(ctx, "sess_d00e325e19ff4ad6") },
			wantMethod: "GET", wantURI: "/v1/sessions/sess_d00e325e19ff4ad6", want: wireSession,
		},
		{
			name: "get session with an id to escape", status: 200, respBody: wireSession,
			call:       func(c *aap.Client) (any, error) { return c.GetSession(ctx, "a/../b c?d#e") },
			wantMethod: "GET", wantURI: "/v1/sessions/a%2F..%2Fb%20c%3Fd%23e", want: wireSession,
		},
		{
			name: "delete session", status: 204,
			call:       func(c *aap.Client) (any, error) { return nil, c.DeleteSession(ctx, "s1") },
			wantMethod: "DELETE", wantURI: "/v1/sessions/s1", want: `null`,
		},
		{
			name: "history full", status: 200, respBody: `{"history":{"full":[` + wireSystem + `,` + wireUser + `,` + wireAssistantText + `]}}`,
			call:       func(c *aap.Client) (any, error) { return c.History(ctx, "s1", aap.HistoryFull) },
			wantMethod: "GET", wantURI: "/v1/sessions/s1/history?type=full", want: `[` + wireSystem + `,` + wireUser + `,` + wireAssistantText + `]`,
		},
		{
			name: "history compacted", status: 200, respBody: `{"history":{"compacted":[` + wireSystem + `]}}`,
			call:       func(c *aap.Client) (any, error) { return c.History(ctx, "s1", aap.HistoryCompacted) },
			wantMethod: "GET", wantURI: "/v1/sessions/s1/history?type=compacted", want: `[` + wireSystem + `]`,
		},
		{
			name: "history empty", status: 200, respBody: `{"history":{"full":[]}}`,
			call:       func(c *aap.Client) (any, error) { return c.History(ctx, "s1", aap.HistoryFull) },
			wantMethod: "GET", wantURI: "/v1/sessions/s1/history?type=full", want: `[]`,
		},
		{
			name: "turn is sent with stream none", status: 200, respBody: wireTurnRespTool,
			call: func(c *aap.Client) (any, error) {
				return c.Turn(ctx, "s1", &aap.PostSessionTurnRequest{Stream: aap.StreamDelta, Messages: []aap.Message{aap.UserText("what is the weather in Tokyo")}})
			},
			wantMethod: "POST", wantURI: "/v1/sessions/s1/turns",
			wantBody: `{"stream":"none","messages":[{"role":"user","content":"what is the weather in Tokyo"}]}`,
			want:     wireTurnRespTool,
		},
		{
			name: "turn with tool result", status: 200, respBody: wireTurnRespText,
			call: func(c *aap.Client) (any, error) {
				return c.Turn(ctx, "s1", &aap.PostSessionTurnRequest{Messages: []aap.Message{&aap.ToolMessage{ToolCallID: "call_009", Content: aap.TextContent("Tokyo: 18°C, partly cloudy")}}})
			},
			wantMethod: "POST", wantURI: "/v1/sessions/s1/turns",
			wantBody: wireTurnNone,
			want:     wireTurnRespText,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, reqs := newServer(t, reply(tt.status, tt.respBody))
			c := aap.NewClient(srv.URL+"/v1/", aap.ClientOptions{Version: aap.Version3})
			got, err := tt.call(c)
			require.NoError(t, err)
			gotJSON, err := json.Marshal(got)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(gotJSON))

			rs := reqs()
			require.Len(t, rs, 1)
			assert.Equal(t, tt.wantMethod, rs[0].Method)
			assert.Equal(t, tt.wantURI, rs[0].URI)
			assert.Equal(t, tt.wantBody, rs[0].Body)
			if tt.wantBody != "" {
				assert.Equal(t, "application/json", rs[0].Header.Get("Content-Type"))
			}
			assert.Equal(t, "application/json", rs[0].Header.Get("Accept"))
			assert.Empty(t, rs[0].Header.Values("Authorization"))
		})
	}
}

func TestClientTurnDoesNotModifyRequest(t *testing.T) {
	srv, _ := newServer(t, reply(200, wireTurnRespText))
	req := &aap.PostSessionTurnRequest{Stream: aap.StreamDelta, Messages: []aap.Message{aap.UserText("hi")}}
	_, err := aap.NewClient(srv.URL, aap.ClientOptions{Version: aap.Version3}).Turn(context.Background(), "s1", req)
	require.NoError(t, err)
	assert.Equal(t, aap.StreamDelta, req.Stream)
}

// TestClientRequestNotHTMLEscaped checks that request bodies go out without
// encoding/json's HTML escaping, so text and tool input reach the agent as
// the caller wrote them.
func TestClientRequestNotHTMLEscaped(t *testing.T) {
	srv, reqs := newServer(t, reply(200, wireTurnRespText))
	req := &aap.PostSessionTurnRequest{Messages: []aap.Message{
		&aap.ToolMessage{ToolCallID: "c1", Content: aap.BlockContent(&aap.TextBlock{Text: "<ok> & done"})},
	}}
	_, err := aap.NewClient(srv.URL, aap.ClientOptions{Version: aap.Version3}).Turn(context.Background(), "s1", req)
	require.NoError(t, err)
	assert.Equal(t, `{"stream":"none","messages":[{"role":"tool","toolCallId":"c1","content":[{"type":"text","text":"<ok> & done"}]}]}`, reqs()[0].Body)
}

func TestClientHeaders(t *testing.T) {
	tests := []struct {
		name     string
		opts     aap.ClientOptions
		wantAuth []string
		wantX    string
	}{
		{name: "api key", opts: aap.ClientOptions{Version: aap.Version3, APIKey: "secret-key"}, wantAuth: []string{"Bearer secret-key"}},
		{name: "no api key", opts: aap.ClientOptions{Version: aap.Version3}},
		{name: "extra headers", opts: aap.ClientOptions{Version: aap.Version3, Header: http.Header{"X-Trace": {"t1"}}}, wantX: "t1"},
		{name: "api key wins over a header", opts: aap.ClientOptions{Version: aap.Version3, APIKey: "k", Header: http.Header{"Authorization": {"Basic x"}, "X-Trace": {"t2"}}}, wantAuth: []string{"Bearer k"}, wantX: "t2"},
		{name: "authorization from header without api key", opts: aap.ClientOptions{Version: aap.Version3, Header: http.Header{"Authorization": {"Basic x"}}}, wantAuth: []string{"Basic x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, reqs := newServer(t, reply(200, `{"version":3,"agents":[]}`))
			c := aap.NewClient(srv.URL, tt.opts)
			_, err := c.Meta(context.Background())
			require.NoError(t, err)
			_, err = c.Turn(context.Background(), "s", &aap.PostSessionTurnRequest{Messages: []aap.Message{aap.UserText("x")}})
			require.Error(t, err) // the body is not a turn response; only the headers matter here
			for _, r := range reqs() {
				assert.Equal(t, tt.wantAuth, r.Header.Values("Authorization"), r.URI)
				assert.Equal(t, tt.wantX, r.Header.Get("X-Trace"), r.URI)
			}
		})
	}
}

func TestClientHeaderOptionIsCopied(t *testing.T) {
	srv, reqs := newServer(t, reply(200, `{"version":3,"agents":[]}`))
	h := http.Header{"X-Trace": {"before"}}
	c := aap.NewClient(srv.URL, aap.ClientOptions{Version: aap.Version3, Header: h})
	h.Set("X-Trace", "after")
	_, err := c.Meta(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "before", reqs()[0].Header.Get("X-Trace"))
}

func TestClientBaseURL(t *testing.T) {
	tests := []struct {
		name    string
		suffix  string
		wantURI string
	}{
		{name: "no prefix", suffix: "", wantURI: "/meta"},
		{name: "trailing slash", suffix: "/", wantURI: "/meta"},
		{name: "prefix", suffix: "/api/aap/v1", wantURI: "/api/aap/v1/meta"},
		{name: "prefix with trailing slash", suffix: "/api/aap/v1/", wantURI: "/api/aap/v1/meta"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, reqs := newServer(t, reply(200, `{"version":3,"agents":[]}`))
			_, err := aap.NewClient(srv.URL+tt.suffix, aap.ClientOptions{Version: aap.Version3}).Meta(context.Background())
			require.NoError(t, err)
			assert.Equal(t, tt.wantURI, reqs()[0].URI)
		})
	}
}

func TestClientHTTPErrors(t *testing.T) {
	tests := []struct {
		name         string
		status       int
		body         string
		wantNotFound bool
		wantCode     string
		wantMessage  string
		wantErr      string
	}{
		{
			name: "404 with error body", status: 404, body: `{"error":{"code":"session_not_found","message":"no session s1"}}`,
			wantNotFound: true, wantCode: "session_not_found", wantMessage: "no session s1",
			wantErr: `aap: GET /sessions/{id}: HTTP 404 Not Found: session_not_found: no session s1`,
		},
		{
			name: "404 without body", status: 404, wantNotFound: true,
			wantErr: `aap: GET /sessions/{id}: HTTP 404 Not Found`,
		},
		{
			name: "409 with error body", status: 409, body: `{"error":{"code":"turn_in_progress","message":"a turn is running"}}`,
			wantCode: "turn_in_progress", wantMessage: "a turn is running",
			wantErr: `aap: GET /sessions/{id}: HTTP 409 Conflict: turn_in_progress: a turn is running`,
		},
		{
			name: "500 with error body", status: 500, body: `{"error":{"code":"internal","message":"boom"}}`,
			wantCode: "internal", wantMessage: "boom",
			wantErr: `aap: GET /sessions/{id}: HTTP 500 Internal Server Error: internal: boom`,
		},
		{
			name: "500 with a text body", status: 500, body: "upstream\nfailed",
			wantErr: `aap: GET /sessions/{id}: HTTP 500 Internal Server Error: "upstream\nfailed"`,
		},
		{
			name: "400 with another JSON shape", status: 400, body: `{"message":"bad"}`,
			wantErr: `aap: GET /sessions/{id}: HTTP 400 Bad Request: "{\"message\":\"bad\"}"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := newServer(t, reply(tt.status, tt.body))
			_, err := aap.NewClient(srv.URL, aap.ClientOptions{Version: aap.Version3}).GetSession(context.Background(), "s1")
			require.EqualError(t, err, tt.wantErr)
			assert.Equal(t, tt.wantNotFound, aap.IsNotFound(err))
			var he *aap.HTTPError
			require.True(t, errors.As(err, &he))
			assert.Equal(t, tt.status, he.StatusCode)
			assert.Equal(t, tt.wantCode, he.Code)
			assert.Equal(t, tt.wantMessage, he.Message)
			assert.Equal(t, tt.body, string(he.Body))
		})
	}
}

func TestClientHTTPErrorEveryEndpoint(t *testing.T) {
	srv, _ := newServer(t, reply(404, `{"error":{"code":"not_found","message":"gone"}}`))
	c := aap.NewClient(srv.URL, aap.ClientOptions{Version: aap.Version3})
	ctx := context.Background()
	turn := &aap.PostSessionTurnRequest{Stream: aap.StreamDelta, Messages: []aap.Message{aap.UserText("x")}}
	calls := map[string]func() error{
		"meta":          func() error { _, err := c.Meta(ctx); return err },
		"list sessions": func() error { _, err := c.ListSessions(ctx, ""); return err },
		"create session": func() error {
			_, err := c.CreateSession(ctx, &aap.PostSessionsRequest{Agent: aap.AgentConfig{Name: "a"}})
			return err
		},
		"get session":    func() error { _, err := c.GetSession(ctx, "s"); return err },
		"delete session": func() error { return c.DeleteSession(ctx, "s") },
		"history":        func() error { _, err := c.History(ctx, "s", aap.HistoryFull); return err },
		"turn":           func() error { _, err := c.Turn(ctx, "s", turn); return err },
		"stream turn": func() error {
			var errs []error
			for ev, err := range c.StreamTurn(ctx, "s", turn) {
				require.Nil(t, ev)
				errs = append(errs, err)
			}
			require.Len(t, errs, 1, "an HTTP error is yielded once")
			return errs[0]
		},
		"sessions": func() error {
			for _, err := range c.Sessions(ctx) {
				return err
			}
			return nil
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			err := call()
			require.Error(t, err)
			assert.True(t, aap.IsNotFound(err), "got %v", err)
			assert.Contains(t, err.Error(), "HTTP 404 Not Found: not_found: gone")
		})
	}
}

func TestClientMaxErrorBody(t *testing.T) {
	long := strings.Repeat("x", 100)
	srv, _ := newServer(t, reply(502, long))
	_, err := aap.NewClient(srv.URL, aap.ClientOptions{Version: aap.Version3, MaxErrorBody: 10}).Meta(context.Background())
	var he *aap.HTTPError
	require.True(t, errors.As(err, &he))
	assert.Equal(t, long[:10], string(he.Body))

	_, err = aap.NewClient(srv.URL, aap.ClientOptions{Version: aap.Version3}).Meta(context.Background())
	require.True(t, errors.As(err, &he))
	assert.Equal(t, long, string(he.Body))
}

func TestClientBadResponseBody(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		body    string
		call    func(c *aap.Client) error
		wantErr string
	}{
		{
			name: "meta null", body: `null`,
			call:    func(c *aap.Client) error { _, err := c.Meta(ctx); return err },
			wantErr: `aap: GET /meta: invalid response body: must be a JSON object`,
		},
		{
			name: "meta empty", body: ``,
			call:    func(c *aap.Client) error { _, err := c.Meta(ctx); return err },
			wantErr: `aap: GET /meta: invalid response body: must be a JSON object`,
		},
		{
			name: "meta truncated", body: `{"version":3,`,
			call:    func(c *aap.Client) error { _, err := c.Meta(ctx); return err },
			wantErr: `aap: GET /meta: invalid response body: malformed JSON at byte 13: unexpected end of JSON input`,
		},
		{
			name: "meta version a string", body: `{"version":"3","agents":[]}`,
			call:    func(c *aap.Client) error { _, err := c.Meta(ctx); return err },
			wantErr: `aap: GET /meta: invalid response body: version: expected a number, got string`,
		},
		{
			name: "sessions page not an object", body: `[]`,
			call:    func(c *aap.Client) error { _, err := c.ListSessions(ctx, ""); return err },
			wantErr: `aap: GET /sessions: invalid response body: must be a JSON object`,
		},
		{
			name: "session agent tool without name", body: `{"sessionId":"s","agent":{"name":"a","tools":[{}]}}`,
			call:    func(c *aap.Client) error { _, err := c.GetSession(ctx, "s"); return err },
			wantErr: `aap: GET /sessions/{id}: invalid response body: agent.tools[0].name: required`,
		},
		{
			name: "create without sessionId", body: `{}`,
			call: func(c *aap.Client) error {
				_, err := c.CreateSession(ctx, &aap.PostSessionsRequest{Agent: aap.AgentConfig{Name: "a"}})
				return err
			},
			wantErr: `aap: POST /sessions: invalid response body: sessionId: required`,
		},
		{
			name: "history with tool_permission", body: `{"history":{"full":[{"role":"tool_permission","toolCallId":"c","granted":true}]}}`,
			call:    func(c *aap.Client) error { _, err := c.History(ctx, "s", aap.HistoryFull); return err },
			wantErr: `aap: GET /sessions/{id}/history: invalid response body: history.full[0].role: tool_permission messages are only allowed in a turn, never in history`,
		},
		{
			name: "history without the requested type", body: `{"history":{"compacted":[]}}`,
			call:    func(c *aap.Client) error { _, err := c.History(ctx, "s", aap.HistoryFull); return err },
			wantErr: `aap: GET /sessions/{id}/history: invalid response body: history.full: required`,
		},
		{
			name: "turn unknown stop reason", body: `{"stopReason":"done","messages":[]}`,
			call: func(c *aap.Client) error {
				_, err := c.Turn(ctx, "s", &aap.PostSessionTurnRequest{Messages: []aap.Message{aap.UserText("x")}})
				return err
			},
			wantErr: `aap: POST /sessions/{id}/turns: invalid response body: stopReason: unknown stop reason "done"`,
		},
		{
			name: "turn answered with a stream", body: streamDeltaText,
			call: func(c *aap.Client) error {
				_, err := c.Turn(ctx, "s", &aap.PostSessionTurnRequest{Messages: []aap.Message{aap.UserText("x")}})
				return err
			},
			wantErr: `aap: POST /sessions/{id}/turns: invalid response body: must be a JSON object`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := newServer(t, reply(200, tt.body))
			err := tt.call(aap.NewClient(srv.URL, aap.ClientOptions{Version: aap.Version3}))
			require.EqualError(t, err, tt.wantErr)
			var de *aap.DecodeError
			assert.True(t, errors.As(err, &de), "want a wrapped *aap.DecodeError, got %T", err)
		})
	}
}

func TestClientRejectsBadArguments(t *testing.T) {
	srv, reqs := newServer(t, reply(200, `{}`))
	c := aap.NewClient(srv.URL, aap.ClientOptions{Version: aap.Version3})
	ctx := context.Background()
	turn := &aap.PostSessionTurnRequest{Messages: []aap.Message{aap.UserText("x")}}
	tests := []struct {
		name    string
		call    func() error
		wantErr string
	}{
		{name: "empty id", call: func() error { _, err := c.GetSession(ctx, ""); return err }, wantErr: `aap: GET /sessions/{id}: invalid session id ""`},
		{name: "dot dot id", call: func() error { return c.DeleteSession(ctx, "..") }, wantErr: `aap: DELETE /sessions/{id}: invalid session id ".."`},
		{name: "dot id", call: func() error { _, err := c.History(ctx, ".", aap.HistoryFull); return err }, wantErr: `aap: GET /sessions/{id}/history: invalid session id "."`},
		{name: "unknown history type", call: func() error { _, err := c.History(ctx, "s", "recent"); return err }, wantErr: `aap: GET /sessions/{id}/history: unknown history type "recent" (want compacted or full)`},
		{name: "turn empty id", call: func() error { _, err := c.Turn(ctx, "", turn); return err }, wantErr: `aap: POST /sessions/{id}/turns: invalid session id ""`},
		{name: "nil turn", call: func() error { _, err := c.Turn(ctx, "s", nil); return err }, wantErr: `aap: POST /sessions/{id}/turns: nil request`},
		{name: "nil session request", call: func() error { _, err := c.CreateSession(ctx, nil); return err }, wantErr: `aap: POST /sessions: nil request`},
		{
			name: "unencodable tool input",
			call: func() error {
				_, err := c.Turn(ctx, "s", &aap.PostSessionTurnRequest{Messages: []aap.Message{&aap.AssistantMessage{Content: aap.BlockContent(&aap.ToolUseBlock{ToolCallID: "c", Name: "n", Input: json.RawMessage(`{"a":`)})}}})
				return err
			},
			wantErr: "",
		},
		{
			name: "nil context",
			call: func() error {
				var nilCtx context.Context // must be an error, not a panic
				_, err := c.Meta(nilCtx)
				return err
			},
			wantErr: "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			require.Error(t, err)
			if tt.wantErr != "" {
				assert.EqualError(t, err, tt.wantErr)
			}
		})
	}
	assert.Empty(t, reqs(), "no request may be sent")
}

func TestClientTransportError(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	_, err := aap.NewClient(url, aap.ClientOptions{Version: aap.Version3}).Meta(context.Background())
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "aap: GET /meta: "), err.Error())
	var oe *net.OpError
	assert.True(t, errors.As(err, &oe), "got %T", err)
}

func TestClientCustomHTTPClient(t *testing.T) {
	srv, _ := newServer(t, reply(200, `{"version":3,"agents":[]}`))
	var used atomic.Bool
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		used.Store(true)
		return http.DefaultTransport.RoundTrip(r)
	})}
	_, err := aap.NewClient(srv.URL, aap.ClientOptions{Version: aap.Version3, HTTPClient: hc}).Meta(context.Background())
	require.NoError(t, err)
	assert.True(t, used.Load())
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestClientSessionsFollowsCursors(t *testing.T) {
	pages := map[string]string{
		"first": `{"sessions":[{"sessionId":"s1","agent":{"name":"a"}},{"sessionId":"s2","agent":{"name":"a"}}],"next":"p/2"}`,
		"p/2":   `{"sessions":[],"next":"p 3"}`,
		"p 3":   `{"sessions":[{"sessionId":"s3","agent":{"name":"a"}}]}`,
		"loop":  `{"sessions":[{"sessionId":"s4","agent":{"name":"a"}}],"next":"loop"}`,
		"bad":   `{"sessions":[{"sessionId":"s5","agent":{"name":"a"}}],"next":"bad2"}`,
		"bad2":  `{"sessions":5}`,
	}
	// startAt serves pages, the first one (no cursor) being pages[first].
	startAt := func(first string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			after := r.URL.Query().Get("after")
			if after == "" {
				after = first
			}
			body, ok := pages[after]
			if !ok {
				http.NotFound(w, r)
				return
			}
			reply(200, body)(w, r)
		}
	}
	list := func(t *testing.T, first string) (ids []string, errs []error, uris []string) {
		srv, reqs := newServer(t, startAt(first))
		for s, err := range aap.NewClient(srv.URL, aap.ClientOptions{Version: aap.Version3}).Sessions(context.Background()) {
			if err != nil {
				errs = append(errs, err)
				continue
			}
			ids = append(ids, s.SessionID)
		}
		for _, r := range reqs() {
			uris = append(uris, r.URI)
		}
		return ids, errs, uris
	}

	t.Run("all pages", func(t *testing.T) {
		ids, errs, uris := list(t, "first")
		assert.Empty(t, errs)
		assert.Equal(t, []string{"s1", "s2", "s3"}, ids)
		assert.Equal(t, []string{"/sessions", "/sessions?after=p%2F2", "/sessions?after=p+3"}, uris)
	})

	t.Run("break stops paging", func(t *testing.T) {
		srv, reqs := newServer(t, startAt("first"))
		for s, err := range aap.NewClient(srv.URL, aap.ClientOptions{Version: aap.Version3}).Sessions(context.Background()) {
			require.NoError(t, err)
			assert.Equal(t, "s1", s.SessionID)
			break
		}
		assert.Len(t, reqs(), 1)
	})

	t.Run("repeated cursor", func(t *testing.T) {
		ids, errs, uris := list(t, "loop")
		assert.Equal(t, []string{"s4", "s4"}, ids)
		require.Len(t, errs, 1)
		assert.EqualError(t, errs[0], `aap: GET /sessions: next cursor "loop" was already returned`)
		assert.Len(t, uris, 2)
	})

	t.Run("bad page", func(t *testing.T) {
		ids, errs, _ := list(t, "bad")
		assert.Equal(t, []string{"s5"}, ids)
		require.Len(t, errs, 1)
		assert.EqualError(t, errs[0], `aap: GET /sessions: invalid response body: sessions: expected an array, got number`)
	})

	t.Run("missing page", func(t *testing.T) {
		ids, errs, _ := list(t, "nowhere")
		assert.Empty(t, ids)
		require.Len(t, errs, 1)
		assert.True(t, aap.IsNotFound(errs[0]))
	})
}

// collect runs a stream to its end and returns its events and its errors.
func collect(seq func(func(aap.Event, error) bool)) ([]aap.Event, []error) {
	var evs []aap.Event
	var errs []error
	for ev, err := range seq {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		evs = append(evs, ev)
	}
	return evs, errs
}

func TestClientStreamTurnCaptures(t *testing.T) {
	user := func(s string) []aap.Message { return []aap.Message{aap.UserText(s)} }
	tests := []struct {
		name     string
		stream   string
		req      *aap.PostSessionTurnRequest
		wantBody string
		want     []aap.Event
	}{
		{
			name: "delta text", stream: streamDeltaText,
			req:      &aap.PostSessionTurnRequest{Stream: aap.StreamDelta, Messages: user("hello there")},
			wantBody: wireTurnDelta,
			want: []aap.Event{
				&aap.TurnStart{},
				&aap.TextDelta{Delta: "Hello! You said: "},
				&aap.TextDelta{Delta: "hello there"},
				&aap.TurnStop{StopReason: aap.StopEndTurn},
			},
		},
		{
			name: "delta thinking", stream: streamDeltaThinking,
			req:      &aap.PostSessionTurnRequest{Stream: aap.StreamDelta, Messages: user("please think")},
			wantBody: `{"stream":"delta","messages":[{"role":"user","content":"please think"}]}`,
			want: []aap.Event{
				&aap.TurnStart{},
				&aap.ThinkingDelta{Delta: "The user asked "},
				&aap.ThinkingDelta{Delta: "me to think "},
				&aap.ThinkingDelta{Delta: "about: please think. "},
				&aap.ThinkingDelta{Delta: "I will reason "},
				&aap.ThinkingDelta{Delta: "briefly before answering."},
				&aap.TextDelta{Delta: "After thinking it "},
				&aap.TextDelta{Delta: "over: the answer "},
				&aap.TextDelta{Delta: "is 42."},
				&aap.TurnStop{StopReason: aap.StopEndTurn},
			},
		},
		{
			name: "delta client tool call", stream: streamDeltaToolCall,
			req:      &aap.PostSessionTurnRequest{Stream: aap.StreamDelta, Messages: user("what is the weather in Tokyo")},
			wantBody: `{"stream":"delta","messages":[{"role":"user","content":"what is the weather in Tokyo"}]}`,
			want: []aap.Event{
				&aap.TurnStart{},
				&aap.ToolCall{ToolCallID: "call_001", Name: "get_weather", Input: json.RawMessage(`{"location":"Tokyo"}`)},
				&aap.TurnStop{StopReason: aap.StopToolUse},
			},
		},
		{
			name: "delta tool result turn", stream: streamDeltaToolAnswer,
			req:      &aap.PostSessionTurnRequest{Stream: aap.StreamDelta, Messages: []aap.Message{&aap.ToolMessage{ToolCallID: "call_001", Content: aap.TextContent("Tokyo: 18°C, partly cloudy")}}},
			wantBody: wireTurnTool,
			want: []aap.Event{
				&aap.TurnStart{},
				&aap.TextDelta{Delta: "The weather tool "},
				&aap.TextDelta{Delta: "says: Tokyo: 18°C, "},
				&aap.TextDelta{Delta: "partly cloudy"},
				&aap.TurnStop{StopReason: aap.StopEndTurn},
			},
		},
		{
			name: "delta trusted inline tool", stream: streamDeltaTrusted,
			req: &aap.PostSessionTurnRequest{
				Agent:    &aap.AgentConfig{Tools: []aap.ServerToolRef{{Name: "web_search", Trust: true}}},
				Stream:   aap.StreamDelta,
				Messages: user("search for dogs"),
			},
			wantBody: `{"agent":{"tools":[{"name":"web_search","trust":true}]},"stream":"delta","messages":[{"role":"user","content":"search for dogs"}]}`,
			want: []aap.Event{
				&aap.TurnStart{},
				&aap.ToolCall{ToolCallID: "call_004", Name: "web_search", Input: json.RawMessage(`{"query":"dogs"}`)},
				&aap.ToolResult{ToolCallID: "call_004", Content: aap.TextContent(`"Top result for dogs: AAP is the Agent Application Protocol (agentapplicationprotocol.com)"`)},
				&aap.TextDelta{Delta: `Search result: "Top `},
				&aap.TextDelta{Delta: "result for dogs: "},
				&aap.TextDelta{Delta: "AAP is the "},
				&aap.TextDelta{Delta: "Agent Application Protocol "},
				&aap.TextDelta{Delta: `(agentapplicationprotocol.com)"`},
				&aap.TurnStop{StopReason: aap.StopEndTurn},
			},
		},
		{
			name: "message client tool call", stream: streamMessageToolCall,
			req:      &aap.PostSessionTurnRequest{Stream: aap.StreamMessage, Messages: user("what is the weather in Tokyo")},
			wantBody: wireTurnMessage,
			want: []aap.Event{
				&aap.TurnStart{},
				&aap.ToolCall{ToolCallID: "call_005", Name: "get_weather", Input: json.RawMessage(`{"location":"Tokyo"}`)},
				&aap.TurnStop{StopReason: aap.StopToolUse},
			},
		},
		{
			name: "message text", stream: streamMessageText,
			req:      &aap.PostSessionTurnRequest{Stream: aap.StreamMessage, Messages: []aap.Message{&aap.ToolMessage{ToolCallID: "call_005", Content: aap.TextContent("Tokyo: 18°C, partly cloudy")}}},
			wantBody: `{"stream":"message","messages":[{"role":"tool","toolCallId":"call_005","content":"Tokyo: 18°C, partly cloudy"}]}`,
			want: []aap.Event{
				&aap.TurnStart{},
				&aap.Text{Text: "The weather tool says: Tokyo: 18°C, partly cloudy"},
				&aap.TurnStop{StopReason: aap.StopEndTurn},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, reqs := newServer(t, sse(tt.stream))
			c := aap.NewClient(srv.URL+"/v1", aap.ClientOptions{Version: aap.Version3, APIKey: "k"})
			evs, errs := collect(c.StreamTurn(context.Background(), "sess_1", tt.req))
			require.Empty(t, errs)
			assert.Equal(t, tt.want, evs)

			rs := reqs()
			require.Len(t, rs, 1)
			assert.Equal(t, "POST", rs[0].Method)
			assert.Equal(t, "/v1/sessions/sess_1/turns", rs[0].URI)
			assert.Equal(t, tt.wantBody, rs[0].Body)
			assert.Equal(t, "text/event-stream", rs[0].Header.Get("Accept"))
			assert.Equal(t, "application/json", rs[0].Header.Get("Content-Type"))
			assert.Equal(t, "Bearer k", rs[0].Header.Get("Authorization"))
		})
	}
}

func TestClientStreamTurnErrors(t *testing.T) {
	delta := &aap.PostSessionTurnRequest{Stream: aap.StreamDelta, Messages: []aap.Message{aap.UserText("x")}}
	tests := []struct {
		name       string
		handler    http.HandlerFunc
		req        *aap.PostSessionTurnRequest
		wantEvents []aap.Event
		wantErr    string
		wantIs     error // checked with errors.Is when set
		wantAs     any   // checked with errors.As when set
	}{
		{
			name: "stream none", handler: sse(streamDeltaText),
			req:     &aap.PostSessionTurnRequest{Stream: aap.StreamNone, Messages: delta.Messages},
			wantErr: `aap: POST /sessions/{id}/turns: a streaming turn needs stream "delta" or "message", not "none"`,
		},
		{
			name: "stream unset", handler: sse(streamDeltaText),
			req:     &aap.PostSessionTurnRequest{Messages: delta.Messages},
			wantErr: `aap: POST /sessions/{id}/turns: a streaming turn needs stream "delta" or "message", not ""`,
		},
		{
			name: "nil request", handler: sse(streamDeltaText),
			wantErr: `aap: POST /sessions/{id}/turns: nil request`,
		},
		{
			name: "409", handler: reply(409, `{"error":{"code":"turn_in_progress","message":"busy"}}`), req: delta,
			wantErr: `aap: POST /sessions/{id}/turns: HTTP 409 Conflict: turn_in_progress: busy`,
			wantAs:  new(*aap.HTTPError),
		},
		{
			name: "json instead of a stream", handler: reply(200, wireTurnRespText), req: delta,
			wantErr: `aap: POST /sessions/{id}/turns: response is not an event stream: Content-Type "application/json" (want text/event-stream)`,
		},
		{
			name: "no content type", handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header()["Content-Type"] = nil
				_, _ = io.WriteString(w, streamDeltaText)
			}, req: delta,
			wantErr: `aap: POST /sessions/{id}/turns: response is not an event stream: Content-Type "" (want text/event-stream)`,
		},
		{
			name: "content type with charset", req: delta,
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
				_, _ = io.WriteString(w, streamDeltaText)
			},
			wantEvents: []aap.Event{&aap.TurnStart{}, &aap.TextDelta{Delta: "Hello! You said: "}, &aap.TextDelta{Delta: "hello there"}, &aap.TurnStop{StopReason: aap.StopEndTurn}},
		},
		{
			name: "stream ends without turn_stop", req: delta,
			handler:    sse("event: turn_start\ndata: {}\n\nevent: text_delta\ndata: {\"delta\":\"Hel\"}\n\n"),
			wantEvents: []aap.Event{&aap.TurnStart{}, &aap.TextDelta{Delta: "Hel"}},
			wantErr:    `aap: stream ended before turn_stop`,
			wantIs:     aap.ErrStreamIncomplete,
		},
		{
			name: "empty stream", req: delta, handler: sse(""),
			wantErr: `aap: stream ended before turn_stop`,
			wantIs:  aap.ErrStreamIncomplete,
		},
		{
			name: "stream ends inside an event", req: delta,
			handler:    sse("event: turn_start\ndata: {}\n\nevent: text_delta\ndata: {\"delta\":\"Hel\"}\n"),
			wantEvents: []aap.Event{&aap.TurnStart{}},
			wantErr:    `aap: POST /sessions/{id}/turns: stream ended before turn_stop: sse: stream ended in the middle of an event`,
			wantIs:     aap.ErrStreamIncomplete,
		},
		{
			name: "connection cut", req: delta,
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, "event: turn_start\ndata: {}\n\nevent: text_delta\ndata: {\"del")
				w.(http.Flusher).Flush()
				panic(http.ErrAbortHandler) // drops the connection mid-body
			},
			wantEvents: []aap.Event{&aap.TurnStart{}},
			wantIs:     aap.ErrStreamIncomplete,
		},
		{
			name: "bad event", req: delta,
			handler:    sse("event: turn_start\ndata: {}\n\nevent: turn_stop\ndata: {\"stopReason\":\"done\"}\n\n"),
			wantEvents: []aap.Event{&aap.TurnStart{}},
			wantErr:    `aap: POST /sessions/{id}/turns: bad event: turn_stop.stopReason: unknown stop reason "done"`,
			wantAs:     new(*aap.DecodeError),
		},
		{
			name: "unknown events pass", req: delta,
			handler: sse("event: turn_start\ndata: {}\n\nevent: usage\ndata: {\"tokens\":3}\n\n: a comment\n\ndata: {\"x\":1}\n\nevent: turn_stop\ndata: {\"stopReason\":\"max_tokens\"}\n\n"),
			wantEvents: []aap.Event{
				&aap.TurnStart{},
				&aap.UnknownEvent{Name: "usage", Data: json.RawMessage(`{"tokens":3}`)},
				&aap.UnknownEvent{Name: "message", Data: json.RawMessage(`{"x":1}`)},
				&aap.TurnStop{StopReason: aap.StopMaxTokens},
			},
		},
		{
			name: "events after turn_stop are dropped", req: delta,
			handler:    sse("event: turn_start\ndata: {}\n\nevent: turn_stop\ndata: {\"stopReason\":\"refusal\"}\n\nevent: text_delta\ndata: {\"delta\":\"late\"}\n\nevent: bogus\ndata: {\n\n"),
			wantEvents: []aap.Event{&aap.TurnStart{}, &aap.TurnStop{StopReason: aap.StopRefusal}},
		},
		{
			name: "CRLF framing", req: delta,
			handler:    sse("event: turn_start\r\ndata: {}\r\n\r\nevent: turn_stop\r\ndata:{\"stopReason\":\"error\"}\r\n\r\n"),
			wantEvents: []aap.Event{&aap.TurnStart{}, &aap.TurnStop{StopReason: aap.StopError}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := newServer(t, tt.handler)
			evs, errs := collect(aap.NewClient(srv.URL, aap.ClientOptions{Version: aap.Version3}).StreamTurn(context.Background(), "s1", tt.req))
			assert.Equal(t, tt.wantEvents, evs)
			if tt.wantErr == "" && tt.wantIs == nil && tt.wantAs == nil {
				require.Empty(t, errs)
				return
			}
			require.Len(t, errs, 1, "one error ends the stream")
			if tt.wantErr != "" {
				assert.EqualError(t, errs[0], tt.wantErr)
			}
			if tt.wantIs != nil {
				assert.ErrorIs(t, errs[0], tt.wantIs)
			}
			if tt.wantAs != nil {
				assert.ErrorAs(t, errs[0], tt.wantAs)
			}
		})
	}
}

func TestClientStreamTurnMaxEventSize(t *testing.T) {
	big := "event: turn_start\ndata: {}\n\nevent: text\ndata: {\"text\":\"" + strings.Repeat("a", 4096) + "\"}\n\nevent: turn_stop\ndata: {\"stopReason\":\"end_turn\"}\n\n"
	srv, _ := newServer(t, sse(big))
	req := &aap.PostSessionTurnRequest{Stream: aap.StreamMessage, Messages: []aap.Message{aap.UserText("x")}}

	evs, errs := collect(aap.NewClient(srv.URL, aap.ClientOptions{Version: aap.Version3, MaxEventSize: 1024}).StreamTurn(context.Background(), "s", req))
	assert.Equal(t, []aap.Event{&aap.TurnStart{}}, evs)
	require.Len(t, errs, 1)
	assert.ErrorIs(t, errs[0], aap.ErrStreamIncomplete)

	evs, errs = collect(aap.NewClient(srv.URL, aap.ClientOptions{Version: aap.Version3}).StreamTurn(context.Background(), "s", req))
	assert.Empty(t, errs)
	assert.Len(t, evs, 3)
}

// hangingStream writes the given events, then holds the stream open until
// the client goes away, which it reports by closing gone.
func hangingStream(events string, gone chan<- struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, events)
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			close(gone)
		case <-time.After(10 * time.Second):
		}
	}
}

func TestClientStreamTurnBreakClosesConnection(t *testing.T) {
	gone := make(chan struct{})
	srv, _ := newServer(t, hangingStream("event: turn_start\ndata: {}\n\nevent: text_delta\ndata: {\"delta\":\"a\"}\n\n", gone))
	req := &aap.PostSessionTurnRequest{Stream: aap.StreamDelta, Messages: []aap.Message{aap.UserText("x")}}
	n := 0
	for ev, err := range aap.NewClient(srv.URL, aap.ClientOptions{Version: aap.Version3}).StreamTurn(context.Background(), "s", req) {
		require.NoError(t, err)
		assert.Equal(t, &aap.TurnStart{}, ev)
		n++
		break
	}
	assert.Equal(t, 1, n)
	select {
	case <-gone:
	case <-time.After(5 * time.Second):
		t.Fatal("the server did not see the client go away after break")
	}
}

func TestClientStreamTurnContextCancel(t *testing.T) {
	gone := make(chan struct{})
	srv, _ := newServer(t, hangingStream("event: turn_start\ndata: {}\n\n", gone))
	req := &aap.PostSessionTurnRequest{Stream: aap.StreamDelta, Messages: []aap.Message{aap.UserText("x")}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var evs []aap.Event
	var errs []error
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev, err := range aap.NewClient(srv.URL, aap.ClientOptions{Version: aap.Version3}).StreamTurn(ctx, "s", req) {
			if err != nil {
				errs = append(errs, err)
				continue
			}
			evs = append(evs, ev)
			cancel() // mid-stream: the server is holding the stream open
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the iterator did not end after cancel")
	}
	assert.Equal(t, []aap.Event{&aap.TurnStart{}}, evs)
	require.Len(t, errs, 1)
	assert.ErrorIs(t, errs[0], context.Canceled)
	select {
	case <-gone:
	case <-time.After(5 * time.Second):
		t.Fatal("the server did not see the client go away after cancel")
	}
}

func TestClientStreamTurnContextCanceledBefore(t *testing.T) {
	srv, reqs := newServer(t, sse(streamDeltaText))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := &aap.PostSessionTurnRequest{Stream: aap.StreamDelta, Messages: []aap.Message{aap.UserText("x")}}
	evs, errs := collect(aap.NewClient(srv.URL, aap.ClientOptions{Version: aap.Version3}).StreamTurn(ctx, "s", req))
	assert.Empty(t, evs)
	require.Len(t, errs, 1)
	assert.ErrorIs(t, errs[0], context.Canceled)
	assert.Empty(t, reqs())
}

func TestClientStreamTurnEndsAtTurnStopWhenServerHangs(t *testing.T) {
	gone := make(chan struct{})
	srv, _ := newServer(t, hangingStream(streamDeltaText, gone))
	req := &aap.PostSessionTurnRequest{Stream: aap.StreamDelta, Messages: []aap.Message{aap.UserText("x")}}
	start := time.Now()
	evs, errs := collect(aap.NewClient(srv.URL, aap.ClientOptions{Version: aap.Version3}).StreamTurn(context.Background(), "s", req))
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.Empty(t, errs)
	assert.Len(t, evs, 4)
	select {
	case <-gone:
	case <-time.After(5 * time.Second):
		t.Fatal("the connection stayed open")
	}
}

func TestClientStreamTurnReusesConnection(t *testing.T) {
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, frame := range strings.SplitAfter(streamDeltaText, "\n\n") {
			_, _ = io.WriteString(w, frame)
			w.(http.Flusher).Flush() // one write per event, like a live agent
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()

	c := aap.NewClient(srv.URL, aap.ClientOptions{Version: aap.Version3})
	req := &aap.PostSessionTurnRequest{Stream: aap.StreamDelta, Messages: []aap.Message{aap.UserText("x")}}
	for range 3 {
		evs, errs := collect(c.StreamTurn(context.Background(), "s", req))
		require.Empty(t, errs)
		require.Len(t, evs, 4)
	}
	assert.Equal(t, int32(1), conns.Load(), "each turn opened a new connection")
}

// requestRecorder is a transport that remembers the requests it sends.
type requestRecorder struct {
	mu   sync.Mutex
	reqs []*http.Request
}

func (rr *requestRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	rr.mu.Lock()
	rr.reqs = append(rr.reqs, r)
	rr.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

// A turn's request (its messages, which may be a whole history) is not
// kept while its stream is read: the transport keeps the request until the
// stream ends, but nothing of it holds the encoded body once the stream
// has begun.
func TestClientOpenTurnLetsTheRequestGo(t *testing.T) {
	gone := make(chan struct{})
	srv, _ := newServer(t, hangingStream(streamDeltaText, gone))
	rr := &requestRecorder{}
	c := aap.NewClient(srv.URL, aap.ClientOptions{Version: aap.Version3, HTTPClient: &http.Client{Transport: rr}})
	body, err := c.OpenTurn(context.Background(), "s", &aap.PostSessionTurnRequest{Stream: aap.StreamDelta, Messages: []aap.Message{aap.UserText(strings.Repeat("long history ", 1000))}})
	require.NoError(t, err)
	defer body.Close()
	rr.mu.Lock()
	require.Len(t, rr.reqs, 1)
	req := rr.reqs[0]
	rr.mu.Unlock()
	assert.Greater(t, req.ContentLength, int64(13000), "sent with its length")
	_, err = req.GetBody()
	assert.Error(t, err, "the request's bytes are let go")
}

// A response body is read whole whether the server says its length or
// streams it in chunks, and one shorter than the length it claimed is an
// error, not a history cut short.
func TestClientReadsBodyByItsLength(t *testing.T) {
	hist := `{"history":{"full":[{"role":"user","content":"` + strings.Repeat("a long message ", 20000) + `"}]}}`
	for name, handle := range map[string]http.HandlerFunc{
		"length": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", strconv.Itoa(len(hist)))
			_, _ = io.WriteString(w, hist)
		},
		"chunked": func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, hist[:1000])
			w.(http.Flusher).Flush()
			_, _ = io.WriteString(w, hist[1000:])
		},
	} {
		srv, _ := newServer(t, handle)
		got, err := aap.NewClient(srv.URL, aap.ClientOptions{Version: aap.Version3}).History(context.Background(), "s1", aap.HistoryFull)
		require.NoError(t, err, name)
		require.Len(t, got, 1, name)
		assert.Equal(t, strings.Repeat("a long message ", 20000), got[0].(*aap.UserMessage).Content.Text, name)
	}
	srv, _ := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(hist)))
		_, _ = io.WriteString(w, hist[:len(hist)/2])
		panic(http.ErrAbortHandler) // the connection is cut short of the length
	})
	_, err := aap.NewClient(srv.URL, aap.ClientOptions{Version: aap.Version3}).History(context.Background(), "s1", aap.HistoryFull)
	require.Error(t, err)
}

// The client follows no redirect: the place one points to gets no request
// and no API key, and the call fails with a *RedirectError naming the
// status and the place, without its query. A client of the caller's own
// without a CheckRedirect is used the same way.
func TestClientDoesNotFollowRedirects(t *testing.T) {
	var reached atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		reached.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"version":3,"agents":[]}`)
	}))
	t.Cleanup(target.Close)
	from := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/meta?token=t0ken", http.StatusPermanentRedirect)
	}))
	t.Cleanup(from.Close)
	for name, hc := range map[string]*http.Client{"shared client": nil, "caller's client": {}} {
		c := aap.NewClient(from.URL, aap.ClientOptions{APIKey: "s3cret", HTTPClient: hc})
		_, err := c.Meta(context.Background())
		var re *aap.RedirectError
		require.True(t, errors.As(err, &re), "%s: %v", name, err)
		assert.Equal(t, http.StatusPermanentRedirect, re.StatusCode, name)
		assert.Equal(t, target.URL+"/meta", re.Location, name)
		assert.Contains(t, err.Error(), "GET /meta", name)
		assert.NotContains(t, err.Error(), "t0ken", name)
	}
	assert.Zero(t, reached.Load(), "the redirect's target got no request")
}

// A server (or a proxy before it) that echoes the request's Authorization
// in its error body gets the client's key into neither the HTTPError's
// Body, Code and Message nor its Error: what reaches a log is masked.
func TestClientHTTPErrorMasksAnEchoedKey(t *testing.T) {
	const key = "sk-echo/5e1d+0a=="
	srv, _ := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		reply(http.StatusBadGateway, `{"error":{"code":"proxy_error","message":"upstream refused `+auth+`"},"headers":{"Authorization":"`+strings.ReplaceAll(auth, "/", `\/`)+`"}}`)(w, r)
	})
	_, err := aap.NewClient(srv.URL, aap.ClientOptions{APIKey: key, Version: aap.Version3}).GetSession(context.Background(), "s1")
	require.Error(t, err)
	var he *aap.HTTPError
	require.True(t, errors.As(err, &he))
	assert.Equal(t, "proxy_error", he.Code)
	assert.Equal(t, "upstream refused ***", he.Message)
	for _, s := range []string{err.Error(), he.Message, string(he.Body)} {
		assert.NotContains(t, s, "5e1d")
	}
}
