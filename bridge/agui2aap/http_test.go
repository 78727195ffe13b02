package agui2aap_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/bridge/agui2aap"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/store"
)

// Input the bridge refuses before any stream: a JSON error with a status
// and a code, and nothing stored.
func TestBadInput(t *testing.T) {
	e := newEnv(t)
	valid := func() types.RunAgentInput {
		c := e.conv("bad")
		c.say("hello")
		return c.input("", nil)
	}
	audio := valid()
	audio.Messages = append(audio.Messages, types.Message{ID: "assistant-1", Role: types.RoleAssistant, Content: "hi"},
		types.Message{ID: "voice-note", Role: types.RoleUser, Content: []any{
			map[string]any{"type": "text", "text": "listen"},
			map[string]any{"type": "audio", "source": map[string]any{"type": "data", "value": "AAAA", "mimeType": "audio/wav"}},
		}})
	blank := valid()
	blank.ThreadID = "  "
	noID := valid()
	noID.Messages[0].ID = ""

	cases := []struct {
		name   string
		path   string
		body   any
		status int
		code   string
		says   string // part of the error message
	}{
		{name: "blank threadId", path: "/agents/demo", body: blank, status: http.StatusBadRequest, code: "invalid_input", says: "threadId"},
		{name: "malformed body", path: "/agents/demo", body: `{"threadId": "t", "messages": [`, status: http.StatusBadRequest, code: "invalid_body"},
		{name: "not an object", path: "/agents/demo", body: `[1,2]`, status: http.StatusBadRequest, code: "invalid_body"},
		{name: "unknown agent", path: "/agents/nobody", body: valid(), status: http.StatusNotFound, code: "unknown_agent", says: "nobody"},
		{name: "audio input", path: "/agents/demo", body: audio, status: http.StatusBadRequest, code: "invalid_input", says: "voice-note"},
		{name: "message without id", path: "/agents/demo", body: noID, status: http.StatusBadRequest, code: "invalid_input", says: "messages[0]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := e.post(t, tc.path, tc.body)
			assert.Equal(t, tc.status, r.Status, r.Body)
			assert.Equal(t, "application/json", r.Header.Get("Content-Type"))
			assert.Equal(t, tc.code, r.errorCode(), r.Body)
			assert.Contains(t, r.errorMessage(), tc.says)
			_, err := e.Store.GetThread(bridgetest.Context(t), "", "bad")
			assert.Error(t, err, "nothing stored")
		})
	}
	assert.Empty(t, e.sessions(t), "no AAP session was created")
}

// The audio error names the message by its id and by its position in
// messages, as the client sent them.
func TestBadInputNamesThePosition(t *testing.T) {
	e := newEnv(t)
	c := e.conv("audio")
	c.say("hello")
	c.Messages = append(c.Messages, types.Message{ID: "assistant-1", Role: types.RoleAssistant, Content: "hi"},
		types.Message{ID: "voice-note", Role: types.RoleUser, Content: []any{
			map[string]any{"type": "audio", "source": map[string]any{"type": "data", "value": "AAAA", "mimeType": "audio/wav"}},
		}})
	r := e.post(t, "/agents/demo", c.input("", nil))
	require.Equal(t, http.StatusBadRequest, r.Status)
	assert.Contains(t, r.errorMessage(), "message 2", "the position in messages")
}

