package aap2agui_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/demo"
)

func TestMeta(t *testing.T) {
	const key = "meta-test-key"
	tests := []struct {
		name       string
		publicMeta bool
		key        string
		wantStatus int
	}{
		{name: "with a key", key: key, wantStatus: http.StatusOK},
		{name: "without a key", wantStatus: http.StatusUnauthorized},
		{name: "with a wrong key", key: "not-the-key", wantStatus: http.StatusUnauthorized},
		{name: "public, without a key", publicMeta: true, wantStatus: http.StatusOK},
		{name: "public, with a key", publicMeta: true, key: key, wantStatus: http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, demoAgent(t), func(c *aap2agui.Config) {
				c.APIKeys = []string{key}
				c.PublicMeta = tt.publicMeta
			})
			r := doRaw(t, http.MethodGet, e.URL+"/meta", tt.key, "")
			if tt.wantStatus != http.StatusOK {
				requireJSONError(t, r, tt.wantStatus, "unauthorized")
				return
			}
			require.Equal(t, http.StatusOK, r.Status, r.Body)
			var meta aap.GetMetaResponse
			require.NoError(t, json.Unmarshal([]byte(r.Body), &meta))
			assert.Equal(t, 3, meta.Version)
			require.Len(t, meta.Agents, 1)
			a := meta.Agents[0]
			assert.Equal(t, agentName, a.Name)
			assert.Equal(t, "1.0.0", a.Version)
			assert.Equal(t, []aap.ToolSpec{demo.SearchToolSpec}, a.Tools)
			assert.Equal(t, testOptions, a.Options)
			require.NotNil(t, a.Capabilities)
			assert.Equal(t, aap2agui.DefaultAgent().Capabilities, a.Capabilities)

			// PublicMeta opens /meta only.
			requireJSONError(t, doRaw(t, http.MethodGet, e.URL+"/sessions", "", ""), http.StatusUnauthorized, "unauthorized")
		})
	}
}

func TestCreateSession(t *testing.T) {
	e := newEnv(t, demoAgent(t))
	weather := specJSON(t, weatherSpec)
	tests := []struct {
		name       string
		body       string
		wantStatus int
		wantCode   string
	}{
		{name: "minimal", body: `{"agent":{"name":"agent"}}`, wantStatus: http.StatusCreated},
		{
			name: "server tools, options, seed messages and client tools",
			body: `{"agent":{"name":"agent","tools":[{"name":"web_search","trust":true}],"options":{"language":"French","model":"large","api_key":"k"}},` +
				`"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hi"},{"role":"assistant","content":"Hello"}],` +
				`"tools":[` + weather + `]}`,
			wantStatus: http.StatusCreated,
		},
		{name: "unknown agent", body: `{"agent":{"name":"someone-else"}}`, wantStatus: http.StatusBadRequest, wantCode: "unknown_agent"},
		{name: "unknown server tool", body: `{"agent":{"name":"agent","tools":[{"name":"rm_rf"}]}}`, wantStatus: http.StatusBadRequest, wantCode: "invalid_request"},
		{name: "undeclared option", body: `{"agent":{"name":"agent","options":{"temperature":"0.2"}}}`, wantStatus: http.StatusBadRequest, wantCode: "invalid_request"},
		{name: "select value not allowed", body: `{"agent":{"name":"agent","options":{"model":"huge"}}}`, wantStatus: http.StatusBadRequest, wantCode: "invalid_request"},
		{
			name:       "client tool named like a server tool",
			body:       `{"agent":{"name":"agent"},"tools":[{"name":"web_search","description":"mine","parameters":{"type":"object"}}]}`,
			wantStatus: http.StatusBadRequest, wantCode: "invalid_request",
		},
		{name: "client tool declared twice", body: `{"agent":{"name":"agent"},"tools":[` + weather + `,` + weather + `]}`, wantStatus: http.StatusBadRequest, wantCode: "invalid_request"},
		{name: "no agent", body: `{"messages":[]}`, wantStatus: http.StatusBadRequest, wantCode: "invalid_request"},
		{name: "no agent name", body: `{"agent":{}}`, wantStatus: http.StatusBadRequest, wantCode: "invalid_request"},
		{
			name:       "tool permission in the seed",
			body:       `{"agent":{"name":"agent"},"messages":[{"role":"tool_permission","toolCallId":"c","granted":true}]}`,
			wantStatus: http.StatusBadRequest, wantCode: "invalid_request",
		},
		{name: "malformed JSON", body: `{"agent":`, wantStatus: http.StatusBadRequest, wantCode: "invalid_json"},
	}
	sessionID := regexp.MustCompile(`^sess_[0-9a-f]{32}$`)
	created := map[string]bool{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := doRaw(t, http.MethodPost, e.URL+"/sessions", "", tt.body)
			if tt.wantCode != "" {
				requireJSONError(t, r, tt.wantStatus, tt.wantCode)
				return
			}
			require.Equal(t, http.StatusCreated, r.Status, r.Body)
			assert.Equal(t, "application/json", r.Header.Get("Content-Type"))
			var resp map[string]string
			require.NoError(t, json.Unmarshal([]byte(r.Body), &resp))
			id := resp["sessionId"]
			assert.Regexp(t, sessionID, id, "session ids are unguessable (128 random bits)")
			assert.False(t, created[id])
			created[id] = true
		})
	}
	page, err := e.Client.ListSessions(bridgetest.Context(t), "")
	require.NoError(t, err)
	assert.Len(t, page.Sessions, len(created), "rejected requests create nothing")
}

