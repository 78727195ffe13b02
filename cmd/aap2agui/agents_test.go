package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/internal/testkit/doctest"
	"github.com/aapagui/aapagui/internal/testkit/pgtest"
	"github.com/aapagui/aapagui/internal/testkit/proctest"
)

// TestREADMEAgents runs docs/USING.md's several-agent section as written:
// agui2aap in front of its AAP demo agent (as `go run ./cmd/agui2aap`
// sets it up), aap2agui with examples/agents.yaml and the environment the
// block gives, and the block's curl steps (only the addresses become the
// test's).
func TestREADMEAgents(t *testing.T) {
	t.Parallel()
	blocks := doctest.Blocks(t, "../../docs/USING.md", "sh", "--agent-config examples/agents.yaml")
	require.Len(t, blocks, 1)
	m := regexp.MustCompile(`(?m)^(\w+)=(\S+) go run \./cmd/aap2agui ([^#\n]*)`).FindStringSubmatch(blocks[0])
	require.NotNil(t, m, "the block starts aap2agui with an environment variable:\n%s", blocks[0])
	require.Contains(t, blocks[0], "go run ./cmd/agui2aap", "the block starts agui2aap")

	example, err := os.ReadFile("../../examples/agents.yaml")
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "agents.yaml")
	require.NoError(t, os.WriteFile(file, []byte(strings.ReplaceAll(string(example), "127.0.0.1:8081", demoAGUI(t))), 0o600))
	args := strings.Fields(strings.ReplaceAll(m[3], "examples/agents.yaml", file))
	p := proctest.Start(t, []string{m[1] + "=" + m[2]}, append(args, "--listen", "127.0.0.1:0")...)

	conv := doctest.Blocks(t, "../../docs/USING.md", "sh", `M='Content-Type: application/json'`)
	require.Len(t, conv, 1)
	out := doctest.Shell(t, strings.ReplaceAll(conv[0], "localhost:8080", p.Addr))
	for _, name := range []string{"demo", "researcher", "writer", "planner"} {
		assert.Contains(t, out, `"name":"`+name+`"`, "GET /meta lists every agent")
	}
	assert.Contains(t, out, demo.EchoText("hello"), "the demo's session was answered by the demo")
	assert.Contains(t, out, `"code":"unknown_agent"`)
	assert.Contains(t, out, `agent \"nobody\" is not served here (agents: \"demo\", \"researcher\", \"writer\", \"planner\")`)
	assert.Contains(t, out, `{"agent":"demo","status":"ok"}`, "readiness: the demo's upstream answers")
	assert.Contains(t, out, `{"agent":"planner","status":"unreachable"`)
	assert.NotContains(t, out+p.Log(), m[2], "the header's secret is neither served nor logged")
}

// countingAgent is the demo AG-UI agent with another search tool name
// when tool is not empty, counting the runs it gets.
func countingAgent(t *testing.T, tool string) (url string, runs *atomic.Int64) {
	runs = new(atomic.Int64)
	h := demo.AGUIAgent{SearchTool: tool}
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		runs.Add(1)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s.URL, runs
}

// twoAgentsFile writes an agents file: web and docs, the demo with its
// search tool under two names, each on its own upstream (docs first when
// docsFirst).
func twoAgentsFile(t *testing.T, webURL, docsURL string, docsFirst bool) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "agents.yaml")
	web := `
  - name: web
    title: Web
    version: 1.0.0
    tools: [{name: web_search, description: Search the web., parameters: {type: object}}]
    capabilities: {history: {full: {}}, stream: {delta: {}, message: {}, none: {}}}
    upstream: {url: "` + webURL + `"}`
	docs := `
  - name: docs
    title: Docs
    version: 1.0.0
    tools: [{name: doc_search, description: Search the docs., parameters: {type: object}}]
    capabilities: {history: {full: {}}, stream: {delta: {}, message: {}, none: {}}}
    upstream: {url: "` + docsURL + `"}`
	body := "agents:" + web + docs + "\n"
	if docsFirst {
		body = "agents:" + docs + web + "\n"
	}
	require.NoError(t, os.WriteFile(file, []byte(body), 0o600))
	return file
}

// searchTurn asks the session's agent to search and returns the tool the
// call named.
func searchTurn(t *testing.T, c *aap.Client, id string, mode aap.StreamMode) string {
	t.Helper()
	o := turn(t, c, id, mode, &aap.UserMessage{Content: aap.TextContent("search go generics")})
	require.Equal(t, aap.StopToolUse, o.stop, "the untrusted search waits for permission")
	require.Len(t, o.calls, 1)
	return o.calls[0].Name
}

