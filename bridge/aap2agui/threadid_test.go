package aap2agui_test

import (
	"fmt"
	"net/http"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/store"
)

var uuidPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// TestThreadIDDerivation pins the documented rule: the version 5 UUID of
// the session id in the namespace 57ea9622-…, the same value Python's
// uuid.uuid5 gives.
func TestThreadIDDerivation(t *testing.T) {
	assert.Equal(t, "57ea9622-128f-5e78-8f1c-9ce22bb36e39", aap2agui.ThreadNamespace.String())
	assert.Equal(t, "6af91c63-8266-52b1-a41a-28b2f984b93d", aap2agui.ThreadID("sess_0123456789abcdef0123456789abcdef"))
	a, b := aap2agui.ThreadID("sess_a"), aap2agui.ThreadID("sess_b")
	assert.Regexp(t, uuidPattern, a)
	assert.NotEqual(t, a, b)
	assert.Equal(t, a, aap2agui.ThreadID("sess_a"), "stable")

	for _, s := range []string{"", "uuid", "session"} {
		_, err := aap2agui.ParseThreadIDs(s)
		assert.NoError(t, err, s)
	}
	_, err := aap2agui.ParseThreadIDs("raw")
	assert.ErrorContains(t, err, `"uuid"`)
	_, err = aap2agui.New(aap2agui.Config{Upstream: "http://127.0.0.1:1", Store: store.NewMemory(), ThreadIDs: "raw"})
	assert.ErrorContains(t, err, "Config.ThreadIDs")
}

// TestThreadIDs checks the threadId of every run of a session: by default
// the UUID derived from the session id on every turn; with
// ThreadIDsSession the session id itself.
func TestThreadIDs(t *testing.T) {
	for _, mode := range []aap2agui.ThreadIDs{"", aap2agui.ThreadIDsUUID, aap2agui.ThreadIDsSession} {
		t.Run(string(mode), func(t *testing.T) {
			up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
				sseEvents(w, textRun(in, fmt.Sprintf("up-m%d", n), "reply")...)
			})
			e := newEnv(t, up.URL, func(c *aap2agui.Config) { c.ThreadIDs = mode })
			id := e.createSession(t, aap.PostSessionsRequest{})
			want := aap2agui.ThreadID(id)
			if mode == aap2agui.ThreadIDsSession {
				want = id
			} else {
				require.Regexp(t, uuidPattern, want)
			}
			for n := range 2 {
				_, err := e.Client.Turn(bridgetest.Context(t), id, &aap.PostSessionTurnRequest{Messages: []aap.Message{aap.UserText("hi")}})
				require.NoError(t, err)
				assert.Equal(t, want, up.input(t, n).ThreadID, "run %d", n)
			}
		})
	}
}

// TestThreadIDOfStoredSession: a session stored by a server that sent the
// session id (an earlier release) gets the derived UUID from a server
// with the default rule, on the same store.
func TestThreadIDOfStoredSession(t *testing.T) {
	up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
		sseEvents(w, textRun(in, fmt.Sprintf("up-m%d", n), "reply")...)
	})
	old := newEnv(t, up.URL, func(c *aap2agui.Config) { c.ThreadIDs = aap2agui.ThreadIDsSession })
	id := old.createSession(t, aap.PostSessionsRequest{})
	_, err := old.Client.Turn(bridgetest.Context(t), id, &aap.PostSessionTurnRequest{Messages: []aap.Message{aap.UserText("hi")}})
	require.NoError(t, err)
	assert.Equal(t, id, up.input(t, 0).ThreadID)

	e := newEnv(t, up.URL, func(c *aap2agui.Config) { c.Store = old.Store })
	_, err = e.Client.Turn(bridgetest.Context(t), id, &aap.PostSessionTurnRequest{Messages: []aap.Message{aap.UserText("again")}})
	require.NoError(t, err)
	assert.Equal(t, aap2agui.ThreadID(id), up.input(t, 1).ThreadID)
	assert.Len(t, up.input(t, 1).Messages, 3, "the same session, its history included")
}
