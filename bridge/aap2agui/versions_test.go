package aap2agui_test

import (
	"encoding/json"
	"net/http"
	"slices"
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

// allVersions serves version 3 at the root, 1 at /v1 and 2 at /v2.
func allVersions(c *aap2agui.Config) {
	c.Versions = []aap2agui.Mount{{Version: 3}, {Version: 1, Path: "/v1"}, {Version: 2, Path: "/v2"}}
}

// versionClient is a client of the version served at path, which reads the
// version from that path's GET /meta.
func (e *env) versionClient(t *testing.T, path, key string, version int) *aap.Client {
	t.Helper()
	c := aap.NewClient(e.Root+path, aap.ClientOptions{APIKey: key})
	got, err := c.Version(bridgetest.Context(t))
	require.NoError(t, err)
	require.Equal(t, version, got, "GET %s/meta names its version", path)
	return c
}

// weatherToolV1 is weatherTool as versions 1 and 2 declare it.
var weatherToolV1 = weatherSpec.V1()

func TestVersionsMeta(t *testing.T) {
	e := newEnv(t, demoAgent(t), allVersions)
	for path, version := range map[string]int{"": 3, "/v1": 1, "/v2": 2} {
		r := doRaw(t, "GET", e.Root+path+"/meta", "", "")
		require.Equal(t, http.StatusOK, r.Status, r.Body)
		var m struct {
			Version int `json:"version"`
			Agents  []struct {
				Tools []map[string]json.RawMessage `json:"tools"`
			} `json:"agents"`
		}
		require.NoError(t, json.Unmarshal([]byte(r.Body), &m))
		assert.Equal(t, version, m.Version)
		schemaKey, other := "inputSchema", "parameters"
		if version == 3 {
			schemaKey, other = other, schemaKey
		}
		tool := m.Agents[0].Tools[0]
		assert.JSONEq(t, string(demo.SearchToolSpec.Parameters), string(tool[schemaKey]), "version %d names the schema %s", version, schemaKey)
		assert.NotContains(t, tool, other)
	}
}

func TestVersionsRoutes(t *testing.T) {
	e := newEnv(t, demoAgent(t), allVersions)
	// Each path serves its version's routes only.
	requireJSONError(t, doRaw(t, "PUT", e.Root+"/session", "", `{}`), http.StatusNotFound, "not_found")
	requireJSONError(t, doRaw(t, "GET", e.Root+"/v1/sessions/s1", "", ""), http.StatusNotFound, "not_found")
	requireJSONError(t, doRaw(t, "POST", e.Root+"/v1/sessions", "", `{}`), http.StatusMethodNotAllowed, "method_not_allowed")
	requireJSONError(t, doRaw(t, "GET", e.Root+"/v1/session/s1/history?type=full", "", ""), http.StatusNotFound, "not_found")
	requireJSONError(t, doRaw(t, "POST", e.Root+"/v2/session/s1/turns", "", `{}`), http.StatusNotFound, "not_found")
	// Unknown sessions are 404 on every route of versions 1 and 2.
	for _, r := range []struct{ method, path, body string }{
		{"GET", "/v1/session/nope", ""},
		{"GET", "/v1/session/nope?history=full", ""},
		{"DELETE", "/v1/session/nope", ""},
		{"POST", "/v1/session/nope", `{"messages":[{"role":"user","content":"hi"}]}`},
		{"GET", "/v2/session/nope", ""},
		{"GET", "/v2/session/nope/history?type=full", ""},
		{"DELETE", "/v2/session/nope", ""},
		{"POST", "/v2/session/nope", `{"stream":"delta","messages":[{"role":"user","content":"hi"}]}`},
	} {
		requireJSONError(t, doRaw(t, r.method, e.Root+r.path, "", r.body), http.StatusNotFound, "session_not_found")
	}
}

func TestVersionsMountsChecked(t *testing.T) {
	for _, tt := range []struct {
		versions []aap2agui.Mount
		want     string
	}{
		{[]aap2agui.Mount{{Version: 4}}, "AAP version 4: want 1, 2 or 3"},
		{[]aap2agui.Mount{{Version: 1}, {Version: 3}}, "AAP versions 1 and 3 are both at /"},
		{[]aap2agui.Mount{{Version: 1, Path: "/a"}, {Version: 1, Path: "/b"}}, "AAP version 1 is served twice"},
		{[]aap2agui.Mount{{Version: 2, Path: "legacy"}}, `path "legacy" must start with /`},
	} {
		_, err := aap2agui.New(aap2agui.Config{Upstream: "http://127.0.0.1:1", Store: store.NewMemory(), Versions: tt.versions})
		require.Error(t, err, "%+v", tt.versions)
		assert.Contains(t, err.Error(), tt.want)
	}
	for _, s := range []string{"1", "2=/legacy", "3=/"} {
		_, err := aap2agui.ParseMount(s)
		assert.NoError(t, err, s)
	}
	for _, s := range []string{"4", "1=legacy", "", "v1", "1:/x"} {
		_, err := aap2agui.ParseMount(s)
		assert.Error(t, err, s)
	}
}

// putRequest is a PUT /session request for the test agent.
func putRequest(mode aap.StreamMode, tools []aap.ServerToolRef, msgs ...aap.Message) *aap.PutSessionRequest {
	return &aap.PutSessionRequest{
		Agent:    aap.AgentConfig{Name: agentName, Tools: tools, Options: map[string]string{"api_key": "sk-secret", "language": "French"}},
		Stream:   mode,
		Messages: msgs,
		Tools:    []aap.ToolSpecV1{weatherToolV1},
	}
}

// put runs PUT /session and returns the new session's id and what the
// first turn answered, as event lines (a none answer as its messages and
// stop reason).
func put(t *testing.T, c *aap.Client, req *aap.PutSessionRequest) (string, []string) {
	t.Helper()
	if req.Mode() == aap.StreamNone {
		resp, err := c.PutSession(bridgetest.Context(t), req)
		require.NoError(t, err)
		require.NotEmpty(t, resp.SessionID)
		return resp.SessionID, turnLines(t, resp.Turn())
	}
	var evs []aap.Event
	for ev, err := range c.StreamPutSession(bridgetest.Context(t), req) {
		require.NoError(t, err)
		evs = append(evs, ev)
	}
	require.NotEmpty(t, evs)
	start, ok := evs[0].(*aap.SessionStart)
	require.True(t, ok, "the stream opens with session_start, not %s", evs[0].EventName())
	require.IsType(t, &aap.TurnStart{}, evs[1], "turn_start follows session_start")
	return start.SessionID, eventLines(t, evs[1:])
}

// send runs a turn and returns what it answered, as put does.
func send(t *testing.T, c *aap.Client, id string, req aap.PostSessionTurnRequest) []string {
	t.Helper()
	if req.Mode() == aap.StreamNone {
		resp, err := c.Turn(bridgetest.Context(t), id, &req)
		require.NoError(t, err)
		return turnLines(t, resp)
	}
	var evs []aap.Event
	for ev, err := range c.StreamTurn(bridgetest.Context(t), id, &req) {
		require.NoError(t, err)
		evs = append(evs, ev)
	}
	return eventLines(t, evs)
}

func turnLines(t *testing.T, resp *aap.PostSessionTurnResponse) []string {
	return append([]string{"stop " + string(resp.StopReason)}, messageLines(t, resp.Messages)...)
}

// TestVersionsConversation holds the same conversation (text, thinking, a
// client tool round trip, a granted and a denied server tool) through
// version 1, version 2 and version 3, in each stream mode: the answers and
// histories are the same, but for session_start (and sessionId) opening
// the PUT /session of the old versions.
func TestVersionsConversation(t *testing.T) {
	for _, mode := range []aap.StreamMode{aap.StreamDelta, aap.StreamMessage, aap.StreamNone} {
		t.Run(string(mode), func(t *testing.T) {
			e := newEnv(t, demoAgent(t), allVersions)
			untrusted := []aap.ServerToolRef{{Name: demo.SearchTool}}
			seed := []aap.Message{&aap.SystemMessage{Content: "Be brief."}, aap.UserText("hello there")}
			// The turns after the first; calls holds the tool call ids seen.
			user := func(text string) func([]string) aap.PostSessionTurnRequest {
				return func([]string) aap.PostSessionTurnRequest { return userTurn(mode, text) }
			}
			answer := func(m func(calls []string) aap.Message) func([]string) aap.PostSessionTurnRequest {
				return func(calls []string) aap.PostSessionTurnRequest {
					return aap.PostSessionTurnRequest{Stream: mode, Messages: []aap.Message{m(calls)}}
				}
			}
			turns := []func([]string) aap.PostSessionTurnRequest{
				user("please think"),
				user("weather in Paris"),
				answer(func(calls []string) aap.Message {
					return &aap.ToolMessage{ToolCallID: calls[0], Content: aap.TextContent("Sunny")}
				}),
				user("search dogs"),
				answer(func(calls []string) aap.Message {
					return &aap.ToolPermissionMessage{ToolCallID: calls[1], Granted: true}
				}),
				user("search cats"),
				answer(func(calls []string) aap.Message {
					return &aap.ToolPermissionMessage{ToolCallID: calls[2], Granted: false, Reason: "not now"}
				}),
			}
			play := func(c *aap.Client, id string, first []string) ([]string, []string) {
				var n idNormalizer
				var calls []string
				transcript := n.lines(first)
				for _, turn := range turns {
					got := send(t, c, id, turn(calls))
					for _, line := range got {
						if m := callIDPattern.FindString(line); m != "" && !slices.Contains(calls, m) {
							calls = append(calls, m)
						}
					}
					transcript = append(transcript, n.lines(got)...)
				}
				hist, err := c.History(bridgetest.Context(t), id, aap.HistoryFull)
				require.NoError(t, err)
				return transcript, n.lines(messageLines(t, hist))
			}

			// Version 3: POST /sessions, then the first turn.
			v3 := e.versionClient(t, "", "", 3)
			created, err := v3.CreateSession(bridgetest.Context(t), &aap.PostSessionsRequest{
				Agent:    aap.AgentConfig{Name: agentName, Tools: untrusted, Options: map[string]string{"api_key": "sk-secret", "language": "French"}},
				Messages: seed[:1], Tools: []aap.ToolSpec{weatherSpec},
			})
			require.NoError(t, err)
			want, wantHist := play(v3, created.SessionID, send(t, v3, created.SessionID, aap.PostSessionTurnRequest{Stream: mode, Messages: seed[1:]}))
			require.Contains(t, strings.Join(want, "\n"), "Sunny")

			for _, v := range []struct {
				path    string
				version int
			}{{"/v1", 1}, {"/v2", 2}} {
				c := e.versionClient(t, v.path, "", v.version)
				id, first := put(t, c, putRequest(mode, untrusted, seed...))
				got, gotHist := play(c, id, first)
				assert.Equal(t, want, got, "version %d answers as version 3", v.version)
				assert.Equal(t, wantHist, gotHist, "version %d history", v.version)

				info, err := c.GetSession(bridgetest.Context(t), id)
				require.NoError(t, err)
				assert.Equal(t, "***", info.Agent.Options["api_key"], "secret options are redacted")
				assert.Equal(t, []aap.ToolSpec{weatherSpec}, info.Tools)
			}
		})
	}
}

// TestVersion1InlineHistory checks GET /session/:id?history= of version
// 1: the history asked for, inline, when the agent declares that type;
// nothing otherwise.
func TestVersion1InlineHistory(t *testing.T) {
	e := newEnv(t, demoAgent(t), allVersions, func(c *aap2agui.Config) {
		c.Agent.Capabilities = aap2agui.DefaultAgent().Capabilities
		c.Agent.Capabilities.History = &aap.HistoryCapabilities{Compacted: &aap.Empty{}}
	})
	c := e.versionClient(t, "/v1", "", 1)
	id, _ := put(t, c, putRequest(aap.StreamDelta, nil, aap.UserText("hello there")))

	r := doRaw(t, "GET", e.Root+"/v1/session/"+id+"?history=compacted", "", "")
	require.Equal(t, http.StatusOK, r.Status, r.Body)
	assert.JSONEq(t, `{"sessionId":"`+id+`","agent":{"name":"agent","options":{"api_key":"***","language":"French"}},`+
		`"tools":[{"name":"get_weather","description":"Get the current weather for a place.","inputSchema":{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}}],`+
		`"history":{"compacted":[{"role":"user","content":"hello there"},{"role":"assistant","content":"You said: hello there"}]}}`, r.Body)

	for _, q := range []string{"", "?history=full"} {
		r := doRaw(t, "GET", e.Root+"/v1/session/"+id+q, "", "")
		require.Equal(t, http.StatusOK, r.Status, r.Body)
		assert.NotContains(t, r.Body, `"history"`, "%q: no history unless asked for and declared", q)
	}
	_, err := c.History(bridgetest.Context(t), id, aap.HistoryFull)
	require.ErrorIs(t, err, aap.ErrHistoryNotServed)
	requireJSONError(t, doRaw(t, "GET", e.Root+"/v1/session/"+id+"?history=everything", "", ""), http.StatusBadRequest, "invalid_request")

	// Version 2 has no inline history: the parameter is not one of its own.
	r = doRaw(t, "GET", e.Root+"/v2/session/"+id+"?history=compacted", "", "")
	require.Equal(t, http.StatusOK, r.Status, r.Body)
	assert.NotContains(t, r.Body, `"history"`)
	requireJSONError(t, doRaw(t, "GET", e.Root+"/v2/session/"+id+"/history?type=full", "", ""), http.StatusNotFound, "history_type_not_supported")
	requireJSONError(t, doRaw(t, "GET", e.Root+"/v2/session/"+id+"/history", "", ""), http.StatusBadRequest, "invalid_request")
	r = doRaw(t, "GET", e.Root+"/v2/session/"+id+"/history?type=compacted", "", "")
	require.Equal(t, http.StatusOK, r.Status, r.Body)
	assert.JSONEq(t, `{"history":{"compacted":[{"role":"user","content":"hello there"},{"role":"assistant","content":"You said: hello there"}]}}`, r.Body)
}

// TestVersionsListSessions checks GET /sessions of each version over the
// same sessions, a page at a time: ids (1), objects with inputSchema (2),
// objects with parameters (3).
func TestVersionsListSessions(t *testing.T) {
	e := newEnv(t, demoAgent(t), allVersions, func(c *aap2agui.Config) { c.PageSize = 2 })
	var ids []string
	for i := range 3 {
		id, _ := put(t, e.versionClient(t, "/v1", "", 1), putRequest(aap.StreamNone, nil, aap.UserText("hello "+string(rune('a'+i)))))
		ids = append(ids, id)
	}
	r := doRaw(t, "GET", e.Root+"/v1/sessions", "", "")
	require.Equal(t, http.StatusOK, r.Status)
	var page1 aap.SessionListResponseV1
	require.NoError(t, json.Unmarshal([]byte(r.Body), &page1))
	assert.Equal(t, ids[:2], page1.Sessions)
	require.NotEmpty(t, page1.Next)
	r = doRaw(t, "GET", e.Root+"/v1/sessions?after="+page1.Next, "", "")
	require.NoError(t, json.Unmarshal([]byte(r.Body), &page1))
	assert.Equal(t, aap.SessionListResponseV1{Sessions: ids[2:]}, page1)

	r = doRaw(t, "GET", e.Root+"/v2/sessions", "", "")
	var page2 aap.SessionListResponseV2
	require.NoError(t, json.Unmarshal([]byte(r.Body), &page2))
	require.Len(t, page2.Sessions, 2)
	assert.Equal(t, ids[0], page2.Sessions[0].SessionID)
	assert.Equal(t, []aap.ToolSpecV1{weatherToolV1}, page2.Sessions[0].Tools)
	assert.Contains(t, r.Body, `"inputSchema"`)
	assert.NotContains(t, r.Body, `"parameters"`)
	assert.Equal(t, "***", page2.Sessions[0].Agent.Options["api_key"])

	var all []string
	for s, err := range e.versionClient(t, "", "", 3).Sessions(bridgetest.Context(t)) {
		require.NoError(t, err)
		assert.Equal(t, []aap.ToolSpec{weatherSpec}, s.Tools)
		all = append(all, s.SessionID)
	}
	assert.Equal(t, ids, all)
	requireJSONError(t, doRaw(t, "GET", e.Root+"/v1/sessions?after=bogus", "", ""), http.StatusBadRequest, "invalid_cursor")
}

// TestVersionsPutErrors checks that a PUT /session that cannot run its
// first turn is refused before anything is stored.
func TestVersionsPutErrors(t *testing.T) {
	e := newEnv(t, demoAgent(t), allVersions)
	tool := `"tools":[{"name":"get_weather","description":"d","inputSchema":{"type":"object"}}]`
	for _, tt := range []struct {
		name, body string
		status     int
		code       string
	}{
		{"last message from the assistant", `{"agent":{"name":"agent"},"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]}`, 400, "invalid_request"},
		{"last message a tool result", `{"agent":{"name":"agent"},"stream":"delta","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","toolCallId":"c1","name":"get_weather","input":{}}]},{"role":"tool","toolCallId":"c1","content":"sunny"}],` + tool + `}`, 400, "invalid_request"},
		{"no messages", `{"agent":{"name":"agent"},"messages":[]}`, 400, "invalid_request"},
		{"messages missing", `{"agent":{"name":"agent"}}`, 400, "invalid_request"},
		{"a tool permission", `{"agent":{"name":"agent"},"messages":[{"role":"tool_permission","toolCallId":"c","granted":true}]}`, 400, "invalid_request"},
		{"a version 3 tool spec", `{"agent":{"name":"agent"},"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"t","description":"d","parameters":{}}]}`, 400, "invalid_request"},
		{"unknown agent", `{"agent":{"name":"other"},"messages":[{"role":"user","content":"hi"}]}`, 400, "unknown_agent"},
		{"unknown server tool", `{"agent":{"name":"agent","tools":[{"name":"nope"}]},"messages":[{"role":"user","content":"hi"}]}`, 400, "invalid_request"},
		{"an http image", `{"agent":{"name":"agent"},"messages":[{"role":"user","content":[{"type":"image","url":"http://example.com/a.png"}]}]}`, 400, "invalid_request"},
		{"a bad stream mode", `{"agent":{"name":"agent"},"stream":"fast","messages":[{"role":"user","content":"hi"}]}`, 400, "invalid_request"},
		{"not JSON", `{"agent":`, 400, "invalid_json"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			requireJSONError(t, doRaw(t, "PUT", e.Root+"/v1/session", "", tt.body), tt.status, tt.code)
		})
	}
	r := doRaw(t, "PUT", e.Root+"/v2/session", "", `{"agent":{"name":"agent"},"messages":[{"role":"assistant","content":"hello"}]}`)
	requireJSONError(t, r, 400, "invalid_request")
	assert.Contains(t, r.Body, "the last message must be a user message")

	var n int
	for _, err := range e.Client.Sessions(bridgetest.Context(t)) {
		require.NoError(t, err)
		n++
	}
	assert.Zero(t, n, "no session was stored")
}