// A session's turns stay with its agent when the program restarts on the
// same SQLite file, whatever order the agents are listed in.
func TestAgentsAcrossRestartOnSQLite(t *testing.T) {
	t.Parallel()
	webURL, webRuns := countingAgent(t, "")
	docsURL, docsRuns := countingAgent(t, "doc_search")
	db := "sqlite:" + filepath.Join(t.TempDir(), "aap2agui.db")
	first := proctest.Start(t, nil, "--listen", "127.0.0.1:0", "--store", db, "--agent-config", twoAgentsFile(t, webURL, docsURL, false))
	c := aap.NewClient(first.URL(), aap.ClientOptions{})
	ids := map[string]string{}
	for _, name := range []string{"web", "docs"} {
		resp, err := c.CreateSession(t.Context(), &aap.PostSessionsRequest{Agent: aap.AgentConfig{Name: name, Tools: []aap.ServerToolRef{{Name: map[string]string{"web": "web_search", "docs": "doc_search"}[name]}}}})
		require.NoError(t, err)
		ids[name] = resp.SessionID
	}
	assert.Equal(t, "web_search", searchTurn(t, c, ids["web"], aap.StreamDelta))
	first.Stop(t)

	// The next process lists the agents the other way round.
	second := proctest.Start(t, nil, "--listen", "127.0.0.1:0", "--store", db, "--agent-config", twoAgentsFile(t, webURL, docsURL, true))
	c = aap.NewClient(second.URL(), aap.ClientOptions{})
	before := docsRuns.Load()
	for _, mode := range []aap.StreamMode{aap.StreamDelta, aap.StreamMessage, aap.StreamNone} {
		assert.Equal(t, "doc_search", searchTurn(t, c, ids["docs"], mode), "docs' session is answered by docs, in %s mode", mode)
		// Deny it, so that the next turn starts afresh.
		o := turn(t, c, ids["docs"], aap.StreamNone, &aap.ToolPermissionMessage{ToolCallID: lastCall(t, c, ids["docs"]), Granted: false, Reason: "not now"})
		require.Equal(t, aap.StopEndTurn, o.stop)
	}
	assert.Equal(t, before+6, docsRuns.Load(), "every run of docs' session went to docs")
	// web's search, asked before the restart, is answered after it.
	o := turn(t, c, ids["web"], aap.StreamNone, &aap.ToolPermissionMessage{ToolCallID: lastCall(t, c, ids["web"]), Granted: true})
	require.Equal(t, aap.StopEndTurn, o.stop)
	assert.Contains(t, o.text, "Here is what I found.")
	assert.Equal(t, int64(2), webRuns.Load(), "web's session stays on web")
}

// lastCall is the id of the last tool call in the session's history.
func lastCall(t *testing.T, c *aap.Client, id string) string {
	t.Helper()
	msgs, err := c.History(t.Context(), id, aap.HistoryFull)
	require.NoError(t, err)
	for i := len(msgs) - 1; i >= 0; i-- {
		if am, ok := msgs[i].(*aap.AssistantMessage); ok {
			for j := len(am.Content.Blocks) - 1; j >= 0; j-- {
				if tu, ok := am.Content.Blocks[j].(*aap.ToolUseBlock); ok {
					return tu.ToolCallID
				}
			}
		}
	}
	t.Fatal("no tool call in history")
	return ""
}

// Two replicas on one PostgreSQL database serve the same agents: a
// session begun on one goes to its agent from either.
func TestAgentsAcrossReplicasOnPostgres(t *testing.T) {
	t.Parallel()
	dsn := pgtest.Schema(t)
	webURL, webRuns := countingAgent(t, "")
	docsURL, docsRuns := countingAgent(t, "doc_search")
	file := twoAgentsFile(t, webURL, docsURL, false)
	a := proctest.Start(t, nil, "--listen", "127.0.0.1:0", "--store", dsn, "--agent-config", file)
	b := proctest.Start(t, nil, "--listen", "127.0.0.1:0", "--store", dsn, "--agent-config", file)
	ca, cb := aap.NewClient(a.URL(), aap.ClientOptions{}), aap.NewClient(b.URL(), aap.ClientOptions{})
	resp, err := ca.CreateSession(t.Context(), &aap.PostSessionsRequest{Agent: aap.AgentConfig{Name: "docs", Tools: []aap.ServerToolRef{{Name: "doc_search"}}}})
	require.NoError(t, err)
	id := resp.SessionID
	for i, mode := range []aap.StreamMode{aap.StreamDelta, aap.StreamMessage, aap.StreamNone} {
		asker, answerer := ca, cb
		if i%2 == 1 {
			asker, answerer = cb, ca
		}
		assert.Equal(t, "doc_search", searchTurn(t, asker, id, mode))
		o := turn(t, answerer, id, aap.StreamNone, &aap.ToolPermissionMessage{ToolCallID: lastCall(t, answerer, id), Granted: true})
		require.Equal(t, aap.StopEndTurn, o.stop)
		assert.Contains(t, o.text, "Here is what I found.", "the search ran, on the other replica")
	}
	assert.Equal(t, int64(6), docsRuns.Load(), "every run went to docs")
	assert.Zero(t, webRuns.Load())
}

