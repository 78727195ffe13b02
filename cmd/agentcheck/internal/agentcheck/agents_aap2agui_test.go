package agentcheck_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/cmd/agentcheck/internal/agentcheck"
	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/store"
)

// threeAgents is aap2agui serving three AG-UI agents, with two API keys:
// "web", the demo searching with web_search; "docs", the demo searching
// with doc_search; and "echo", the demo again at echoURL, described as an
// agent with no server tool, no option and delta streaming only.
func threeAgents(t *testing.T, echoURL string) http.Handler {
	t.Helper()
	secret := []aap.AgentOption{{Type: aap.OptionSecret, Name: "api_key", Title: "Search API key"}}
	docs := demo.AGUIAgent{SearchTool: "doc_search"}
	web := aap2agui.DefaultAgent()
	web.Name, web.Tools, web.Options = "web", []aap.ToolSpec{demo.AGUIAgent{}.SearchSpec()}, secret
	doc := aap2agui.DefaultAgent()
	doc.Name, doc.Title, doc.Tools, doc.Options = "docs", "Document agent", []aap.ToolSpec{docs.SearchSpec()}, secret
	echo := aap2agui.DefaultAgent()
	echo.Name, echo.Description = "echo", "The demo agent, streaming deltas only."
	caps := *echo.Capabilities
	caps.Stream = &aap.StreamCapabilities{Delta: &aap.Empty{}}
	echo.Capabilities = &caps
	srv, err := aap2agui.New(aap2agui.Config{
		Agents: []aap2agui.AgentConfig{
			{Agent: web, Upstream: serve(t, demo.AGUIAgent{})},
			{Agent: doc, Upstream: serve(t, docs)},
			{Agent: echo, Upstream: echoURL},
		},
		Store:   store.NewMemory(),
		Serving: aap2agui.Serving{APIKeys: []string{"key-one", "key-two"}},
	})
	require.NoError(t, err)
	return srv
}

// agentNames lists the names of the agents a report checked.
func agentNames(r *agentcheck.Report) []string {
	var out []string
	for _, a := range r.Agents {
		out = append(out, a.Name)
	}
	return out
}

// agentcheck aap against aap2agui serving three AG-UI agents checks each:
// all pass, each with the checks its description allows; an agent whose
// upstream is down fails under its own name, the others still pass.
func TestAAPChecksEachAgentOfAap2agui(t *testing.T) {
	keys := agentcheck.AAPOptions{Key: "key-one", Key2: "key-two"}
	t.Run("all up", func(t *testing.T) {
		r := runAAP(t, threeAgents(t, serve(t, demo.AGUIAgent{})), keys)
		requireClean(t, r)
		assert.Equal(t, []string{"web", "docs", "echo"}, agentNames(r))
		for _, name := range []string{"web", "docs"} {
			part := r.Only(name)
			assert.Empty(t, skipped(part), "%s: nothing skipped", name)
			assert.Equal(t, 16, part.Passed, name)
			res, _ := part.Find("permission.grant")
			assert.Equal(t, agentcheck.Pass, res.Status, "%s: its own search tool asks permission", name)
		}
		// echo streams deltas only and has no server tool nor secret
		// option: the checks that need them are skipped.
		assert.ElementsMatch(t, []string{"turn.none", "turn.message", "error.message-mode",
			"permission.grant", "permission.deny", "history.tool-results", "options.secret-redacted"}, skipped(r.Only("echo")))
		assert.Equal(t, 6, r.Only("").Passed, "the server's checks run once")
	})
	t.Run("one upstream down", func(t *testing.T) {
		down := httptest.NewServer(http.NotFoundHandler())
		down.Close()
		r := runAAP(t, threeAgents(t, down.URL), keys)
		assert.False(t, r.OK())
		for _, name := range []string{"", "web", "docs"} {
			assert.True(t, r.Only(name).OK(), "%q passes", name)
		}
		echo := r.Only("echo")
		assert.Contains(t, echo.Failures(), "turn.delta")
		assert.Equal(t, r.Failed, echo.Failed, "every failure is echo's")
		for _, res := range r.Results {
			if res.Status == agentcheck.Fail {
				assert.Equal(t, "echo", res.Agent, res.ID)
			}
		}
	})
	t.Run("--agent", func(t *testing.T) {
		r := runAAP(t, threeAgents(t, serve(t, demo.AGUIAgent{})), agentcheck.AAPOptions{Key: "key-one", Key2: "key-two", Agent: "docs"})
		requireClean(t, r)
		assert.Equal(t, []string{"docs"}, agentNames(r))
	})
}