// TestVersionsPutUpstreamDown checks that a PUT /session whose agent
// cannot be called answers 502 and leaves no session behind.
func TestVersionsPutUpstreamDown(t *testing.T) {
	e := newEnv(t, "http://127.0.0.1:1/", allVersions)
	for _, mode := range []string{"delta", "none"} {
		r := doRaw(t, "PUT", e.Root+"/v1/session", "", `{"agent":{"name":"agent"},"stream":"`+mode+`","messages":[{"role":"user","content":"hi"}]}`)
		requireJSONError(t, r, http.StatusBadGateway, "upstream_unreachable")
	}
	r := doRaw(t, "GET", e.Root+"/v1/sessions", "", "")
	assert.JSONEq(t, `{"sessions":[]}`, r.Body)
}

// TestVersionsPutWire checks the bytes of a PUT /session answer: the
// stream opens with session_start then turn_start; a none answer carries
// sessionId before stopReason.
func TestVersionsPutWire(t *testing.T) {
	e := newEnv(t, demoAgent(t), allVersions)
	r := doRaw(t, "PUT", e.Root+"/v1/session", "", `{"agent":{"name":"agent"},"stream":"message","messages":[{"role":"user","content":"hello there"}]}`)
	require.Equal(t, http.StatusOK, r.Status, r.Body)
	assert.Equal(t, "text/event-stream", r.Header.Get("Content-Type"))
	id := strings.TrimSuffix(strings.TrimPrefix(strings.SplitN(r.Body, "\n", 4)[2], `data: {"sessionId":"`), `"}`)
	assert.Regexp(t, `^sess_`, id)
	assert.Equal(t, "id: <log>:1\nevent: session_start\ndata: {\"sessionId\":\""+id+"\"}\n\n"+
		"id: <log>:2\nevent: turn_start\ndata: {}\n\n"+
		"id: <log>:3\nevent: text\ndata: {\"text\":\"You said: hello there\"}\n\n"+
		"id: <log>:4\nevent: turn_stop\ndata: {\"stopReason\":\"end_turn\"}\n\n", namedLogs(r.Body))

	r = doRaw(t, "PUT", e.Root+"/v2/session", "", `{"agent":{"name":"agent"},"messages":[{"role":"user","content":"hello there"}]}`)
	require.Equal(t, http.StatusOK, r.Status, r.Body)
	assert.Equal(t, "application/json", r.Header.Get("Content-Type"))
	assert.Regexp(t, `^\{"sessionId":"sess_[^"]+","stopReason":"end_turn","messages":\[\{"role":"assistant","content":"You said: hello there"\}\]\}\n?$`, r.Body)
}