// A several-agent file with an error, or beside --upstream, refuses the
// start, naming the agent and the key.
func TestAgentsConfigRefused(t *testing.T) {
	file := filepath.Join(t.TempDir(), "agents.yaml")
	require.NoError(t, os.WriteFile(file, []byte(`agents:
  - name: one
    title: One
    version: 1.0.0
    upstream:
      url: http://127.0.0.1:9/agent
      headers: {Authorization: "Bearer ${AAP2AGUI_TEST_UNSET_KEY}"}
`), 0o600))
	err := run([]string{"--store", "memory:", "--agent-config", file})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "agents[0] (one): upstream.headers.Authorization: the environment variable AAP2AGUI_TEST_UNSET_KEY is not set")

	t.Setenv("AAP2AGUI_TEST_UNSET_KEY", "k")
	err = run([]string{"--store", "memory:", "--agent-config", file, "--upstream", "http://127.0.0.1:9/other"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "leave out --upstream and --upstream-header")
}

// SIGHUP reloads a several-agent --agent-config: an agent added is
// listed and served at once, one removed refuses its sessions' turns, and
// a file with an error is logged and changes nothing.
func TestAgentsReloadOnSIGHUP(t *testing.T) {
	t.Parallel()
	webURL, _ := countingAgent(t, "")
	docsURL, docsRuns := countingAgent(t, "doc_search")
	agent := func(name, tool, url string) string {
		return `
  - name: ` + name + `
    title: ` + name + `
    version: 1.0.0
    tools: [{name: ` + tool + `, description: Searches., parameters: {type: object}}]
    capabilities: {history: {full: {}}, stream: {delta: {}, message: {}, none: {}}}
    upstream: {url: "` + url + `"}`
	}
	web, docs := agent("web", "web_search", webURL), agent("docs", "doc_search", docsURL)
	file := filepath.Join(t.TempDir(), "agents.yaml")
	write := func(body string) { require.NoError(t, os.WriteFile(file, []byte(body), 0o600)) }
	write("agents:" + web + "\n")
	p := proctest.Start(t, nil, "--listen", "127.0.0.1:0", "--store", "memory:", "--agent-config", file)
	c := aap.NewClient(p.URL(), aap.ClientOptions{})
	served := func() (names []string) {
		meta, err := c.Meta(t.Context())
		require.NoError(t, err)
		for _, a := range meta.Agents {
			names = append(names, a.Name)
		}
		return names
	}
	reload := func(body string, logged string) {
		t.Helper()
		before := strings.Count(p.Log(), logged)
		write(body)
		p.Signal(t, syscall.SIGHUP)
		require.Eventually(t, func() bool { return strings.Count(p.Log(), logged) > before }, 10*time.Second, 20*time.Millisecond, "log: %q", logged)
	}
	require.Equal(t, []string{"web"}, served())

	reload("agents:"+web+docs+"\n", "SIGHUP: agents reloaded")
	assert.Equal(t, []string{"web", "docs"}, served())
	resp, err := c.CreateSession(t.Context(), &aap.PostSessionsRequest{Agent: aap.AgentConfig{Name: "docs", Tools: []aap.ServerToolRef{{Name: "doc_search"}}}})
	require.NoError(t, err)
	id := resp.SessionID
	assert.Equal(t, "doc_search", searchTurn(t, c, id, aap.StreamDelta), "the added agent answers")
	assert.Equal(t, int64(1), docsRuns.Load())

	reload("agents:"+web+docs+web+"\n", "SIGHUP: not reloaded")
	assert.Contains(t, p.Log(), `another agent has this name`, "the error says what is wrong")
	assert.Equal(t, []string{"web", "docs"}, served(), "a file with an error changes nothing")

	reload("agents:"+web+"\n", "SIGHUP: agents reloaded")
	assert.Equal(t, []string{"web"}, served())
	_, err = c.Turn(t.Context(), id, &aap.PostSessionTurnRequest{Stream: aap.StreamNone,
		Messages: []aap.Message{&aap.ToolPermissionMessage{ToolCallID: lastCall(t, c, id), Granted: true}}})
	var apiErr *aap.HTTPError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusNotFound, apiErr.StatusCode)
	assert.Equal(t, "unknown_agent", apiErr.Code)
	assert.Equal(t, int64(1), docsRuns.Load(), "a removed agent is not called")
}

// An agent described without capabilities is served, with a warning that
// names it: AAP clients would use no stream mode and no history with it.
func TestAgentsWithoutCapabilitiesAreWarnedOf(t *testing.T) {
	t.Parallel()
	url, _ := countingAgent(t, "")
	file := filepath.Join(t.TempDir(), "agents.yaml")
	require.NoError(t, os.WriteFile(file, []byte(`agents:
  - {name: bare, title: Bare, version: 1.0.0, upstream: {url: "`+url+`"}}
  - name: full
    title: Full
    version: 1.0.0
    capabilities: {history: {full: {}}, stream: {delta: {}, message: {}, none: {}}}
    upstream: {url: "`+url+`"}
`), 0o600))
	p := proctest.Start(t, nil, "--listen", "127.0.0.1:0", "--store", "memory:", "--agent-config", file)
	var warned []string
	for _, line := range strings.Split(p.Log(), "\n") {
		if strings.Contains(line, "declares no capabilities") {
			warned = append(warned, line)
		}
	}
	require.Len(t, warned, 1, p.Log())
	assert.Contains(t, warned[0], `"level":"warn"`)
	assert.Contains(t, warned[0], `"agent":"bare"`)
}
