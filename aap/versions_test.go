package aap_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
)

func TestToolSpecInputSchemaParameters(t *testing.T) {
	const v1 = `{"name":"get_weather","title":"Weather","description":"d","inputSchema":{"required":["location"],"type":"object","n":1e400}}`
	var old aap.ToolSpecV1
	require.NoError(t, json.Unmarshal([]byte(v1), &old))
	spec := old.V3()
	assert.Equal(t, `{"name":"get_weather","title":"Weather","description":"d","parameters":{"required":["location"],"type":"object","n":1e400}}`, encodeNoHTML(t, spec))
	back := spec.V1()
	assert.Equal(t, v1, encodeNoHTML(t, back), "the schema's bytes survive both ways")

	assert.Nil(t, aap.ToolSpecsToV1(nil))
	assert.Equal(t, []aap.ToolSpecV1{}, aap.ToolSpecsToV1([]aap.ToolSpec{}), "no tools stays no tools, not absent")
	assert.Nil(t, aap.ToolSpecsFromV1(nil))
	assert.Equal(t, []aap.ToolSpec{}, aap.ToolSpecsFromV1([]aap.ToolSpecV1{}))
}

func TestDecodeVersionErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		into any
		want string
	}{
		{"tool spec with parameters", `{"name":"t","description":"","parameters":{}}`, new(aap.ToolSpecV1), "aap: inputSchema: required (parameters is what version 3 calls it; versions 1 and 2 name the schema inputSchema)"},
		{"tool spec without schema", `{"name":"t","description":""}`, new(aap.ToolSpecV1), "aap: inputSchema: required"},
		{"tool spec schema not an object", `{"name":"t","description":"","inputSchema":true}`, new(aap.ToolSpecV1), "aap: inputSchema: must be a JSON Schema object"},
		{"v3 tool spec with inputSchema", `{"name":"t","description":"","inputSchema":{}}`, new(aap.ToolSpec), "aap: parameters: required"},
		{"put without messages", `{"agent":{"name":"a"}}`, new(aap.PutSessionRequest), "aap: messages: must end with a user message, which is the session's first turn (got none)"},
		{"put ending with an assistant message", `{"agent":{"name":"a"},"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]}`, new(aap.PutSessionRequest), `aap: messages[1].role: the last message must be a user message, which is the session's first turn (got "assistant")`},
		{"put with a permission", `{"agent":{"name":"a"},"messages":[{"role":"tool_permission","toolCallId":"c","granted":true}]}`, new(aap.PutSessionRequest), "aap: messages[0].role: tool_permission messages are only allowed in a turn, never in history"},
		{"put without agent name", `{"agent":{},"messages":[{"role":"user","content":"hi"}]}`, new(aap.PutSessionRequest), "aap: agent.name: required"},
		{"put with a bad stream", `{"agent":{"name":"a"},"stream":"all","messages":[{"role":"user","content":"hi"}]}`, new(aap.PutSessionRequest), `aap: stream: unknown stream mode "all" (want delta, message or none)`},
		{"put with a v3 tool", `{"agent":{"name":"a"},"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"t","description":"","parameters":{}}]}`, new(aap.PutSessionRequest), "aap: tools[0].inputSchema: required (parameters is what version 3 calls it; versions 1 and 2 name the schema inputSchema)"},
		{"put response without session id", `{"stopReason":"end_turn","messages":[]}`, new(aap.PutSessionResponse), "aap: sessionId: required"},
		{"put response without stop reason", `{"sessionId":"s","messages":[]}`, new(aap.PutSessionResponse), "aap: stopReason: required"},
		{"turn with two user messages", `{"messages":[{"role":"user","content":"a"},{"role":"user","content":"b"}]}`, new(aap.SessionTurnRequestV1), "aap: messages: a user message must be the only message of its turn (got 2 messages)"},
		{"turn without messages", `{"stream":"delta"}`, new(aap.SessionTurnRequestV1), "aap: messages: required"},
		{"v1 list of objects", `{"sessions":[{"sessionId":"s"}]}`, new(aap.SessionListResponseV1), "aap: sessions[0]: must be a session id (a string); version 1 lists ids, version 2 objects"},
		{"v1 list without sessions", `{}`, new(aap.SessionListResponseV1), "aap: sessions: required"},
		{"v2 list of ids", `{"sessions":["s"]}`, new(aap.SessionListResponseV2), "aap: sessions[0]: must be a JSON object"},
		{"session with bad inline history", `{"sessionId":"s","agent":{"name":"a"},"history":{"full":[{"role":"tool_permission","toolCallId":"c","granted":true}]}}`, new(aap.SessionResponseV1), "aap: history.full[0].role: tool_permission messages are only allowed in a turn, never in history"},
		{"v1 meta with a v3 tool", `{"version":1,"agents":[{"name":"a","version":"1","tools":[{"name":"t","description":"","parameters":{}}]}]}`, new(aap.MetaResponseV1), "aap: agents[0].tools[0].inputSchema: required (parameters is what version 3 calls it; versions 1 and 2 name the schema inputSchema)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := json.Unmarshal([]byte(tt.in), tt.into)
			require.Error(t, err)
			var de *aap.DecodeError
			require.ErrorAs(t, err, &de)
			assert.Equal(t, tt.want, err.Error())
		})
	}
}

