package aap2agui_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
)

// TestAPIKeys checks per-key isolation (a session is visible only to the
// key that created it: another key gets 404, as if it did not exist),
// 401 with a JSON body for a missing or wrong key, and that neither keys
// nor secret option values ever reach the log.
func TestAPIKeys(t *testing.T) {
	const (
		keyA   = "key-alpha-7f3a91c2"
		keyB   = "key-bravo-0d5be8e4"
		secret = "sk-option-secret-55e1"
	)
	var logs bridgetest.SyncBuffer
	e := newEnv(t, demoAgent(t), func(c *aap2agui.Config) {
		c.APIKeys = []string{keyA, keyB}
		c.Logger = zerolog.New(&logs).Level(zerolog.DebugLevel)
	})
	a := aap.NewClient(e.URL, aap.ClientOptions{APIKey: keyA})
	b := aap.NewClient(e.URL, aap.ClientOptions{APIKey: keyB})
	ctx := bridgetest.Context(t)

	created, err := a.CreateSession(ctx, &aap.PostSessionsRequest{Agent: aap.AgentConfig{Name: agentName, Options: map[string]string{"api_key": secret}}})
	require.NoError(t, err)
	id := created.SessionID
	_, err = a.Turn(ctx, id, &aap.PostSessionTurnRequest{Messages: []aap.Message{aap.UserText("hello")}})
	require.NoError(t, err)
	before := e.history(t, id, aap.HistoryFull)
	require.Len(t, before, 2)

	turn := `{"messages":[{"role":"user","content":"hi"}]}`
	endpoints := []struct{ name, method, path, body string }{
		{"GET /sessions/:id", http.MethodGet, "/sessions/" + id, ""},
		{"GET /sessions/:id/history", http.MethodGet, "/sessions/" + id + "/history?type=full", ""},
		{"POST /sessions/:id/turns", http.MethodPost, "/sessions/" + id + "/turns", turn},
		{"POST /sessions/:id/turns (stream)", http.MethodPost, "/sessions/" + id + "/turns", `{"stream":"delta","messages":[{"role":"user","content":"hi"}]}`},
		{"DELETE /sessions/:id", http.MethodDelete, "/sessions/" + id, ""},
	}
	for _, ep := range endpoints {
		t.Run("another key: "+ep.name, func(t *testing.T) {
			requireJSONError(t, doRaw(t, ep.method, e.URL+ep.path, keyB, ep.body), http.StatusNotFound, "session_not_found")
		})
	}
	t.Run("another key lists nothing", func(t *testing.T) {
		page, err := b.ListSessions(ctx, "")
		require.NoError(t, err)
		assert.Empty(t, page.Sessions)
	})
	t.Run("the owner still has it, unchanged", func(t *testing.T) {
		page, err := a.ListSessions(ctx, "")
		require.NoError(t, err)
		require.Len(t, page.Sessions, 1)
		assert.Equal(t, id, page.Sessions[0].SessionID)
		msgs, err := a.History(ctx, id, aap.HistoryFull)
		require.NoError(t, err)
		assert.Equal(t, before, messageLines(t, msgs))
	})

	all := append(endpoints,
		struct{ name, method, path, body string }{"GET /meta", http.MethodGet, "/meta", ""},
		struct{ name, method, path, body string }{"GET /sessions", http.MethodGet, "/sessions", ""},
		struct{ name, method, path, body string }{"POST /sessions", http.MethodPost, "/sessions", `{"agent":{"name":"agent"}}`},
	)
	for _, auth := range []struct{ name, header string }{
		{"no Authorization", ""},
		{"a wrong key", "Bearer not-a-key"},
		{"a key differing in case", "Bearer " + strings.ToUpper(keyA)},
		{"an empty bearer", "Bearer "},
		{"another scheme", "Basic " + keyA},
		{"the key without a scheme", keyA},
	} {
		for _, ep := range all {
			t.Run(auth.name+": "+ep.name, func(t *testing.T) {
				req, err := http.NewRequestWithContext(ctx, ep.method, e.URL+ep.path, strings.NewReader(ep.body))
				require.NoError(t, err)
				if auth.header != "" {
					req.Header.Set("Authorization", auth.header)
				}
				resp, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				body := readAll(t, resp)
				requireJSONError(t, rawResponse{Status: resp.StatusCode, Header: resp.Header, Body: body}, http.StatusUnauthorized, "unauthorized")
				assert.Contains(t, resp.Header.Get("WWW-Authenticate"), "Bearer")
			})
		}
	}

	t.Run("the log holds no key and no secret", func(t *testing.T) {
		out := logs.String()
		require.Contains(t, out, `"status":401`, "the requests were logged")
		require.Contains(t, out, `"status":404`)
		for _, s := range []string{keyA, keyB, strings.ToUpper(keyA), secret} {
			assert.NotContains(t, out, s)
		}
	})
}
