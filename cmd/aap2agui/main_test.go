package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/cmd/internal/clitest"
	"github.com/aapagui/aapagui/internal/testkit/pgtest"
	"github.com/aapagui/aapagui/internal/testkit/proctest"
	"github.com/aapagui/aapagui/store"
)

func TestMain(m *testing.M) { proctest.Main(m, run) }

// TestKilledMidTurn kills aap2agui with SIGKILL in the middle of a streamed
// turn: a new process on the same store answers the session's next turn
// with 409 and Retry-After while the dead turn's lease runs out, then takes
// it within the lease's TTL, with the history the dead process had saved.
func TestKilledMidTurn(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db := "sqlite:" + filepath.Join(t.TempDir(), "aap2agui.db")
	a := proctest.Start(t, nil, "--listen", "127.0.0.1:0", "--store", db)
	ca := aap.NewClient(a.URL(), aap.ClientOptions{})
	created, err := ca.CreateSession(ctx, &aap.PostSessionsRequest{Agent: aap.AgentConfig{Name: "demo"}})
	require.NoError(t, err)
	id := created.SessionID

	deltas := 0
	for ev, err := range ca.StreamTurn(ctx, id, &aap.PostSessionTurnRequest{Stream: aap.StreamDelta, Messages: []aap.Message{aap.UserText("long 1000000")}}) {
		require.NoError(t, err)
		if _, ok := ev.(*aap.TextDelta); ok {
			deltas++
		}
		if deltas == 3 {
			break // the turn is running: kill the process under it
		}
	}
	require.Equal(t, 3, deltas)
	a.Kill()
	killed := time.Now()

	b := proctest.Start(t, nil, "--listen", "127.0.0.1:0", "--store", db)
	next := `{"messages":[{"role":"user","content":"are you there?"}]}`
	first := true
	for {
		resp := clitest.Post(t, ctx, b.URL()+"/sessions/"+id+"/turns", next)
		if resp.StatusCode == http.StatusOK {
			break
		}
		require.Equal(t, http.StatusConflict, resp.StatusCode, "only 409 while the dead turn's lease runs")
		secs, err := strconv.Atoi(resp.Header.Get("Retry-After"))
		require.NoError(t, err, "409 without Retry-After")
		assert.LessOrEqual(t, secs, int(store.LeaseTTL.Seconds()))
		if first {
			t.Logf("first 409: Retry-After %d", secs)
			first = false
		}
		require.Less(t, time.Since(killed), 10*time.Second, "the dead turn's lock was not taken over")
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("session usable again %s after kill -9", time.Since(killed).Round(10*time.Millisecond))

	hist, err := aap.NewClient(b.URL(), aap.ClientOptions{}).History(ctx, id, aap.HistoryFull)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(hist), 3)
	assert.Equal(t, aap.UserText("long 1000000"), hist[0], "the dead turn's message was saved")
	var users []string
	for _, m := range hist {
		if u, ok := m.(*aap.UserMessage); ok {
			users = append(users, u.Content.Text)
		}
	}
	assert.Equal(t, []string{"long 1000000", "are you there?"}, users)
}