func TestDecodeSessionStart(t *testing.T) {
	ev, err := aap.DecodeEvent("session_start", []byte(`{"sessionId": "sess_abc123"}`))
	require.NoError(t, err)
	assert.Equal(t, &aap.SessionStart{SessionID: "sess_abc123"}, ev)
	data, err := ev.AppendData(nil)
	require.NoError(t, err)
	assert.Equal(t, `{"sessionId":"sess_abc123"}`, string(data))

	for _, bad := range []string{`{}`, `{"sessionId":""}`, `{"sessionId":1}`, `[]`} {
		_, err := aap.DecodeEvent("session_start", []byte(bad))
		assert.Error(t, err, bad)
	}
}

func TestDecodeMetaOfEachVersion(t *testing.T) {
	tool := `{"name":"t","description":"d","%s":{"type":"object"}}`
	for _, tt := range []struct {
		body    string
		version int
	}{
		{`{"version":1,"agents":[{"name":"a","version":"1","tools":[` + fmt.Sprintf(tool, "inputSchema") + `]}]}`, 1},
		{`{"version":2,"agents":[{"name":"a","version":"1","tools":[` + fmt.Sprintf(tool, "inputSchema") + `]}]}`, 2},
		{`{"version":3,"agents":[{"name":"a","version":"1","tools":[` + fmt.Sprintf(tool, "parameters") + `]}]}`, 3},
		{`{"agents":[{"name":"a","version":"1","tools":[` + fmt.Sprintf(tool, "parameters") + `]}]}`, 0},
	} {
		m, err := aap.DecodeMeta([]byte(tt.body))
		require.NoError(t, err, tt.body)
		assert.Equal(t, tt.version, m.Version)
		assert.Equal(t, `{"type":"object"}`, string(m.Agents[0].Tools[0].Parameters))
	}
	_, err := aap.DecodeMeta([]byte(`{"version":2,"agents":[{"name":"a","version":"1","tools":[` + fmt.Sprintf(tool, "parameters") + `]}]}`))
	assert.ErrorContains(t, err, "inputSchema: required")
}

// metaServer answers GET /meta with body, and counts what it serves.
func metaServer(t *testing.T, body string, rest http.HandlerFunc) (*httptest.Server, func() []recorded) {
	t.Helper()
	return newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/meta" {
			reply(200, body)(w, r)
			return
		}
		rest(w, r)
	})
}