// API keys: none or a wrong one is a 401 with WWW-Authenticate; a right
// one runs.
func TestAPIKeys(t *testing.T) {
	e := newEnv(t, func(c *agui2aap.Config) { c.APIKeys = []string{"key-a", "key-b"} })
	body := func() types.RunAgentInput {
		c := e.conv("keys")
		c.say("hello")
		return c.input("", nil)
	}
	cases := []struct {
		name   string
		auth   string
		status int
	}{
		{name: "missing", auth: "", status: http.StatusUnauthorized},
		{name: "wrong", auth: "Bearer key-c", status: http.StatusUnauthorized},
		{name: "not bearer", auth: "Basic a2V5LWE6", status: http.StatusUnauthorized},
		{name: "right", auth: "Bearer key-b", status: http.StatusOK},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var hdr []string
			if tc.auth != "" {
				hdr = []string{"Authorization", tc.auth}
			}
			r := e.post(t, "/agents/demo", body(), hdr...)
			assert.Equal(t, tc.status, r.Status, r.Body)
			if tc.status == http.StatusUnauthorized {
				assert.Equal(t, "unauthorized", r.errorCode())
				assert.Contains(t, r.Header.Get("WWW-Authenticate"), "Bearer")
				g := e.get(t, "/agents", "Authorization", tc.auth)
				assert.Equal(t, http.StatusUnauthorized, g.Status, "GET /agents too")
			}
		})
	}
	assert.Equal(t, http.StatusOK, e.get(t, "/healthz").Status, "health needs no key")
}

// The same threadId from two API keys is two threads, each on its own
// session: one key can never continue another's thread.
func TestThreadsScopedToKeys(t *testing.T) {
	e := newEnv(t, func(c *agui2aap.Config) { c.APIKeys = []string{"key-a", "key-b"} })
	a := e.conv("shared")
	a.Headers = []string{"Authorization", "Bearer key-a"}
	b := e.conv("shared")
	b.Headers = []string{"Authorization", "Bearer key-b"}

	a.say("from a")
	a.run(t)
	b.say("from b")
	b.run(t)
	ss := e.sessions(t)
	require.Len(t, ss, 2, "one session per key")
	a.say("a again")
	a.run(t)
	b.say("b again")
	b.run(t)
	require.Len(t, e.sessions(t), 2)
	assert.Equal(t, []string{"from a", "a again"}, userTexts(e.history(t, ss[0].SessionID)))
	assert.Equal(t, []string{"from b", "b again"}, userTexts(e.history(t, ss[1].SessionID)))
}

// CORS: a preflight from an allowed origin gets 204 and the allow
// headers; from another origin 403; actual responses carry the origin.
func TestCORS(t *testing.T) {
	e := newEnv(t, func(c *agui2aap.Config) { c.CORSOrigins = []string{"https://app.example"} })
	preflight := func(origin string) *http.Response {
		req, err := http.NewRequestWithContext(bridgetest.Context(t), http.MethodOptions, e.URL+"/agents/demo", nil)
		require.NoError(t, err)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "content-type, authorization")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp
	}
	t.Run("allowed origin", func(t *testing.T) {
		resp := preflight("https://app.example")
		assert.Equal(t, http.StatusNoContent, resp.StatusCode)
		assert.Equal(t, "https://app.example", resp.Header.Get("Access-Control-Allow-Origin"))
		assert.Contains(t, resp.Header.Get("Access-Control-Allow-Methods"), "POST")
		allowHeaders := strings.ToLower(resp.Header.Get("Access-Control-Allow-Headers"))
		assert.Contains(t, allowHeaders, "content-type")
		assert.Contains(t, allowHeaders, "authorization")
		assert.Contains(t, resp.Header.Values("Vary"), "Origin")
	})
	t.Run("other origin", func(t *testing.T) {
		resp := preflight("https://evil.example")
		assert.Equal(t, http.StatusForbidden, resp.StatusCode)
		assert.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"))
	})
	t.Run("actual request from the allowed origin", func(t *testing.T) {
		c := e.conv("cors")
		c.say("hello")
		r := e.post(t, "/agents/demo", c.input("", nil), "Origin", "https://app.example")
		assert.Equal(t, http.StatusOK, r.Status)
		assert.Equal(t, "https://app.example", r.Header.Get("Access-Control-Allow-Origin"))
	})
	t.Run("any origin needs callers to present a key", func(t *testing.T) {
		// Open, any web site the local user visits could run and read its
		// threads from the user's browser: refused at start.
		_, err := agui2aap.New(agui2aap.Config{Upstream: e.AAP, Store: store.NewMemory(), Serving: agui2aap.Serving{CORSOrigins: []string{"*"}}})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "CORS origin *")
		assert.Contains(t, err.Error(), "--api-key")
		for name, cfg := range map[string]agui2aap.Config{
			"API keys":     {Serving: agui2aap.Serving{APIKeys: []string{"k1"}}},
			"forward-auth": {ForwardAuth: true},
		} {
			cfg.Upstream, cfg.Store, cfg.CORSOrigins = e.AAP, store.NewMemory(), []string{"*"}
			_, err := agui2aap.New(cfg)
			assert.NoError(t, err, name)
		}
	})
}

