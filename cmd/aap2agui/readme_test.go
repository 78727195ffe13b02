package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/internal/testkit/doctest"
	"github.com/aapagui/aapagui/internal/testkit/proctest"
)

// TestAgentExample: examples/agent.yaml loads, describes an option of each
// kind, a server tool and capabilities, and is exactly the built-in demo
// agent's description, so that docs/USING.md's examples hold with or without
// it.
func TestAgentExample(t *testing.T) {
	t.Parallel()
	withFile := proctest.Start(t, nil, "--listen", "127.0.0.1:0", "--store", "memory:", "--agent-config", "../../examples/agent.yaml")
	builtIn := proctest.Start(t, nil, "--listen", "127.0.0.1:0", "--store", "memory:")
	meta := getBody(t, withFile.URL()+"/meta")
	assert.JSONEq(t, getBody(t, builtIn.URL()+"/meta"), meta)

	var m struct {
		Agents []struct {
			Name    string `json:"name"`
			Options []struct {
				Type string `json:"type"`
			} `json:"options"`
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
			Capabilities map[string]any `json:"capabilities"`
		} `json:"agents"`
	}
	require.NoError(t, json.Unmarshal([]byte(meta), &m))
	require.Len(t, m.Agents, 1)
	a := m.Agents[0]
	assert.Equal(t, "demo", a.Name)
	var kinds []string
	for _, o := range a.Options {
		kinds = append(kinds, o.Type)
	}
	assert.ElementsMatch(t, []string{"text", "select", "secret"}, kinds)
	require.Len(t, a.Tools, 1)
	assert.Equal(t, "web_search", a.Tools[0].Name)
	assert.Len(t, a.Capabilities, 4)
}

// TestREADMECurl runs docs/USING.md's curl conversation with aap2agui as it
// is written, against the program (only localhost:8080 becomes the test's
// address), and checks what each step printed.
func TestREADMECurl(t *testing.T) {
	t.Parallel()
	blocks := doctest.Blocks(t, "../../docs/USING.md", "sh", `J='Content-Type: application/json'`)
	require.Len(t, blocks, 1)
	p := proctest.Start(t, nil, "--listen", "127.0.0.1:0", "--store", "memory:")
	out := doctest.Shell(t, strings.ReplaceAll(blocks[0], "localhost:8080", p.Addr))

	assert.NotContains(t, out, `"error":`, "no step failed")
	assert.Contains(t, out, "event: text_delta")
	assert.Contains(t, out, `"name":"get_weather"`)
	assert.Contains(t, out, "Sunny, 21°C")
	assert.Contains(t, out, `"name":"web_search"`)
	assert.Contains(t, out, "event: tool_result", "the search ran once permitted")
	assert.Contains(t, out, `"api_key":"***"`, "the secret option is redacted")
	assert.NotContains(t, out, "sk-demo-123")
	assert.Equal(t, 2, strings.Count(out, `"stopReason":"tool_use"`), "the weather call and the search stopped the turn")
}

func getBody(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}