func TestListSessions(t *testing.T) {
	e := newEnv(t, demoAgent(t), func(c *aap2agui.Config) { c.PageSize = 50 })
	ctx := bridgetest.Context(t)
	var ids []string
	for range 120 {
		ids = append(ids, e.createSession(t, aap.PostSessionsRequest{}))
	}

	t.Run("three pages in creation order", func(t *testing.T) {
		var got []string
		var sizes []int
		after := ""
		for {
			page, err := e.Client.ListSessions(ctx, after)
			require.NoError(t, err)
			sizes = append(sizes, len(page.Sessions))
			for _, s := range page.Sessions {
				got = append(got, s.SessionID)
				assert.Equal(t, agentName, s.Agent.Name)
			}
			if page.Next == "" {
				break
			}
			after = page.Next
		}
		assert.Equal(t, []int{50, 50, 20}, sizes)
		assert.Equal(t, ids, got)
	})

	t.Run("next is absent on the last page", func(t *testing.T) {
		p1, err := e.Client.ListSessions(ctx, "")
		require.NoError(t, err)
		p2, err := e.Client.ListSessions(ctx, p1.Next)
		require.NoError(t, err)
		r := doRaw(t, http.MethodGet, e.URL+"/sessions?after="+p2.Next, "", "")
		require.Equal(t, http.StatusOK, r.Status)
		var raw map[string]json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(r.Body), &raw))
		assert.NotContains(t, raw, "next")
	})

	t.Run("the order is stable and cursors survive deletions", func(t *testing.T) {
		p1, err := e.Client.ListSessions(ctx, "")
		require.NoError(t, err)
		again, err := e.Client.ListSessions(ctx, "")
		require.NoError(t, err)
		assert.Equal(t, p1, again)
		// Deleting the session the cursor points after does not move the
		// next page.
		require.NoError(t, e.Client.DeleteSession(ctx, ids[49]))
		p2, err := e.Client.ListSessions(ctx, p1.Next)
		require.NoError(t, err)
		require.NotEmpty(t, p2.Sessions)
		assert.Equal(t, ids[50], p2.Sessions[0].SessionID)
	})

	t.Run("the client iterator sees every session", func(t *testing.T) {
		n := 0
		for _, err := range e.Client.Sessions(ctx) {
			require.NoError(t, err)
			n++
		}
		assert.Equal(t, 119, n)
	})

	for _, tt := range []struct{ name, cursor string }{
		{"not base64", "!!!"},
		{"not a cursor", base64.RawURLEncoding.EncodeToString([]byte("hello"))},
		{"negative", base64.RawURLEncoding.EncodeToString([]byte("after:-5"))},
		{"not a number", base64.RawURLEncoding.EncodeToString([]byte("after:x"))},
	} {
		t.Run("bad cursor: "+tt.name, func(t *testing.T) {
			requireJSONError(t, doRaw(t, http.MethodGet, e.URL+"/sessions?after="+url.QueryEscape(tt.cursor), "", ""), http.StatusBadRequest, "invalid_cursor")
		})
	}
}