func TestClientVersion(t *testing.T) {
	ctx := context.Background()
	const v1Meta = `{"version":1,"agents":[]}`
	t.Run("read from meta once", func(t *testing.T) {
		srv, reqs := metaServer(t, v1Meta, reply(204, ""))
		c := aap.NewClient(srv.URL, aap.ClientOptions{})
		require.NoError(t, c.DeleteSession(ctx, "s1"))
		require.NoError(t, c.DeleteSession(ctx, "s2"))
		got := reqs()
		require.Len(t, got, 3)
		assert.Equal(t, "/meta", got[0].URI)
		assert.Equal(t, "/session/s1", got[1].URI)
		assert.Equal(t, "/session/s2", got[2].URI)
	})
	t.Run("given, meta is not read", func(t *testing.T) {
		srv, reqs := metaServer(t, v1Meta, reply(204, ""))
		c := aap.NewClient(srv.URL, aap.ClientOptions{Version: aap.Version2})
		require.NoError(t, c.DeleteSession(ctx, "s1"))
		got := reqs()
		require.Len(t, got, 1)
		assert.Equal(t, "/session/s1", got[0].URI)
		v, err := c.Version(ctx)
		require.NoError(t, err)
		assert.Equal(t, 2, v)
	})
	t.Run("forced over what meta says", func(t *testing.T) {
		srv, reqs := metaServer(t, v1Meta, reply(204, ""))
		c := aap.NewClient(srv.URL, aap.ClientOptions{Version: aap.Version3})
		_, err := c.Meta(ctx)
		require.NoError(t, err)
		require.NoError(t, c.DeleteSession(ctx, "s1"))
		assert.Equal(t, "/sessions/s1", reqs()[1].URI)
	})
	t.Run("meta call sets it", func(t *testing.T) {
		srv, reqs := metaServer(t, `{"version":2,"agents":[]}`, reply(204, ""))
		c := aap.NewClient(srv.URL, aap.ClientOptions{})
		m, err := c.Meta(ctx)
		require.NoError(t, err)
		assert.Equal(t, 2, m.Version)
		require.NoError(t, c.DeleteSession(ctx, "s1"))
		assert.Len(t, reqs(), 2)
	})
	t.Run("absent version is 3", func(t *testing.T) {
		srv, _ := metaServer(t, `{"agents":[]}`, reply(204, ""))
		v, err := aap.NewClient(srv.URL, aap.ClientOptions{}).Version(ctx)
		require.NoError(t, err)
		assert.Equal(t, 3, v)
	})
	t.Run("unknown version", func(t *testing.T) {
		srv, reqs := metaServer(t, `{"version":4,"agents":[]}`, reply(204, ""))
		c := aap.NewClient(srv.URL, aap.ClientOptions{})
		err := c.DeleteSession(ctx, "s1")
		require.ErrorIs(t, err, aap.ErrUnsupportedVersion)
		assert.Equal(t, "aap: GET /meta: unsupported protocol version 4 (this client speaks 1, 2 and 3)", err.Error())
		assert.Len(t, reqs(), 1, "nothing is sent in a protocol the client does not know")
		v, err := c.WithVersion(aap.Version3).Version(ctx)
		require.NoError(t, err)
		assert.Equal(t, 3, v)
	})
	t.Run("unknown forced version", func(t *testing.T) {
		srv, reqs := metaServer(t, v1Meta, reply(204, ""))
		err := aap.NewClient(srv.URL, aap.ClientOptions{Version: 9}).DeleteSession(ctx, "s1")
		require.ErrorIs(t, err, aap.ErrUnsupportedVersion)
		assert.Empty(t, reqs())
	})
	t.Run("meta fails", func(t *testing.T) {
		srv, _ := newServer(t, reply(500, `{"error":{"code":"boom","message":"down"}}`))
		_, err := aap.NewClient(srv.URL, aap.ClientOptions{}).GetSession(ctx, "s1")
		var he *aap.HTTPError
		require.ErrorAs(t, err, &he)
		assert.Equal(t, 500, he.StatusCode)
		assert.Contains(t, err.Error(), "GET /meta")
	})
}

func TestClientWrongVersion(t *testing.T) {
	ctx := context.Background()
	srv, reqs := newServer(t, reply(500, ""))
	put := &aap.PutSessionRequest{Agent: aap.AgentConfig{Name: "a"}, Messages: []aap.Message{aap.UserText("hi")}}

	_, err := aap.NewClient(srv.URL, aap.ClientOptions{Version: 1}).CreateSession(ctx, &aap.PostSessionsRequest{Agent: aap.AgentConfig{Name: "a"}})
	require.ErrorIs(t, err, aap.ErrWrongVersion)
	assert.Equal(t, "aap: POST /sessions: endpoint not in the server's protocol version (version 1); PUT /session creates a session with its first turn (PutSession)", err.Error())

	_, err = aap.NewClient(srv.URL, aap.ClientOptions{Version: 3}).PutSession(ctx, put)
	require.ErrorIs(t, err, aap.ErrWrongVersion)
	_, err = aap.NewClient(srv.URL, aap.ClientOptions{Version: 3}).OpenPutSession(ctx, &aap.PutSessionRequest{Agent: put.Agent, Stream: aap.StreamDelta, Messages: put.Messages})
	require.ErrorIs(t, err, aap.ErrWrongVersion)

	_, err = aap.NewClient(srv.URL, aap.ClientOptions{Version: 2}).PutSession(ctx, &aap.PutSessionRequest{Agent: put.Agent, Messages: []aap.Message{aap.UserText("a"), &aap.AssistantMessage{Content: aap.TextContent("b")}}})
	require.ErrorContains(t, err, "the last message must be a user message")
	_, err = aap.NewClient(srv.URL, aap.ClientOptions{Version: 2}).PutSession(ctx, nil)
	require.ErrorContains(t, err, "nil request")
	_, err = aap.NewClient(srv.URL, aap.ClientOptions{Version: 2}).OpenPutSession(ctx, put)
	require.ErrorContains(t, err, "a streaming turn needs stream")
	assert.Empty(t, reqs(), "nothing is sent")
}

