package main

import (
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/bridge/agui2aap"
	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/internal/testkit/doctest"
	"github.com/aapagui/aapagui/internal/testkit/proctest"
	"github.com/aapagui/aapagui/store"
)

// TestREADMEChain runs docs/USING.md's chain section as written: aap2agui
// with the flags its block gives, in front of agui2aap with its built-in
// AAP demo agent (as `go run ./cmd/agui2aap` sets it up), and docs/USING.md's
// curl conversation through both (only the addresses become the test's).
func TestREADMEChain(t *testing.T) {
	t.Parallel()
	blocks := doctest.Blocks(t, "../../docs/USING.md", "sh", "--upstream http://127.0.0.1:8081/agents/demo")
	require.Len(t, blocks, 1)
	chain := strings.ReplaceAll(blocks[0], "\\\n", " ")
	m := regexp.MustCompile(`(?m)^go run \./cmd/aap2agui ([^#\n]*)`).FindStringSubmatch(chain)
	require.NotNil(t, m, "the block starts aap2agui:\n%s", blocks[0])
	require.Contains(t, chain, "go run ./cmd/agui2aap", "the block starts agui2aap")

	args := strings.Fields(strings.ReplaceAll(m[1], "127.0.0.1:8081", demoAGUI(t)))
	for i, a := range args {
		if strings.HasPrefix(a, "examples/") {
			args[i] = "../../" + a // the test runs in cmd/aap2agui
		}
	}
	p := proctest.Start(t, nil, append(args, "--listen", "127.0.0.1:0")...)

	conv := doctest.Blocks(t, "../../docs/USING.md", "sh", `J='Content-Type: application/json'`)
	require.Len(t, conv, 1)
	out := doctest.Shell(t, strings.ReplaceAll(conv[0], "localhost:8080", p.Addr))
	assert.NotContains(t, out, `"error":`, "no step failed")
	assert.Contains(t, out, "event: text_delta")
	assert.Contains(t, out, `"name":"get_weather"`)
	assert.Contains(t, out, "Sunny, 21°C")
	assert.Contains(t, out, "event: tool_result", "the search ran once permitted")
	assert.Contains(t, out, `"api_key":"***"`, "the secret option is redacted")
	assert.Equal(t, 2, strings.Count(out, `"stopReason":"tool_use"`), "the weather call and the search stopped the turn")
}

// demoAGUI starts agui2aap in front of the AAP demo agent, as `go run
// ./cmd/agui2aap` sets them up, and returns its address (host:port).
func demoAGUI(t *testing.T) string {
	t.Helper()
	agent := httptest.NewServer(demo.NewAAPAgent(demo.AAPAgentOptions{}))
	t.Cleanup(agent.Close)
	g, err := agui2aap.New(agui2aap.Config{Upstream: agent.URL, Store: store.NewMemory(), ServerTools: []agui2aap.ServerTool{{Name: demo.SearchTool}}})
	require.NoError(t, err)
	gs := httptest.NewServer(g)
	t.Cleanup(gs.Close)
	return strings.TrimPrefix(gs.URL, "http://")
}
