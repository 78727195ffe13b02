package agentconfig_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/cmd/aap2agui/internal/agentconfig"
)

const agentsYAML = `
upstreams:
  runtime:
    url: http://127.0.0.1:4000/api/copilotkit/agent/{agent}/run
    headers:
      Authorization: Bearer ${RUNTIME_KEY}
agents:
  - name: demo
    title: Demo agent
    version: 1.0.0
    tools:
      - name: web_search
        description: Search the web.
        parameters: {type: object}
      - name: lookup
        description: Looks things up on its own.
        parameters: {type: object}
        permissions: none
    upstream:
      url: http://127.0.0.1:8000/agent
      connectTimeout: 5s
      idleTimeout: 2m
      threadIds: session
  - name: researcher
    title: Researcher
    version: 1.0.0
    upstream: runtime
  - name: writer
    title: Writer
    version: 2.0.0
    upstream: runtime
`

func envOf(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func loadYAML(t *testing.T, y string, vars map[string]string) ([]aap2agui.AgentConfig, error) {
	t.Helper()
	js, err := yaml.YAMLToJSON([]byte(y))
	require.NoError(t, err)
	require.True(t, agentconfig.IsAgentsConfig(js))
	return agentconfig.LoadAgentsConfig(js, envOf(vars))
}

func TestLoadAgentsConfig(t *testing.T) {
	agents, err := loadYAML(t, agentsYAML, map[string]string{"RUNTIME_KEY": "s3cret"})
	require.NoError(t, err)
	require.Len(t, agents, 3)

	demo := agents[0]
	assert.Equal(t, "demo", demo.Agent.Name)
	assert.Equal(t, "http://127.0.0.1:8000/agent", demo.Upstream)
	assert.Equal(t, 5*time.Second, demo.HeaderTimeout)
	assert.Equal(t, 2*time.Minute, demo.IdleTimeout)
	assert.Equal(t, aap2agui.ThreadIDsSession, demo.ThreadIDs)
	require.Len(t, demo.Agent.Tools, 1, "a tool with permissions: none is not offered")
	assert.Equal(t, "web_search", demo.Agent.Tools[0].Name)
	require.Len(t, demo.OwnTools, 1)
	assert.Equal(t, "lookup", demo.OwnTools[0].Name)
	assert.Empty(t, demo.UpstreamHeader)

	for i, name := range []string{"researcher", "writer"} {
		a := agents[i+1]
		assert.Equal(t, name, a.Agent.Name)
		assert.Equal(t, "http://127.0.0.1:4000/api/copilotkit/agent/"+name+"/run", a.Upstream, "one upstream block, the agent's name in its URL")
		assert.Equal(t, "Bearer s3cret", a.UpstreamHeader.Get("Authorization"), "the header's secret comes from the environment")
		assert.Zero(t, a.HeaderTimeout, "the server's default")
	}
	assert.False(t, agentconfig.IsAgentsConfig([]byte(`{"name":"demo","title":"Demo","version":"1"}`)), "one agent's description is today's form")
}

func TestLoadAgentsConfigErrors(t *testing.T) {
	one := func(entry string) string {
		return "upstreams:\n  runtime: {url: 'http://h/agent/{agent}/run'}\nagents:\n  - " + entry + "\n"
	}
	for _, tc := range []struct {
		name, yaml string
		says       []string
	}{
		{"no agents", "agents: []\n", []string{"at least one agent"}},
		{"no upstream", one("{name: a, title: A, version: '1'}"), []string{"agents[0] (a): upstream: missing"}},
		{"unknown upstream name", one("{name: a, title: A, version: '1', upstream: nowhere}"), []string{"agents[0] (a)", `"nowhere" is not a name under upstreams (runtime)`}},
		{"unknown key in the upstream", one("{name: a, title: A, version: '1', upstream: {url: 'http://h/a', timeout: 3s}}"), []string{"agents[0] (a): upstream:", `unknown field "timeout"`}},
		{"unknown key in the description", one("{name: a, title: A, version: '1', capabilites: {}, upstream: runtime}"), []string{"agents[0] (a)", `unknown key "capabilites"`}},
		{"relative url", one("{name: a, title: A, version: '1', upstream: {url: /agent}}"), []string{"agents[0] (a): upstream.url: want an absolute http(s) URL"}},
		{"bad duration", one("{name: a, title: A, version: '1', upstream: {url: 'http://h/a', idleTimeout: soon}}"), []string{"agents[0] (a): upstream.idleTimeout", `"soon"`}},
		{"bad thread ids", one("{name: a, title: A, version: '1', upstream: {url: 'http://h/a', threadIds: random}}"), []string{"upstream.threadIds"}},
		{"unset secret", one("{name: a, title: A, version: '1', upstream: {url: 'http://h/a', headers: {X-Key: 'k-${AGENT_KEY}'}}}"), []string{"agents[0] (a): upstream.headers.X-Key: the environment variable AGENT_KEY is not set"}},
		{"no name", one("{title: A, version: '1', upstream: runtime}"), []string{"agents[0]: name: missing"}},
		{"same name twice", "agents:\n  - {name: a, title: A, version: '1', upstream: {url: 'http://h/a'}}\n  - {name: a, title: B, version: '1', upstream: {url: 'http://h/b'}}\n", []string{"agents[1] (a): name: another agent has this name"}},
		{"unknown top-level key", "agent: []\nagents: [{name: a, title: A, version: '1', upstream: {url: 'http://h/a'}}]\n", []string{`unknown field "agent"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadYAML(t, tc.yaml, nil)
			require.Error(t, err)
			for _, s := range tc.says {
				assert.Contains(t, err.Error(), s)
			}
		})
	}
}

// A header value with a control character is refused without showing it.
func TestLoadAgentsConfigHidesHeaderValues(t *testing.T) {
	_, err := loadYAML(t, "agents:\n  - {name: a, title: A, version: '1', upstream: {url: 'http://h/a', headers: {X-Key: '${K}'}}}\n",
		map[string]string{"K": "line\r\nX-Evil: 1"})
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "Evil")
	assert.Contains(t, err.Error(), "agents[0] (a): upstream.headers")
}
