package aap2agui_test

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/internal/userid"
)

// TestIDsReadAsTheyShow: a user header holding a character that shows as
// nothing or reorders the text (zero-width, bidi, a soft hyphen, a Hangul
// filler) or U+FFFD is a 400 invalid_user naming the code point, when a
// session is made and on a turn, before anything is stored or sent to the
// agent; a session id in the path holding one is a 400
// invalid_session_id.
func TestIDsReadAsTheyShow(t *testing.T) {
	const key = "" // an open bridge: the owner is the user's scope alone
	var runs atomic.Int64
	agent := serve(t, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { runs.Add(1) }))
	e := newEnv(t, agent, func(c *aap2agui.Config) { c.Users.Header = userHeader })
	ctx := bridgetest.Context(t)
	created, err := userClient(e.URL, key, "alice").CreateSession(ctx, &aap.PostSessionsRequest{Agent: aap.AgentConfig{Name: agentName}})
	require.NoError(t, err)
	bad := map[string]string{
		"zero width space":       "al\u200bice",
		"zero width joiner":      "al\u200dice",
		"right-to-left override": "\u202eecila",
		"right-to-left mark":     "alice\u200f",
		"soft hyphen":            "al\u00adice",
		"Hangul filler":          "alice\u3164",
		"replacement character":  "alice\ufffd",
	}
	for name, user := range bad {
		for what, r := range map[string]rawResponse{
			"new session": doAs(t, http.MethodPost, e.URL+"/sessions", key, user, `{"agent":{"name":"agent"}}`),
			"turn":        doAs(t, http.MethodPost, e.URL+"/sessions/"+created.SessionID+"/turns", key, user, `{"messages":[{"role":"user","content":"hi"}]}`),
		} {
			requireJSONError(t, r, http.StatusBadRequest, "invalid_user")
			assert.Contains(t, r.Body, "U+", "%s, %s: the message names the character", name, what)
			assert.NotContains(t, r.Body, "lice", "%s, %s: the message never holds the user", name, what)
		}
		list, err := e.Store.ListSessions(ctx, userid.Scope("", user), 0, 10)
		require.NoError(t, err)
		assert.Empty(t, list, "%s: no session stored", name)
	}
	r := doAs(t, http.MethodPost, e.URL+"/sessions/sess_\u200b"+created.SessionID[5:]+"/turns", key, "alice", `{"messages":[{"role":"user","content":"hi"}]}`)
	requireJSONError(t, r, http.StatusBadRequest, "invalid_session_id")
	assert.Zero(t, runs.Load(), "the agent got no run")
}