// TestSecretOptions checks that secret option values never come back
// from the API, while the agent gets them.
func TestSecretOptions(t *testing.T) {
	up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, _ int) {
		sseEvents(w, textRun(in, "m", "ok")...)
	})
	e := newEnv(t, up.URL)
	id := e.createSession(t, aap.PostSessionsRequest{Agent: aap.AgentConfig{Options: map[string]string{"api_key": "sk-first-secret", "language": "German"}}})

	check := func(t *testing.T, secret string) {
		t.Helper()
		want := `{"sessionId":"` + id + `","agent":{"name":"agent","options":{"api_key":"***","language":"German"}}}`
		r := doRaw(t, http.MethodGet, e.URL+"/sessions/"+id, "", "")
		require.Equal(t, http.StatusOK, r.Status)
		assert.JSONEq(t, want, r.Body)
		list := doRaw(t, http.MethodGet, e.URL+"/sessions", "", "")
		require.Equal(t, http.StatusOK, list.Status)
		assert.JSONEq(t, `{"sessions":[`+want+`]}`, list.Body)
		assert.NotContains(t, r.Body+list.Body, secret)
	}
	t.Run("after create", func(t *testing.T) { check(t, "sk-first-secret") })
	t.Run("after an override", func(t *testing.T) {
		req := userTurn(aap.StreamNone, "hi")
		req.Agent = &aap.AgentConfig{Options: map[string]string{"api_key": "sk-second-secret"}}
		_, err := e.Client.Turn(bridgetest.Context(t), id, &req)
		require.NoError(t, err)
		check(t, "sk-second-secret")
		assert.Contains(t, string(up.input(t, 0).Raw["forwardedProps"]), `"api_key":"sk-second-secret"`)
	})
}

func TestDeleteSession(t *testing.T) {
	e := newEnv(t, demoAgent(t))
	id := e.createSession(t, aap.PostSessionsRequest{})
	other := e.createSession(t, aap.PostSessionsRequest{})
	_, err := e.Client.Turn(bridgetest.Context(t), id, &aap.PostSessionTurnRequest{Messages: []aap.Message{aap.UserText("hello")}})
	require.NoError(t, err)

	r := doRaw(t, http.MethodDelete, e.URL+"/sessions/"+id, "", "")
	assert.Equal(t, http.StatusNoContent, r.Status)
	assert.Empty(t, r.Body)

	turn := `{"messages":[{"role":"user","content":"hi"}]}`
	for _, tt := range []struct{ name, method, path, body string }{
		{"GET", http.MethodGet, "/sessions/" + id, ""},
		{"DELETE", http.MethodDelete, "/sessions/" + id, ""},
		{"turns", http.MethodPost, "/sessions/" + id + "/turns", turn},
		{"history", http.MethodGet, "/sessions/" + id + "/history?type=full", ""},
	} {
		t.Run(tt.name+" after delete", func(t *testing.T) {
			requireJSONError(t, doRaw(t, tt.method, e.URL+tt.path, "", tt.body), http.StatusNotFound, "session_not_found")
		})
	}
	page, err := e.Client.ListSessions(bridgetest.Context(t), "")
	require.NoError(t, err)
	require.Len(t, page.Sessions, 1)
	assert.Equal(t, other, page.Sessions[0].SessionID)
}

