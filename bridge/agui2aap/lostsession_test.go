package agui2aap_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/demo"
)

// restartable is the AAP demo agent at one URL whose process can be
// restarted: restart replaces it with a new one that has no sessions, as
// an in-memory AAP server has after a restart.
type restartable struct {
	agent atomic.Pointer[demo.AAPAgent]
}

func newRestartable(t testing.TB) (*restartable, string) {
	t.Helper()
	r := &restartable{}
	r.restart()
	s := httptest.NewServer(r)
	t.Cleanup(s.Close)
	return r, s.URL
}

func (r *restartable) restart() { r.agent.Store(demo.NewAAPAgent(demo.AAPAgentOptions{})) }

func (r *restartable) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.agent.Load().ServeHTTP(w, req)
}

// An AAP server that lost the thread's session (restarted in-memory
// server, expiry, deletion) answers the next turn with 404: the thread
// moves to a new session seeded with the client's history, and the run
// succeeds with the conversation's context — whatever the thread was
// waiting for.
func TestUpstreamLostSession(t *testing.T) {
	t.Run("between two messages", func(t *testing.T) {
		up, url := newRestartable(t)
		e := newBridge(t, url)
		c := e.conv("lost")
		c.say("hello there")
		c.run(t)
		old := e.thread(t, "lost").SessionID
		up.restart()

		c.say("are you still there?")
		r := c.run(t)
		require.Nil(t, r.Error, "the run fails: %s", r.Body)
		assert.Equal(t, []string{demo.EchoText("are you still there?")}, r.Text)
		assert.Equal(t, "success", r.outcome())
		id := e.onlySession(t)
		assert.NotEqual(t, old, id)
		assert.Equal(t, id, e.thread(t, "lost").SessionID)
		hist := e.history(t, id)
		assert.Equal(t, []string{"hello there", "are you still there?"}, userTexts(hist), "the new session has the conversation's context")
		assert.Equal(t, []string{"user", "assistant", "user", "assistant"}, roles(hist))

		// The thread goes on in the new session.
		c.say("and again")
		r = c.run(t)
		assert.Equal(t, []string{demo.EchoText("and again")}, r.Text)
		assert.Equal(t, id, e.onlySession(t))
		assert.Len(t, e.history(t, id), 6)
	})

	t.Run("while a permission is asked", func(t *testing.T) {
		up, url := newRestartable(t)
		e := newBridge(t, url)
		c := e.conv("lost-perm")
		c.say("search dogs")
		r := c.run(t)
		require.Len(t, r.interrupts(), 1)
		up.restart()

		r = c.run(t, approve(r.interrupts()[0].ID))
		require.Nil(t, r.Error, "the run fails: %s", r.Body)
		result := demo.SearchResult("dogs")
		assert.Equal(t, []string{demo.SearchAnswer(result)}, r.Text)
		hist := e.history(t, e.onlySession(t))
		assert.Equal(t, []string{"user", "assistant", "tool", "assistant"}, roles(hist))
		assert.Equal(t, result, hist[2].(*aap.ToolMessage).Content.PlainText())
	})

	t.Run("while a client tool runs", func(t *testing.T) {
		up, url := newRestartable(t)
		e := newBridge(t, url)
		c := e.conv("lost-tool")
		c.Tools = append(c.Tools, weatherTool)
		c.say("weather in Paris")
		r := c.run(t)
		require.Len(t, r.Calls, 1)
		up.restart()

		c.answer(r.Calls[0].ID, "Sunny, 21°C")
		r = c.run(t)
		require.Nil(t, r.Error, "the run fails: %s", r.Body)
		assert.Equal(t, []string{demo.WeatherText("Paris", "Sunny, 21°C")}, r.Text)
		assert.Equal(t, []string{"user", "assistant", "tool", "assistant"}, roles(e.history(t, e.onlySession(t))))
	})
}
