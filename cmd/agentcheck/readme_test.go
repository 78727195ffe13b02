package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/bridge/agui2aap"
	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/internal/testkit/doctest"
	"github.com/aapagui/aapagui/store"
)

// TestREADMEDemos runs docs/USING.md's agentcheck commands for the built-in
// demos, as written but for the addresses: aap2agui in front of its AG-UI
// demo agent and agui2aap in front of its AAP demo agent, as the two
// programs set them up without --upstream. Every check passes.
func TestREADMEDemos(t *testing.T) {
	blocks := doctest.Blocks(t, "../../docs/USING.md", "sh", "agentcheck agui http://127.0.0.1:8081/agents/demo")
	require.Len(t, blocks, 1)
	require.Contains(t, blocks[0], "go run ./cmd/aap2agui --store memory: &")
	require.Contains(t, blocks[0], "go run ./cmd/agui2aap --store memory: &")

	aguiAgent := httptest.NewServer(demo.AGUIAgent{})
	t.Cleanup(aguiAgent.Close)
	// examples/agent.yaml is the built-in demo agent's description, with
	// no tool the agent runs on its own (cmd/aap2agui's TestAgentExample
	// reads it strictly and checks it against the built-in one).
	data, err := os.ReadFile("../../examples/agent.yaml")
	require.NoError(t, err)
	js, err := yaml.YAMLToJSON(data)
	require.NoError(t, err)
	var info aap.AgentInfo
	require.NoError(t, json.Unmarshal(js, &info))
	a, err := aap2agui.New(aap2agui.Config{Upstream: aguiAgent.URL, Store: store.NewMemory(), Agent: info})
	require.NoError(t, err)
	as := httptest.NewServer(a)
	t.Cleanup(as.Close)

	aapAgent := httptest.NewServer(demo.NewAAPAgent(demo.AAPAgentOptions{}))
	t.Cleanup(aapAgent.Close)
	g, err := agui2aap.New(agui2aap.Config{Upstream: aapAgent.URL, Store: store.NewMemory(), ServerTools: []agui2aap.ServerTool{{Name: demo.SearchTool}}})
	require.NoError(t, err)
	gs := httptest.NewServer(g)
	t.Cleanup(gs.Close)

	cmds := regexp.MustCompile(`(?m)^go run \./cmd/agentcheck ([^#\n]*)`).FindAllStringSubmatch(blocks[0], -1)
	require.Len(t, cmds, 2)
	for _, c := range cmds {
		line := strings.ReplaceAll(c[1], "http://127.0.0.1:8080", as.URL)
		line = strings.ReplaceAll(line, "http://127.0.0.1:8081", gs.URL)
		var out, errOut bytes.Buffer
		code, err := run(context.Background(), strings.Fields(line), &out, &errOut)
		require.NoError(t, err, "%s\n%s", line, errOut.String())
		assert.Equal(t, 0, code, "%s:\n%s", line, out.String())
		assert.Contains(t, out.String(), " 0 failed")
	}
}
