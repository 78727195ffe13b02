package agui2aap_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/agui2aap"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/demo"
)

// legacyAAP is the AAP demo agent serving an old protocol version, whose
// GET /meta may be rewritten (fewer stream modes, another version number)
// and whose requests are recorded as "METHOD PATH".
type legacyAAP struct {
	URL     string
	version int
	modes   []aap.StreamMode // the stream modes /meta declares; nil: all
	metaVer *int             // the version /meta names; nil: the real one
	agent   *demo.AAPAgent

	mu   sync.Mutex
	reqs []string
}

func newLegacyAAP(t testing.TB, version int, modes ...aap.StreamMode) *legacyAAP {
	t.Helper()
	l := &legacyAAP{version: version, modes: modes, agent: demo.NewAAPAgent(demo.AAPAgentOptions{Version: version})}
	s := httptest.NewServer(l)
	t.Cleanup(s.Close)
	l.URL = s.URL
	return l
}

func (l *legacyAAP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.mu.Lock()
	l.reqs = append(l.reqs, r.Method+" "+r.URL.Path)
	l.mu.Unlock()
	if r.URL.Path != "/meta" || (l.modes == nil && l.metaVer == nil) {
		l.agent.ServeHTTP(w, r)
		return
	}
	rec := httptest.NewRecorder()
	l.agent.ServeHTTP(rec, r)
	meta, err := aap.DecodeMeta(rec.Body.Bytes())
	if err != nil {
		http.Error(w, err.Error(), 500)
		return
	}
	if l.modes != nil {
		caps := *meta.Agents[0].Capabilities
		caps.Stream = &aap.StreamCapabilities{}
		for _, m := range l.modes {
			switch m {
			case aap.StreamDelta:
				caps.Stream.Delta = &aap.Empty{}
			case aap.StreamMessage:
				caps.Stream.Message = &aap.Empty{}
			case aap.StreamNone:
				caps.Stream.None = &aap.Empty{}
			}
		}
		meta.Agents[0].Capabilities = &caps
	}
	var body any = meta.V1(l.version)
	if l.metaVer != nil {
		meta.Version = *l.metaVer
		body = meta
		if *l.metaVer == 1 || *l.metaVer == 2 {
			body = meta.V1(*l.metaVer)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(body)
}

// requests returns the turns the server got: PUT and POST requests.
func (l *legacyAAP) requests() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, r := range l.reqs {
		if strings.HasPrefix(r, "PUT ") || strings.HasPrefix(r, "POST ") {
			out = append(out, r)
		}
	}
	return out
}

// legacyBridge starts agui2aap in front of l; its AAPClient speaks l's
// version.
func legacyBridge(t testing.TB, l *legacyAAP, configure ...func(*agui2aap.Config)) *env {
	t.Helper()
	e := newBridge(t, l.URL, configure...)
	e.AAPClient = aap.NewClient(l.URL, aap.ClientOptions{Version: l.version})
	return e
}

// forVersions runs f for versions 1 and 2 of the AAP server, in each
// stream mode the server may be limited to (the bridge asks for the best
// one declared).
func forVersions(t *testing.T, f func(t *testing.T, l *legacyAAP)) {
	for _, version := range []int{1, 2} {
		for _, mode := range []aap.StreamMode{aap.StreamDelta, aap.StreamMessage, aap.StreamNone} {
			t.Run(fmt.Sprintf("v%d/%s", version, mode), func(t *testing.T) {
				f(t, newLegacyAAP(t, version, mode))
			})
		}
	}
}

// The first run of a thread is PUT /session with the seed and the user
// message; later runs go to POST /session/:id of the same session.
func TestLegacyTextOverSeveralRuns(t *testing.T) {
	forVersions(t, func(t *testing.T, l *legacyAAP) {
		e := legacyBridge(t, l)
		c := e.conv("text")
		c.Messages = []types.Message{{ID: "sys", Role: types.RoleSystem, Content: "Be brief."}}
		for _, s := range []string{"hello", "please think", "yes"} {
			c.say(s)
			r := c.run(t)
			assert.Equal(t, "success", r.outcome())
			if s == "please think" {
				assert.Equal(t, []string{demo.ThinkingText(s)}, r.Reasoning)
				assert.Equal(t, []string{demo.DoneThinking}, r.Text)
			} else {
				assert.Equal(t, []string{demo.EchoText(s)}, r.Text)
			}
		}
		id := e.onlySession(t)
		assert.Equal(t, id, e.thread(t, "text").SessionID, "the session id came with the PUT's answer")
		hist := e.history(t, id)
		assert.Equal(t, []string{"hello", "please think", "yes"}, userTexts(hist))
		assert.Equal(t, []string{"system", "user", "assistant", "user", "assistant", "user", "assistant"}, roles(hist))
		assert.Equal(t, []string{"PUT /session", "POST /session/" + id, "POST /session/" + id}, l.requests())
	})
}

// A frontend tool declared in the first run reaches the server in the
// PUT's tools (inputSchema), and its result goes to POST /session/:id.
func TestLegacyFrontendTool(t *testing.T) {
	forVersions(t, func(t *testing.T, l *legacyAAP) {
		e := legacyBridge(t, l)
		c := e.conv("weather")
		c.Tools = []types.Tool{weatherTool}
		c.say("what is the weather in Paris?")
		r := c.run(t)
		require.Len(t, r.Calls, 1)
		call := r.Calls[0]
		assert.Equal(t, demo.WeatherTool, call.Name)
		assert.JSONEq(t, `{"location":"Paris"}`, call.Args)
		assert.Nil(t, r.Finished.Outcome)

		id := e.onlySession(t)
		info, err := e.AAPClient.GetSession(bridgetest.Context(t), id)
		require.NoError(t, err)
		require.Len(t, info.Tools, 1)
		assert.JSONEq(t, `{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}`, string(info.Tools[0].Parameters))

		c.answer(call.ID, "Sunny")
		r = c.run(t)
		assert.Equal(t, []string{demo.WeatherText("Paris", "Sunny")}, r.Text)
		assert.Equal(t, map[string][]string{call.ID: {"Sunny"}}, toolMessages(e.history(t, id)))
		assert.Equal(t, id, e.onlySession(t))
	})
}

// An untrusted server tool: the PUT's turn stops for permission, the
// resume goes to POST /session/:id, approved or denied.
func TestLegacyServerToolInterrupt(t *testing.T) {
	forVersions(t, func(t *testing.T, l *legacyAAP) {
		for _, approved := range []bool{true, false} {
			e := legacyBridge(t, l)
			c := e.conv(fmt.Sprintf("search-%t", approved))
			c.say("search cats")
			r := c.run(t)
			require.Equal(t, "interrupt", r.outcome())
			it := r.interrupts()[0]
			entry, want, answer := approve(it.ID), demo.SearchResult("cats"), demo.SearchAnswer(demo.SearchResult("cats"))
			if !approved {
				entry, want, answer = deny(it.ID, "not today"), demo.DeniedResult("not today"), demo.DeniedText("not today")
			}
			r = c.run(t, entry)
			assert.Equal(t, "success", r.outcome())
			assert.Equal(t, want, r.Results[it.ToolCallID])
			assert.Equal(t, answer, r.lastText())
			c.say("thanks")
			r = c.run(t)
			assert.Equal(t, []string{demo.EchoText("thanks")}, r.Text)
		}
		assert.Len(t, slices.DeleteFunc(l.requests(), func(s string) bool { return s != "PUT /session" }), 2, "one session per thread")
	})
}

// A server that stores a permission's result without sending it: the
// bridge reads it from the session's history, inline (version 1) or at
// its own endpoint (version 2), before the answer.
func TestLegacyQuietPermissionResults(t *testing.T) {
	for _, version := range []int{1, 2} {
		t.Run(fmt.Sprintf("v%d", version), func(t *testing.T) {
			l := newLegacyAAP(t, version)
			l.agent = demo.NewAAPAgent(demo.AAPAgentOptions{Version: version, QuietPermissionResults: true})
			e := legacyBridge(t, l)
			c := e.conv("quiet")
			c.say("search cats")
			r := c.run(t)
			it := r.interrupts()[0]
			r = c.run(t, approve(it.ID))
			assert.Equal(t, demo.SearchResult("cats"), r.Results[it.ToolCallID], "the stored result, read from the history")
			assert.Equal(t, demo.SearchAnswer(demo.SearchResult("cats")), r.lastText())
			history := "GET /session/" + e.onlySession(t)
			if version == 2 {
				history += "/history"
			}
			l.mu.Lock()
			assert.Contains(t, l.reqs, history)
			l.mu.Unlock()
		})
	}
}

// Under a permission policy the bridge answers in a follow-up turn of the
// same run: after a PUT, it goes to the session session_start named.
func TestLegacyPolicyFollowUp(t *testing.T) {
	forVersions(t, func(t *testing.T, l *legacyAAP) {
		e := legacyBridge(t, l, func(c *agui2aap.Config) { c.Policy = agui2aap.PolicyGrant })
		c := e.conv("grant")
		c.say("search cats")
		r := c.run(t)
		assert.Equal(t, "success", r.outcome())
		require.Len(t, r.Calls, 1)
		assert.Equal(t, demo.SearchResult("cats"), r.Results[r.Calls[0].ID])
		assert.Equal(t, demo.SearchAnswer(demo.SearchResult("cats")), r.lastText())
		id := e.onlySession(t)
		assert.Equal(t, []string{"PUT /session", "POST /session/" + id}, l.requests())
	})
}

// A rewritten history (a regenerate) and a session the server lost both
// move the thread to a new session: PUT /session with the client's
// history.
func TestLegacyReseed(t *testing.T) {
	forVersions(t, func(t *testing.T, l *legacyAAP) {
		e := legacyBridge(t, l)
		c := e.conv("regen")
		c.say("first")
		c.run(t)
		c.say("second")
		c.run(t)
		c.dropLast()
		r := c.run(t)
		assert.Equal(t, []string{demo.EchoText("second")}, r.Text)
		ss := e.sessions(t)
		require.Len(t, ss, 2, "a new session")
		fresh := e.thread(t, "regen").SessionID
		assert.Equal(t, ss[1].SessionID, fresh)
		assert.Equal(t, []string{"first", "second"}, userTexts(e.history(t, fresh)))

		// The server loses the session.
		require.NoError(t, e.AAPClient.DeleteSession(bridgetest.Context(t), fresh))
		c.say("still there?")
		r = c.run(t)
		require.Nil(t, r.Error, "%s", r.Body)
		assert.Equal(t, []string{demo.EchoText("still there?")}, r.Text)
		id := e.thread(t, "regen").SessionID
		assert.NotEqual(t, fresh, id)
		assert.Len(t, e.sessions(t), 2, "the first session, and the new one")
		assert.Equal(t, []string{"first", "second", "still there?"}, userTexts(e.history(t, id)))
		assert.Equal(t, "PUT /session", l.requests()[len(l.requests())-1])
	})
}

// A session the server lost while the client ran its tool: a new session
// on a version 1 or 2 server starts with a user message, so the last one
// is asked again and the agent calls the tool again.
func TestLegacyReseedWithToolResults(t *testing.T) {
	l := newLegacyAAP(t, 1)
	e := legacyBridge(t, l)
	c := e.conv("lost-tool")
	c.Tools = []types.Tool{weatherTool}
	c.say("weather in Oslo")
	r := c.run(t)
	first := r.Calls[0].ID
	require.NoError(t, e.AAPClient.DeleteSession(bridgetest.Context(t), e.onlySession(t)))
	c.answer(first, "Snow")
	r = c.run(t)
	require.Nil(t, r.Error, "%s", r.Body)
	require.Len(t, r.Calls, 1, "the agent asks for the weather again")
	assert.NotEqual(t, first, r.Calls[0].ID)
	assert.JSONEq(t, `{"location":"Oslo"}`, r.Calls[0].Args)
	hist := e.history(t, e.onlySession(t))
	assert.Equal(t, []string{"weather in Oslo"}, userTexts(hist))

	c.answer(r.Calls[0].ID, "Snow")
	r = c.run(t)
	assert.Equal(t, []string{demo.WeatherText("Oslo", "Snow")}, r.Text)
}

// --upstream-aap-version (Config.UpstreamVersion) speaks a version whatever
// GET /meta says; a /meta naming a version agui2aap does not speak is a
// 502 unless one is forced.
func TestLegacyForcedVersion(t *testing.T) {
	three, four := 3, 4
	l := newLegacyAAP(t, 2)
	l.metaVer = &three // a version 2 server that says it is version 3
	e := legacyBridge(t, l)
	c := e.conv("wrong")
	c.say("hello")
	r := e.post(t, "/agents/demo", c.input("", nil))
	assert.Equal(t, http.StatusBadGateway, r.Status, "POST /sessions is not a route of version 2: %s", r.Body)

	e = legacyBridge(t, l, func(c *agui2aap.Config) { c.UpstreamVersion = 2 })
	c = e.conv("forced")
	c.say("hello")
	res := c.run(t)
	assert.Equal(t, []string{demo.EchoText("hello")}, res.Text)

	l.metaVer = &four
	e = legacyBridge(t, l)
	c = e.conv("unknown")
	c.say("hello")
	r = e.post(t, "/agents/demo", c.input("", nil))
	assert.Equal(t, http.StatusBadGateway, r.Status)
	assert.Equal(t, "upstream_unsupported_version", r.errorCode())

	_, err := agui2aap.New(agui2aap.Config{Upstream: l.URL, Store: e.Store, UpstreamVersion: 5})
	assert.ErrorContains(t, err, "Config.UpstreamVersion 5")
}

// The PUT's body: the seed, the user message (with the client's context),
// the client tools with inputSchema, the agent's server tools.
func TestLegacyPutBody(t *testing.T) {
	var mu sync.Mutex
	var bodies []string
	agent := demo.NewAAPAgent(demo.AAPAgentOptions{Version: 1})
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut {
			dump, _ := httputil.DumpRequest(r, true)
			_, body, _ := strings.Cut(string(dump), "\r\n\r\n")
			mu.Lock()
			bodies = append(bodies, body)
			mu.Unlock()
			r.Body = io.NopCloser(strings.NewReader(body))
		}
		agent.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	e := newBridge(t, s.URL)
	c := e.conv("body")
	c.Tools = []types.Tool{weatherTool}
	c.Context = []types.Context{{Description: "page", Value: "home"}}
	c.Messages = []types.Message{{ID: "sys", Role: types.RoleSystem, Content: "Be brief."}}
	c.say("hello")
	c.run(t)
	require.Len(t, bodies, 1)
	assert.JSONEq(t, `{"agent":{"name":"demo","tools":[{"name":"web_search"}]},"stream":"delta","messages":[`+
		`{"role":"system","content":"Be brief."},`+
		`{"role":"user","content":[{"type":"text","text":"Context from the application:\n- page: home"},{"type":"text","text":"hello"}]}],`+
		`"tools":[{"name":"get_weather","description":"Get the current weather for a place.","inputSchema":{"properties":{"location":{"type":"string"}},"required":["location"],"type":"object"}}]}`, bodies[0])
}
