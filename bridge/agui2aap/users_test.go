package agui2aap_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/bridge/agui2aap"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/store"
)

// TestUsersUnderOneKey: with --user-header, the users of one API key (a
// CopilotKit runtime holding the key for all its users) never see each
// other's threads, on every route and store: listing, hydration, runs and
// delete answer another user's thread exactly as an unknown one.
func TestUsersUnderOneKey(t *testing.T) {
	bridgetest.OnEachStore(t, testUsersUnderOneKey)
}

func testUsersUnderOneKey(t *testing.T, st store.Store) {
	const (
		key    = "key-runtime-2b7f"
		header = "X-User-Id"
		alice  = "user-alice-5e02a1"
		bob    = "user-bob-77b93c"
	)
	var logs bridgetest.SyncBuffer
	e := newEnv(t, func(c *agui2aap.Config) {
		c.APIKeys = []string{key}
		c.Users.Header = header
		c.Store = st
		c.Limits.ThreadsPerKey = 2
		c.Logger = zerolog.New(&logs).Level(zerolog.DebugLevel)
	})
	as := func(user string) []string { return []string{"Authorization", "Bearer " + key, header, user} }
	a := e.conv("t-alice")
	a.Headers = as(alice)
	a.say("my secret is alice-1234")
	a.run(t)
	b := e.conv("t-bob")
	b.Headers = as(bob)
	b.say("hello from bob")
	b.run(t)

	list := func(user string) string {
		r := e.get(t, "/agents/demo/threads", as(user)...)
		require.Equal(t, http.StatusOK, r.Status, r.Body)
		return r.Body
	}
	t.Run("each lists only their own", func(t *testing.T) {
		mine, theirs := list(bob), list(alice)
		assert.Contains(t, mine, "t-bob")
		assert.NotContains(t, mine, "t-alice")
		assert.NotContains(t, mine, "alice-1234", "nor the title")
		assert.Contains(t, theirs, "t-alice")
		assert.NotContains(t, theirs, "t-bob")
	})
	t.Run("hydrating another's thread is empty", func(t *testing.T) {
		msgs, _ := e.conv("t-alice").hydrate(t, as(bob)...)
		assert.Empty(t, msgs)
	})
	t.Run("deleting another's thread is not found, as an unknown one", func(t *testing.T) {
		theirs := e.deleteAs(t, "t-alice", as(bob))
		unknown := e.deleteAs(t, "t-nobody", as(bob))
		assert.Equal(t, http.StatusNotFound, theirs.Status, theirs.Body)
		assert.Equal(t, "thread_not_found", theirs.errorCode())
		assert.Equal(t, unknown.Body, strings.ReplaceAll(theirs.Body, "t-alice", "t-nobody"))
	})
	t.Run("the same thread id is a thread of one's own", func(t *testing.T) {
		c := e.conv("t-alice")
		c.Headers = as(bob)
		c.say("bob on alice's thread id")
		r := c.run(t)
		assert.NotContains(t, r.lastText(), "alice-1234")
	})
	t.Run("the owner still has it, unchanged", func(t *testing.T) {
		msgs, _ := e.conv("t-alice").hydrate(t, as(alice)...)
		assert.Equal(t, conversational(t, a.Messages), conversational(t, msgs))
	})
	t.Run("the thread limit is per user", func(t *testing.T) {
		c := e.conv("t-bob-3")
		c.Headers = as(bob)
		c.say("a third thread")
		r := e.post(t, "/agents/demo", c.input("", nil), c.Headers...)
		requireTooMany(t, r, "too_many_threads")
		d := e.conv("t-alice-2")
		d.Headers = as(alice)
		d.say("alice's second")
		d.run(t)
	})
	t.Run("a user is required where threads are touched", func(t *testing.T) {
		noUser := []string{"Authorization", "Bearer " + key}
		c := e.conv("t-alice")
		c.say("who am I")
		for name, r := range map[string]*response{
			"run":     e.post(t, "/agents/demo", c.input("", nil), noUser...),
			"hydrate": e.post(t, "/agents/demo", types.RunAgentInput{ThreadID: "t-alice", RunID: "r"}, noUser...),
			"list":    e.get(t, "/agents/demo/threads", noUser...),
			"delete":  e.deleteAs(t, "t-alice", noUser),
		} {
			assert.Equal(t, http.StatusBadRequest, r.Status, name)
			assert.Equal(t, "user_required", r.errorCode(), name)
			assert.Contains(t, r.errorMessage(), header, name)
		}
		assert.Equal(t, http.StatusOK, e.get(t, "/agents", noUser...).Status, "discovery needs no user")
	})
	t.Run("the log holds no user id", func(t *testing.T) {
		bridgetest.NoUserLogged(t, logs.String(), alice, bob, key)
	})
}

func (e *env) deleteAs(t *testing.T, id string, headers []string) *response {
	t.Helper()
	req, err := http.NewRequestWithContext(bridgetest.Context(t), http.MethodDelete, e.URL+"/agents/demo/threads/"+id, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return do(t, req)
}

// TestUserTokens: with --user-jwt the user is the subject of a token in
// a header of its own beside the API key, signed by a key made here; an
// expired token, one for another audience or one signed by another key
// is a 401 on every route.
func TestUserTokens(t *testing.T) {
	secret := []byte("a-test-signing-secret-of-40-bytes-00000")
	file := filepath.Join(t.TempDir(), "jwt.key")
	require.NoError(t, os.WriteFile(file, append([]byte("hs256:"), secret...), 0o600))
	e := newEnv(t, func(c *agui2aap.Config) {
		c.APIKeys = []string{"key-a"}
		c.Users.JWTKeyFile, c.Users.JWTHeader, c.Users.JWTAudience = file, "X-User-Token", "agui-bridge"
	})
	token := func(sub, aud string, exp time.Duration, key []byte) []string {
		return []string{"Authorization", "Bearer key-a", "X-User-Token", "Bearer " + bridgetest.Token(t, key, sub, aud, exp)}
	}
	a := e.conv("t-1")
	a.Headers = token("alice", "agui-bridge", time.Hour, secret)
	a.say("alice's thread")
	a.run(t)
	msgs, _ := e.conv("t-1").hydrate(t, token("bob", "agui-bridge", time.Hour, secret)...)
	assert.Empty(t, msgs, "bob's token does not reach alice's thread")
	msgs, _ = e.conv("t-1").hydrate(t, token("alice", "agui-bridge", time.Hour, secret)...)
	assert.Len(t, msgs, 2)

	for name, h := range map[string][]string{
		"expired":        token("alice", "agui-bridge", -time.Hour, secret),
		"wrong audience": token("alice", "another-service", time.Hour, secret),
		"wrong key":      token("alice", "agui-bridge", time.Hour, []byte("another-signing-secret-of-40-bytes-0000")),
		"none":           {"Authorization", "Bearer key-a"},
	} {
		t.Run(name, func(t *testing.T) {
			for _, r := range []*response{
				e.post(t, "/agents/demo", a.input("", nil), h...),
				e.get(t, "/agents/demo/threads", h...),
				e.get(t, "/agents", h...),
			} {
				assert.Equal(t, http.StatusUnauthorized, r.Status, r.Body)
				assert.Equal(t, "unauthorized", r.errorCode())
				assert.Contains(t, r.Header.Get("WWW-Authenticate"), "Bearer")
			}
		})
	}
}
