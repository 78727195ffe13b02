package aap2agui_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/store"
)

// userHeader is the header the tests' trusted caller names its user in.
const userHeader = "X-User-Id"

// asUser is a transport that names a user on every request, as an
// application server in front of the bridge does.
type asUser struct{ user string }

func (u asUser) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(userHeader, u.user)
	return http.DefaultTransport.RoundTrip(r)
}

func userClient(url, key, user string) *aap.Client {
	return aap.NewClient(url, aap.ClientOptions{APIKey: key, HTTPClient: &http.Client{Transport: asUser{user}}})
}

// doAs is do with the user header (none for "").
func doAs(t *testing.T, method, url, key, user, body string) rawResponse {
	t.Helper()
	req, err := http.NewRequestWithContext(bridgetest.Context(t), method, url, strings.NewReader(body))
	require.NoError(t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if user != "" {
		req.Header.Set(userHeader, user)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	return rawResponse{Status: resp.StatusCode, Header: resp.Header, Body: readAll(t, resp)}
}

// TestUsersUnderOneKey: with --user-header, two users of one API key
// never see each other's sessions, on every route of every version and
// every store: another user's session answers exactly as an unknown one,
// and the user header is required where sessions are touched.
func TestUsersUnderOneKey(t *testing.T) {
	bridgetest.OnEachStore(t, testUsersUnderOneKey)
}

func testUsersUnderOneKey(t *testing.T, st store.Store) {
	const (
		key   = "key-shared-6c1d0e"
		alice = "user-alice-5e02a1"
		bob   = "user-bob-77b93c"
	)
	var logs bridgetest.SyncBuffer
	e := newEnv(t, demoAgent(t), allVersions, func(c *aap2agui.Config) {
		c.APIKeys = []string{key}
		c.Users.Header = userHeader
		c.Store = st
		c.Limits.SessionsPerKey = 2
		c.Logger = zerolog.New(&logs).Level(zerolog.DebugLevel)
	})
	ctx := bridgetest.Context(t)
	a, b := userClient(e.URL, key, alice), userClient(e.URL, key, bob)
	created, err := a.CreateSession(ctx, &aap.PostSessionsRequest{Agent: aap.AgentConfig{Name: agentName}})
	require.NoError(t, err)
	id := created.SessionID
	_, err = a.Turn(ctx, id, &aap.PostSessionTurnRequest{Messages: []aap.Message{aap.UserText("my secret is alice-1234")}})
	require.NoError(t, err)
	msgs, err := a.History(ctx, id, aap.HistoryFull)
	require.NoError(t, err)
	before := messageLines(t, msgs)
	require.Len(t, before, 2)
	unknown := "sess_" + strings.Repeat("0", 32)

	turn := `{"messages":[{"role":"user","content":"hi"}]}`
	routes := []struct{ name, method, path, body string }{
		{"GET /sessions/:id", http.MethodGet, "/sessions/%s", ""},
		{"GET /sessions/:id/history", http.MethodGet, "/sessions/%s/history?type=full", ""},
		{"POST /sessions/:id/turns", http.MethodPost, "/sessions/%s/turns", turn},
		{"POST /sessions/:id/turns (stream)", http.MethodPost, "/sessions/%s/turns", `{"stream":"delta","messages":[{"role":"user","content":"hi"}]}`},
		{"v1 GET /session/:id", http.MethodGet, "/v1/session/%s", ""},
		{"v1 POST /session/:id", http.MethodPost, "/v1/session/%s", turn},
		{"v2 GET /session/:id/history", http.MethodGet, "/v2/session/%s/history?type=full", ""},
		{"v2 DELETE /session/:id", http.MethodDelete, "/v2/session/%s", ""},
		{"DELETE /sessions/:id", http.MethodDelete, "/sessions/%s", ""},
	}
	for _, r := range routes {
		t.Run("another user: "+r.name, func(t *testing.T) {
			theirs := doAs(t, r.method, e.Root+strings.ReplaceAll(r.path, "%s", id), key, bob, r.body)
			none := doAs(t, r.method, e.Root+strings.ReplaceAll(r.path, "%s", unknown), key, bob, r.body)
			requireJSONError(t, theirs, http.StatusNotFound, "session_not_found")
			assert.Equal(t, none.Body, strings.ReplaceAll(theirs.Body, id, unknown), "answered as an unknown session")
		})
		t.Run("no user: "+r.name, func(t *testing.T) {
			got := doAs(t, r.method, e.Root+strings.ReplaceAll(r.path, "%s", id), key, "", r.body)
			requireJSONError(t, got, http.StatusBadRequest, "user_required")
			assert.Contains(t, got.Body, userHeader, "the error names the header")
		})
	}
	for _, path := range []string{"/sessions", "/v1/sessions", "/v2/sessions"} {
		t.Run("another user lists nothing: "+path, func(t *testing.T) {
			got := doAs(t, http.MethodGet, e.Root+path, key, bob, "")
			require.Equal(t, http.StatusOK, got.Status, got.Body)
			assert.NotContains(t, got.Body, id)
		})
	}
	t.Run("creating needs a user", func(t *testing.T) {
		requireJSONError(t, doAs(t, http.MethodPost, e.URL+"/sessions", key, "", `{"agent":{"name":"agent"}}`), http.StatusBadRequest, "user_required")
		requireJSONError(t, doAs(t, http.MethodPost, e.URL+"/sessions", key, strings.Repeat("u", 300), `{"agent":{"name":"agent"}}`), http.StatusBadRequest, "invalid_user")
	})
	t.Run("meta needs no user", func(t *testing.T) {
		assert.Equal(t, http.StatusOK, doAs(t, http.MethodGet, e.URL+"/meta", key, "", "").Status)
	})
	t.Run("the session limit is per user", func(t *testing.T) {
		for range 2 {
			_, err := b.CreateSession(ctx, &aap.PostSessionsRequest{Agent: aap.AgentConfig{Name: agentName}})
			require.NoError(t, err, "alice's session does not count against bob")
		}
		_, err := b.CreateSession(ctx, &aap.PostSessionsRequest{Agent: aap.AgentConfig{Name: agentName}})
		requireHTTPError(t, err, http.StatusTooManyRequests, "too_many_sessions")
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
	t.Run("the log holds no user id", func(t *testing.T) {
		bridgetest.NoUserLogged(t, logs.String(), alice, bob, key)
	})
}

// TestUserTokens: with --user-jwt the user is the subject of a token
// signed by a key made here; the token is the credential (no API key),
// and an expired token, one for another audience or one signed by
// another key is a 401.
func TestUserTokens(t *testing.T) {
	secret := []byte("a-test-signing-secret-of-40-bytes-00000")
	file := filepath.Join(t.TempDir(), "jwt.key")
	require.NoError(t, os.WriteFile(file, append([]byte("hs256:"), secret...), 0o600))
	e := newEnv(t, demoAgent(t), func(c *aap2agui.Config) {
		c.Users.JWTKeyFile, c.Users.JWTAudience = file, "aap-bridge"
	})
	token := func(sub, aud string, exp time.Duration, key []byte) string {
		return bridgetest.Token(t, key, sub, aud, exp)
	}
	ctx := bridgetest.Context(t)
	alice := aap.NewClient(e.URL, aap.ClientOptions{APIKey: token("alice", "aap-bridge", time.Hour, secret)})
	bob := aap.NewClient(e.URL, aap.ClientOptions{APIKey: token("bob", "aap-bridge", time.Hour, secret)})
	created, err := alice.CreateSession(ctx, &aap.PostSessionsRequest{Agent: aap.AgentConfig{Name: agentName}})
	require.NoError(t, err)
	_, err = bob.GetSession(ctx, created.SessionID)
	requireHTTPError(t, err, http.StatusNotFound, "session_not_found")
	page, err := bob.ListSessions(ctx, "")
	require.NoError(t, err)
	assert.Empty(t, page.Sessions)
	_, err = alice.GetSession(ctx, created.SessionID)
	require.NoError(t, err)

	for name, tok := range map[string]string{
		"expired":        token("alice", "aap-bridge", -time.Hour, secret),
		"wrong audience": token("alice", "another-service", time.Hour, secret),
		"wrong key":      token("alice", "aap-bridge", time.Hour, []byte("another-signing-secret-of-40-bytes-0000")),
		"none":           "",
	} {
		t.Run(name, func(t *testing.T) {
			for _, path := range []string{"/sessions", "/sessions/" + created.SessionID, "/meta"} {
				r := doRaw(t, http.MethodGet, e.URL+path, tok, "")
				requireJSONError(t, r, http.StatusUnauthorized, "unauthorized")
				assert.Contains(t, r.Header.Get("WWW-Authenticate"), "Bearer")
			}
		})
	}
}