func TestClientVersion1History(t *testing.T) {
	ctx := context.Background()
	srv, reqs := newServer(t, reply(200, `{"sessionId":"s1","agent":{"name":"a"}}`))
	_, err := aap.NewClient(srv.URL, aap.ClientOptions{Version: 1}).History(ctx, "s1", aap.HistoryFull)
	require.ErrorIs(t, err, aap.ErrHistoryNotServed)
	assert.True(t, aap.IsNotFound(err))
	assert.Equal(t, "/session/s1?history=full", reqs()[0].URI)

	srv, _ = newServer(t, reply(200, `{"sessionId":"s1","agent":{"name":"a"},"history":{"compacted":[]}}`))
	_, err = aap.NewClient(srv.URL, aap.ClientOptions{Version: 1}).History(ctx, "s1", aap.HistoryFull)
	require.ErrorIs(t, err, aap.ErrHistoryNotServed, "the other type does not stand in")

	srv, _ = newServer(t, reply(404, `{"error":{"code":"session_not_found","message":"no"}}`))
	_, err = aap.NewClient(srv.URL, aap.ClientOptions{Version: 2}).History(ctx, "s1", aap.HistoryFull)
	assert.True(t, aap.IsNotFound(err))
	assert.NotErrorIs(t, err, aap.ErrHistoryNotServed)
}

func TestClientPutSessionStream(t *testing.T) {
	ctx := context.Background()
	stream := "event: session_start\ndata: {\"sessionId\":\"sess_1\"}\n\nevent: turn_start\ndata: {}\n\nevent: text_delta\ndata: {\"delta\":\"hi\"}\n\nevent: turn_stop\ndata: {\"stopReason\":\"end_turn\"}\n\n"
	srv, reqs := newServer(t, sse(stream))
	req := &aap.PutSessionRequest{
		Agent: aap.AgentConfig{Name: "a"}, Stream: aap.StreamDelta,
		Messages: []aap.Message{&aap.SystemMessage{Content: "be brief"}, aap.UserText("hello")},
		Tools:    []aap.ToolSpecV1{{Name: "t", Description: "d", InputSchema: json.RawMessage(`{"type":"object"}`)}},
	}
	var names []string
	for ev, err := range aap.NewClient(srv.URL, aap.ClientOptions{Version: 1}).StreamPutSession(ctx, req) {
		require.NoError(t, err)
		names = append(names, string(ev.EventName()))
	}
	assert.Equal(t, []string{"session_start", "turn_start", "text_delta", "turn_stop"}, names)
	got := reqs()[0]
	assert.Equal(t, "PUT", got.Method)
	assert.Equal(t, "/session", got.URI)
	assert.Equal(t, "text/event-stream", got.Header.Get("Accept"))
	assert.Equal(t, `{"agent":{"name":"a"},"stream":"delta","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hello"}],"tools":[{"name":"t","description":"d","inputSchema":{"type":"object"}}]}`, got.Body)

	// A stream cut before turn_stop is incomplete, named by its endpoint.
	srv, _ = newServer(t, sse(stream[:len(stream)-40]))
	var last error
	for _, err := range aap.NewClient(srv.URL, aap.ClientOptions{Version: 1}).StreamPutSession(ctx, req) {
		last = err
	}
	require.ErrorIs(t, last, aap.ErrStreamIncomplete)

	// An error status before the stream.
	srv, _ = newServer(t, reply(400, `{"error":{"code":"invalid_request","message":"messages[1].role: the last message must be a user message"}}`))
	for _, err := range aap.NewClient(srv.URL, aap.ClientOptions{Version: 2}).StreamPutSession(ctx, req) {
		last = err
	}
	var he *aap.HTTPError
	require.ErrorAs(t, last, &he)
	assert.Equal(t, "invalid_request", he.Code)
	assert.Contains(t, last.Error(), "PUT /session")
}

func TestClientVersion1TurnSendsInputSchema(t *testing.T) {
	ctx := context.Background()
	srv, reqs := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"stopReason":"end_turn","messages":[]}`)
	})
	req := &aap.PostSessionTurnRequest{
		Messages: []aap.Message{aap.UserText("hi")},
		Tools:    []aap.ToolSpec{{Name: "t", Description: "d", Parameters: json.RawMessage(`{"type":"object"}`)}},
	}
	for _, v := range []int{1, 2} {
		_, err := aap.NewClient(srv.URL, aap.ClientOptions{Version: v}).Turn(ctx, "s 1", req)
		require.NoError(t, err)
	}
	for _, got := range reqs() {
		assert.Equal(t, "POST", got.Method)
		assert.Equal(t, "/session/s%201", got.URI)
		assert.Equal(t, `{"stream":"none","messages":[{"role":"user","content":"hi"}],"tools":[{"name":"t","description":"d","inputSchema":{"type":"object"}}]}`, got.Body)
	}
	assert.Equal(t, aap.StreamMode(""), req.Stream, "the request is not modified")
}
