package agentconfig_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/cmd/aap2agui/internal/agentconfig"
)

// The agent description is read strictly: a misspelt key is an error
// naming it, never a silently ignored field.
func TestLoadAgentInfoIsStrict(t *testing.T) {
	info, err := agentconfig.LoadAgentInfo([]byte(`{"name":"a","capabilities":{}}`))
	require.NoError(t, err)
	assert.Equal(t, "a", info.Name)

	for _, tc := range []struct{ name, in, want string }{
		{"misspelt top-level key", `{"name":"a","capabilites":{}}`, "capabilites"},
		{"unknown nested key", `{"name":"a","tools":[{"name":"t","description":"d","parameters":{},"titel":"x"}]}`, `tools[0].titel`},
		{"unknown capability key", `{"name":"a","capabilities":{"stream":{"delta":{},"deltas":{}}}}`, "capabilities.stream.deltas"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := agentconfig.LoadAgentInfo([]byte(tc.in))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// A tool's "permissions" says who decides whether it runs: "aap" (the
// default) tools are the agent's server tools in /meta; "none" tools are
// run by the agent on its own and kept apart. Errors name the tool by its
// index in the file.
func TestLoadAgentDescription(t *testing.T) {
	const params = `{"type":"object","properties":{"q":{"type":"string"},"a":{"type":"number"}}}`
	d, err := agentconfig.LoadAgentDescription([]byte(`{"name":"mastra","tools":[` +
		`{"name":"web_search","description":"Search.","parameters":` + params + `,"permissions":"none"},` +
		`{"name":"deploy","description":"Deploy.","parameters":` + params + `,"permissions":"aap"},` +
		`{"name":"lookup","description":"Look up.","parameters":{}}]}`))
	require.NoError(t, err)
	require.Len(t, d.OwnTools, 1)
	assert.Equal(t, "web_search", d.OwnTools[0].Name)
	assert.Equal(t, params, string(d.OwnTools[0].Parameters))
	require.Len(t, d.Agent.Tools, 2)
	assert.Equal(t, "deploy", d.Agent.Tools[0].Name)
	assert.Equal(t, params, string(d.Agent.Tools[0].Parameters))
	assert.Equal(t, "lookup", d.Agent.Tools[1].Name)

	for _, tc := range []struct{ name, in, want string }{
		{"unknown value", `{"name":"a","tools":[{"name":"t","description":"d","parameters":{},"permissions":"agent"}]}`, `tools[0].permissions: want "aap"`},
		{"not a string", `{"name":"a","tools":[{"name":"t","description":"d","parameters":{},"permissions":false}]}`, `tools[0].permissions`},
		{"misspelt key after a none tool", `{"name":"a","tools":[{"name":"s","description":"d","parameters":{},"permissions":"none"},{"name":"t","description":"d","parameters":{},"titel":"x"}]}`, `tools[1].titel`},
		{"misspelt key in a none tool", `{"name":"a","tools":[{"name":"s","description":"d","parameters":{},"permissions":"none","descripton":"x"}]}`, `tools[0].descripton`},
		{"none tool without description", `{"name":"a","tools":[{"name":"t","description":"d","parameters":{}},{"name":"s","parameters":{},"permissions":"none"}]}`, `tools[1].description: required`},
		{"misspelt top-level key", `{"name":"a","tools":[],"capabilites":{}}`, "capabilites"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := agentconfig.LoadAgentDescription([]byte(tc.in))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}