// A user who outgrows one machine moves a SQLite store to PostgreSQL with
// --copy-from: the conversations go on there.
func TestCopyFromSQLite(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "aap2agui.db")
	old := proctest.Start(t, nil, "--listen", "127.0.0.1:0", "--store", "sqlite:"+db)
	c := aap.NewClient(old.URL(), aap.ClientOptions{})
	created, err := c.CreateSession(ctx, &aap.PostSessionsRequest{Agent: aap.AgentConfig{Name: "demo"}})
	require.NoError(t, err)
	id := created.SessionID
	_, err = c.Turn(ctx, id, &aap.PostSessionTurnRequest{Messages: []aap.Message{aap.UserText("hello")}})
	require.NoError(t, err)
	before, err := c.History(ctx, id, aap.HistoryFull)
	require.NoError(t, err)
	old.Kill()

	dsn := pgtest.Schema(t)
	require.NoError(t, run([]string{"--store", dsn, "--copy-from", "sqlite:" + db, "--log-level", "error"}))
	err = run([]string{"--store", "sqlite:" + db, "--copy-from", "sqlite:" + db, "--log-level", "error"})
	require.ErrorContains(t, err, "into a PostgreSQL --store")

	moved := proctest.Start(t, nil, "--listen", "127.0.0.1:0", "--store", dsn)
	c = aap.NewClient(moved.URL(), aap.ClientOptions{})
	after, err := c.History(ctx, id, aap.HistoryFull)
	require.NoError(t, err)
	assert.Equal(t, before, after)
	resp, err := c.Turn(ctx, id, &aap.PostSessionTurnRequest{Messages: []aap.Message{aap.UserText("again")}})
	require.NoError(t, err)
	assert.Equal(t, aap.StopEndTurn, resp.StopReason)
}

// --page-size sets the length of a GET /sessions page: seven sessions at
// three a page come back as 3, 3, 1, in creation order, the last page
// without a cursor; the default is 50 a page; a size below 1 is refused at
// start-up.
func TestPageSize(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pages := func(c *aap.Client) (sizes []int, ids []string) {
		after := ""
		for {
			page, err := c.ListSessions(ctx, after)
			require.NoError(t, err)
			sizes = append(sizes, len(page.Sessions))
			for _, s := range page.Sessions {
				ids = append(ids, s.SessionID)
			}
			if page.Next == "" {
				return sizes, ids
			}
			after = page.Next
		}
	}

	p := proctest.Start(t, nil, "--listen", "127.0.0.1:0", "--store", "memory:", "--page-size", "3")
	c := aap.NewClient(p.URL(), aap.ClientOptions{})
	var created []string
	for range 7 {
		s, err := c.CreateSession(ctx, &aap.PostSessionsRequest{Agent: aap.AgentConfig{Name: "demo"}})
		require.NoError(t, err)
		created = append(created, s.SessionID)
	}
	sizes, ids := pages(c)
	assert.Equal(t, []int{3, 3, 1}, sizes)
	assert.Equal(t, created, ids)

	d := proctest.Start(t, nil, "--listen", "127.0.0.1:0", "--store", "memory:")
	c = aap.NewClient(d.URL(), aap.ClientOptions{})
	for range 51 {
		_, err := c.CreateSession(ctx, &aap.PostSessionsRequest{Agent: aap.AgentConfig{Name: "demo"}})
		require.NoError(t, err)
	}
	sizes, _ = pages(c)
	assert.Equal(t, []int{50, 1}, sizes, "default page size")

	err := run([]string{"--page-size", "0", "--store", "memory:"})
	require.ErrorContains(t, err, "--page-size 0")
}

// --agent-config reads YAML; a tool with permissions: none is not offered
// in /meta, and a misspelt permissions value stops the program at start-up.
func TestAgentConfigPermissions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "agent.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(`name: mastra
tools:
  - name: web_search
    description: Search the web.
    parameters: {type: object, properties: {query: {type: string}}}
    permissions: none
  - name: deploy
    description: Deploy the site.
    parameters: {type: object, properties: {}}
`), 0o600))
	p := proctest.Start(t, nil, "--listen", "127.0.0.1:0", "--store", "memory:", "--agent-config", cfg)
	meta, err := aap.NewClient(p.URL(), aap.ClientOptions{}).Meta(context.Background())
	require.NoError(t, err)
	require.Len(t, meta.Agents, 1)
	require.Len(t, meta.Agents[0].Tools, 1)
	assert.Equal(t, "deploy", meta.Agents[0].Tools[0].Name)

	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("name: a\ntools:\n  - {name: t, description: d, parameters: {}, permissions: never}\n"), 0o600))
	err = run([]string{"--store", "memory:", "--agent-config", bad})
	require.ErrorContains(t, err, "tools[0].permissions")
}
