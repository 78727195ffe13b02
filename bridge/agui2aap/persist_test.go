package agui2aap_test

import (
	"path/filepath"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/bridge/agui2aap"
	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/store/sqlite"
)

// withSQLite makes a bridge use the SQLite store s.
func withSQLite(s *sqlite.Store) func(*agui2aap.Config) {
	return func(c *agui2aap.Config) { c.Store = s }
}

// A restart: the thread's cursor lives in the SQLite file, so a new
// server on the same file continues the same AAP session.
func TestRestartPersistence(t *testing.T) {
	up := demoAAPServer(t)
	path := filepath.Join(t.TempDir(), "threads.db")

	st1, err := sqlite.Open(path)
	require.NoError(t, err)
	e1 := newBridge(t, up, withSQLite(st1))
	c := e1.conv("restart")
	c.Tools = []types.Tool{weatherTool}
	c.say("weather in Paris")
	r := c.run(t)
	require.Len(t, r.Calls, 1)
	assert.Nil(t, r.Finished.Outcome, "stopped for the frontend tool")
	session := e1.onlySession(t)
	e1.server.Close()
	require.NoError(t, st1.Close())

	st2, err := sqlite.Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { _ = st2.Close() })
	e2 := newBridge(t, up, withSQLite(st2))
	c.e = e2
	c.answer(r.Calls[0].ID, "Sunny")
	r = c.run(t)
	assert.Equal(t, []string{demo.WeatherText("Paris", "Sunny")}, r.Text)
	assert.Equal(t, session, e2.onlySession(t), "no new session after the restart")
	hist := e2.history(t, session)
	assert.Equal(t, []string{"weather in Paris"}, userTexts(hist))

	c.say("thanks")
	assert.Equal(t, []string{demo.EchoText("thanks")}, c.run(t).Text)
	assert.Len(t, e2.sessions(t), 1)
}

// Two replicas on the same SQLite file take turns on one thread, an
// interrupt opened on one answered on the other.
func TestTwoReplicas(t *testing.T) {
	up := demoAAPServer(t)
	path := filepath.Join(t.TempDir(), "threads.db")
	open := func() *sqlite.Store {
		s, err := sqlite.Open(path)
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	a := newBridge(t, up, withSQLite(open()))
	b := newBridge(t, up, withSQLite(open()))
	c := a.conv("replicas")
	on := func(e *env) *conv { c.e = e; return c }

	on(a).say("one")
	on(a).run(t)
	on(b).say("two")
	assert.Equal(t, []string{demo.EchoText("two")}, on(b).run(t).Text)
	on(a).say("search cats")
	it := on(a).run(t).interrupts()[0]
	r := on(b).run(t, approve(it.ID))
	assert.Equal(t, demo.SearchAnswer(demo.SearchResult("cats")), r.lastText())
	on(a).say("three")
	on(a).run(t)

	id := a.onlySession(t)
	assert.Equal(t, []string{"one", "two", "search cats", "three"}, userTexts(a.history(t, id)))
}