// A second run on a thread while one is running is a 409 before any
// stream; once the first ends, the thread takes runs again.
func TestConcurrentRunOnOneThread(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	f := newFakeAAP(t, func(w http.ResponseWriter, r *http.Request, n int, req *aap.PostSessionTurnRequest) {
		if n == 0 {
			writeEvents(w, &aap.TurnStart{}, &aap.TextDelta{Delta: "slow "})
			started <- struct{}{}
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
			writeEvents(w, &aap.TextDelta{Delta: "answer"}, &aap.TurnStop{StopReason: aap.StopEndTurn})
			return
		}
		answerText("fast answer")(w, r, n, req)
	})
	e := newBridge(t, f.URL)
	c := e.conv("busy")
	c.say("first")
	first := c.input("", nil)

	// The first run's request is made off the test goroutine, which must
	// not call require: its answer is checked once it is back.
	body, err := json.Marshal(first)
	require.NoError(t, err)
	var (
		wg       sync.WaitGroup
		slowResp *http.Response
		slowBody []byte
		slowErr  error
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		req, err := http.NewRequestWithContext(bridgetest.Context(t), http.MethodPost, e.URL+"/agents/demo", bytes.NewReader(body))
		if err != nil {
			slowErr = err
			return
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "text/event-stream")
		if slowResp, slowErr = http.DefaultClient.Do(req); slowErr == nil {
			slowBody, slowErr = io.ReadAll(slowResp.Body)
			slowResp.Body.Close()
		}
	}()
	select {
	case <-started:
	case <-time.After(bridgetest.Timeout):
		t.Fatal("the first run never reached the AAP server")
	}

	second := c.input("", nil)
	second.Messages = append(second.Messages, types.Message{ID: "u2", Role: types.RoleUser, Content: "second"})
	r := e.post(t, "/agents/demo", second)
	assert.Equal(t, http.StatusConflict, r.Status, r.Body)
	assert.Equal(t, "run_in_progress", r.errorCode())
	bridgetest.RequireLeaseLeft(t, r.Header, r.Body)

	other := e.conv("other-thread")
	other.say("hi")
	r = e.post(t, "/agents/demo", other.input("", nil))
	assert.Equal(t, http.StatusOK, r.Status, "another thread is not blocked")

	close(release)
	wg.Wait()
	require.NoError(t, slowErr)
	require.Equal(t, http.StatusOK, slowResp.StatusCode)
	slow := &response{Status: slowResp.StatusCode, Events: decodeStream(t, slowBody)}
	assert.Equal(t, []string{"slow answer"}, summarize(slow).Text)
}

// The permission policy must be one of the three.
func TestConfigValidation(t *testing.T) {
	cases := []struct {
		name string
		cfg  agui2aap.Config
	}{
		{name: "no store", cfg: agui2aap.Config{Upstream: "http://127.0.0.1:1"}},
		{name: "no upstream", cfg: agui2aap.Config{Store: newEnv(t).Store}},
		{name: "upstream not http", cfg: agui2aap.Config{Upstream: "ftp://x", Store: newEnv(t).Store}},
		{name: "unknown policy", cfg: agui2aap.Config{Upstream: "http://127.0.0.1:1", Store: newEnv(t).Store, Policy: "ask"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := agui2aap.New(tc.cfg)
			assert.Error(t, err)
		})
	}
}