func TestHistoryEndpoint(t *testing.T) {
	e := newEnv(t, demoAgent(t))
	fullOnly := newEnv(t, demoAgent(t), func(c *aap2agui.Config) {
		c.Agent.Capabilities = &aap.Capabilities{
			History: &aap.HistoryCapabilities{Full: &aap.Empty{}},
			Stream:  &aap.StreamCapabilities{Delta: &aap.Empty{}, None: &aap.Empty{}},
		}
	})
	id := e.createSession(t, aap.PostSessionsRequest{Messages: []aap.Message{&aap.SystemMessage{Content: "Be brief."}}})
	_, err := e.Client.Turn(bridgetest.Context(t), id, &aap.PostSessionTurnRequest{Messages: []aap.Message{aap.UserText("hello")}})
	require.NoError(t, err)
	empty := e.createSession(t, aap.PostSessionsRequest{})
	fullOnlyID := fullOnly.createSession(t, aap.PostSessionsRequest{})
	msgs := `[{"role":"system","content":"Be brief."},{"role":"user","content":"hello"},{"role":"assistant","content":"You said: hello"}]`

	tests := []struct {
		name       string
		url        string
		wantStatus int
		want       string // the body, or the error code
	}{
		{"full", e.URL + "/sessions/" + id + "/history?type=full", 200, `{"history":{"full":` + msgs + `}}`},
		{"compacted", e.URL + "/sessions/" + id + "/history?type=compacted", 200, `{"history":{"compacted":` + msgs + `}}`},
		{"empty history", e.URL + "/sessions/" + empty + "/history?type=full", 200, `{"history":{"full":[]}}`},
		{"missing type", e.URL + "/sessions/" + id + "/history", 400, "invalid_request"},
		{"empty type", e.URL + "/sessions/" + id + "/history?type=", 400, "invalid_request"},
		{"invalid type", e.URL + "/sessions/" + id + "/history?type=partial", 400, "invalid_request"},
		{"unknown session", e.URL + "/sessions/sess_nope/history?type=full", 404, "session_not_found"},
		{"undeclared type", fullOnly.URL + "/sessions/" + fullOnlyID + "/history?type=compacted", 404, "history_type_not_supported"},
		{"declared type", fullOnly.URL + "/sessions/" + fullOnlyID + "/history?type=full", 200, `{"history":{"full":[]}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := doRaw(t, http.MethodGet, tt.url, "", "")
			if tt.wantStatus != http.StatusOK {
				requireJSONError(t, r, tt.wantStatus, tt.want)
				return
			}
			require.Equal(t, http.StatusOK, r.Status, r.Body)
			assert.JSONEq(t, tt.want, r.Body)
		})
	}
}

func TestBasePath(t *testing.T) {
	for _, base := range []string{"/v1", "/v1/"} {
		t.Run(base, func(t *testing.T) {
			e := newEnv(t, demoAgent(t), func(c *aap2agui.Config) { c.BasePath = base })
			require.True(t, strings.HasSuffix(e.URL, "/v1"))
			ctx := bridgetest.Context(t)
			meta, err := e.Client.Meta(ctx)
			require.NoError(t, err)
			assert.Equal(t, aap.Version, meta.Version)
			id := e.createSession(t, aap.PostSessionsRequest{})
			evs, err := e.stream(t, id, userTurn(aap.StreamDelta, "hi"))
			require.NoError(t, err)
			assert.Equal(t, eventsOf(t, aap.StreamDelta, []part{say("You said: hi")}, aap.StopEndTurn), eventLines(t, evs))
			_, err = e.Client.GetSession(ctx, id)
			require.NoError(t, err)

			requireJSONError(t, doRaw(t, http.MethodGet, e.Root+"/meta", "", ""), http.StatusNotFound, "not_found")
			requireJSONError(t, doRaw(t, http.MethodGet, e.Root+"/sessions/"+id, "", ""), http.StatusNotFound, "not_found")
		})
	}
}

func TestRouting(t *testing.T) {
	e := newEnv(t, demoAgent(t))
	tests := []struct {
		name, method, path string
		wantStatus         int
		wantCode           string
	}{
		{"unknown route", http.MethodGet, "/nothing/here", http.StatusNotFound, "not_found"},
		{"unknown sub-resource", http.MethodGet, "/sessions/x/y/z", http.StatusNotFound, "not_found"},
		{"PUT /sessions", http.MethodPut, "/sessions", http.StatusMethodNotAllowed, "method_not_allowed"},
		{"PATCH /sessions/:id", http.MethodPatch, "/sessions/x", http.StatusMethodNotAllowed, "method_not_allowed"},
		{"GET /sessions/:id/turns", http.MethodGet, "/sessions/x/turns", http.StatusMethodNotAllowed, "method_not_allowed"},
		{"DELETE /meta", http.MethodDelete, "/meta", http.StatusMethodNotAllowed, "method_not_allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			requireJSONError(t, doRaw(t, tt.method, e.URL+tt.path, "", ""), tt.wantStatus, tt.wantCode)
		})
	}
}