// TestVersionsCrossContinuation continues sessions across versions: one
// made by PUT /session (version 1) goes on at POST /sessions/:id/turns
// (version 3), one made by POST /sessions at POST /session/:id (version
// 2); each version sees the same session, tools and history.
func TestVersionsCrossContinuation(t *testing.T) {
	e := newEnv(t, demoAgent(t), allVersions)
	v1 := e.versionClient(t, "/v1", "", 1)
	v2 := e.versionClient(t, "/v2", "", 2)
	v3 := e.versionClient(t, "", "", 3)

	// PUT /session whose first turn calls the client's tool; the result
	// comes through version 3.
	var n idNormalizer
	id, first := put(t, v1, putRequest(aap.StreamDelta, nil, aap.UserText("weather in Oslo")))
	assert.Equal(t, []string{
		`turn_start {}`,
		`tool_call {"toolCallId":"call#1","name":"get_weather","input":{"location":"Oslo"}}`,
		`turn_stop {"stopReason":"tool_use"}`,
	}, n.lines(first))
	call := callIDPattern.FindString(first[1])
	got := send(t, v3, id, aap.PostSessionTurnRequest{Stream: aap.StreamMessage, Messages: []aap.Message{&aap.ToolMessage{ToolCallID: call, Content: aap.TextContent("Snow")}}})
	assert.Equal(t, []string{`turn_start {}`, `text {"text":"The weather in Oslo: Snow"}`, `turn_stop {"stopReason":"end_turn"}`}, got)
	info, err := v3.GetSession(bridgetest.Context(t), id)
	require.NoError(t, err)
	assert.Equal(t, []aap.ToolSpec{weatherSpec}, info.Tools, "the version 1 tool spec reads as version 3's")
	want := []string{
		`{"role":"user","content":"weather in Oslo"}`,
		`{"role":"assistant","content":[{"type":"tool_use","toolCallId":"call#1","name":"get_weather","input":{"location":"Oslo"}}]}`,
		`{"role":"tool","toolCallId":"call#1","content":"Snow"}`,
		`{"role":"assistant","content":"The weather in Oslo: Snow"}`,
	}
	for _, c := range []*aap.Client{v1, v2, v3} {
		hist, err := c.History(bridgetest.Context(t), id, aap.HistoryFull)
		require.NoError(t, err)
		assert.Equal(t, want, n.lines(messageLines(t, hist)))
	}

	// POST /sessions, then turns through version 2 with new tools.
	created, err := v3.CreateSession(bridgetest.Context(t), &aap.PostSessionsRequest{Agent: aap.AgentConfig{Name: agentName}})
	require.NoError(t, err)
	got = send(t, v2, created.SessionID, aap.PostSessionTurnRequest{Messages: []aap.Message{aap.UserText("weather in Rome")}, Tools: []aap.ToolSpec{weatherSpec}})
	require.Len(t, got, 2)
	assert.Contains(t, got[1], `"name":"get_weather"`, "the tools a version 2 turn sets are the session's")
	r := doRaw(t, "GET", e.Root+"/sessions/"+created.SessionID, "", "")
	assert.Contains(t, r.Body, `"parameters"`)
	r = doRaw(t, "GET", e.Root+"/v2/session/"+created.SessionID, "", "")
	assert.Contains(t, r.Body, `"inputSchema"`)

	// Deleted through version 1, gone for version 3.
	require.NoError(t, v1.DeleteSession(bridgetest.Context(t), created.SessionID))
	_, err = v3.GetSession(bridgetest.Context(t), created.SessionID)
	requireHTTPError(t, err, http.StatusNotFound, "session_not_found")
}