// GET /agents describes the AAP agents in AG-UI's capability terms.
func TestListAgents(t *testing.T) {
	cases := []struct {
		name       string
		policy     agui2aap.Policy
		interrupts bool
	}{
		{name: "interrupt policy", policy: agui2aap.PolicyInterrupt, interrupts: true},
		{name: "grant policy", policy: agui2aap.PolicyGrant, interrupts: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, func(c *agui2aap.Config) { c.Policy = tc.policy })
			r := e.get(t, "/agents")
			require.Equal(t, http.StatusOK, r.Status, r.Body)
			var out struct {
				Agents []agui.AgentDescription `json:"agents"`
			}
			require.NoError(t, jsonUnmarshal(r.Body, &out))
			require.Len(t, out.Agents, 1)
			a := out.Agents[0]
			assert.Equal(t, "demo", a.Name)
			assert.Equal(t, "/agents/demo", a.URL)
			caps := a.Capabilities
			assert.Equal(t, "demo", caps.Identity.Name)
			assert.True(t, caps.Transport.Streaming)
			assert.True(t, caps.Tools.Supported)
			assert.True(t, caps.Tools.ClientProvided)
			require.Len(t, caps.Tools.Items, 1)
			assert.Equal(t, demo.SearchTool, caps.Tools.Items[0].(map[string]any)["name"])
			assert.True(t, caps.Reasoning.Supported)
			assert.True(t, caps.Reasoning.Streaming)
			assert.True(t, caps.Multimodal.Input.Image)
			assert.Equal(t, tc.interrupts, caps.HumanInTheLoop.Interrupts)
			assert.Equal(t, tc.interrupts, caps.HumanInTheLoop.Supported)
		})
	}
}

// Health and readiness: /readyz follows the upstream.
func TestHealthAndReadiness(t *testing.T) {
	e := newEnv(t)
	assert.Equal(t, http.StatusOK, e.get(t, "/healthz").Status)
	assert.Equal(t, http.StatusOK, e.get(t, "/readyz").Status)
	down := newBridge(t, deadUpstream(t))
	assert.Equal(t, http.StatusOK, down.get(t, "/healthz").Status)
	assert.Equal(t, http.StatusServiceUnavailable, down.get(t, "/readyz").Status)
}

// ParseServerTools reads --server-tools.
func TestParseServerTools(t *testing.T) {
	cases := []struct {
		name string
		spec string
		want []agui2aap.ServerTool
		err  bool
	}{
		{name: "empty", spec: ""},
		{name: "one", spec: "web_search", want: []agui2aap.ServerTool{{Name: "web_search"}}},
		{name: "trusted", spec: "web_search:trust", want: []agui2aap.ServerTool{{Name: "web_search", Trust: true}}},
		{name: "per agent", spec: "demo/web_search:trust", want: []agui2aap.ServerTool{{Agent: "demo", Name: "web_search", Trust: true}}},
		{
			name: "several with spaces and empty items", spec: " a , ,b:trust,x/c ",
			want: []agui2aap.ServerTool{{Name: "a"}, {Name: "b", Trust: true}, {Agent: "x", Name: "c"}},
		},
		{name: "bad suffix", spec: "web_search:yes", err: true},
		{name: "no name", spec: ":trust", err: true},
		{name: "agent without tool", spec: "demo/", err: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := agui2aap.ParseServerTools(tc.spec)
			if tc.err {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// Server tools configured for one agent apply only to it.
func TestServerToolsPerAgent(t *testing.T) {
	cases := []struct {
		name  string
		tools []agui2aap.ServerTool
		text  string
	}{
		{name: "for this agent, trusted", tools: []agui2aap.ServerTool{{Agent: "demo", Name: demo.SearchTool, Trust: true}}, text: demo.SearchAnswer(demo.SearchResult("x"))},
		{name: "for another agent", tools: []agui2aap.ServerTool{{Agent: "other", Name: demo.SearchTool, Trust: true}}, text: demo.NoSearchTool},
		{name: "a tool the agent lacks", tools: []agui2aap.ServerTool{{Name: "teleport"}}, text: demo.NoSearchTool},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, func(c *agui2aap.Config) { c.ServerTools = tc.tools })
			c := e.conv("tools")
			c.say("search x")
			assert.Equal(t, tc.text, c.run(t).lastText())
		})
	}
}