// TestVersionsKeysAndLocks checks that the old versions share version 3's
// keys, isolation and turn locks.
func TestVersionsKeysAndLocks(t *testing.T) {
	release := make(chan struct{})
	up := newFakeUpstream(t, func(w http.ResponseWriter, r *http.Request, in *runInput, n int) {
		if n == 1 {
			sseEvents(w, runStarted(in))
			<-release
		}
		sseEvents(w, textRun(in, "m1", "ok")...)
	})
	e := newEnv(t, up.URL, allVersions, func(c *aap2agui.Config) { c.APIKeys = []string{"key-a", "key-b"} })
	requireJSONError(t, doRaw(t, "PUT", e.Root+"/v1/session", "", `{"agent":{"name":"agent"},"messages":[{"role":"user","content":"hi"}]}`), http.StatusUnauthorized, "unauthorized")

	a := e.versionClient(t, "/v1", "key-a", 1)
	id, _ := put(t, a, putRequest(aap.StreamNone, nil, aap.UserText("hi")))
	b := e.versionClient(t, "/v2", "key-b", 2)
	_, err := b.GetSession(bridgetest.Context(t), id)
	requireHTTPError(t, err, http.StatusNotFound, "session_not_found")
	page, err := b.ListSessions(bridgetest.Context(t), "")
	require.NoError(t, err)
	assert.Empty(t, page.Sessions, "another key's sessions are not listed")

	// A version 3 turn holds the session: a version 1 turn gets 409.
	v3 := aap.NewClient(e.Root, aap.ClientOptions{APIKey: "key-a"})
	done := make(chan error, 1)
	go func() {
		_, err := v3.Turn(bridgetest.Context(t), id, &aap.PostSessionTurnRequest{Messages: []aap.Message{aap.UserText("slow")}})
		done <- err
	}()
	require.Eventually(t, func() bool { return up.count() == 2 }, bridgetest.Timeout, 5e6)
	r := doRaw(t, "POST", e.Root+"/v1/session/"+id, "key-a", `{"messages":[{"role":"user","content":"again"}]}`)
	requireJSONError(t, r, http.StatusConflict, "turn_in_progress")
	bridgetest.RequireLeaseLeft(t, r.Header, r.Body)
	close(release)
	require.NoError(t, <-done)
	got := send(t, a, id, userTurn(aap.StreamNone, "again"))
	assert.Equal(t, "stop end_turn", got[0])
}
