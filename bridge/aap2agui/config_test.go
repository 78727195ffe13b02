package aap2agui_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/bridge/aap2agui"
)

// The agent description is read strictly: a misspelt key is an error
// naming it, never a silently ignored field.
func TestLoadAgentInfoIsStrict(t *testing.T) {
	info, err := aap2agui.LoadAgentInfo([]byte(`{"name":"a","capabilities":{}}`))
	require.NoError(t, err)
	assert.Equal(t, "a", info.Name)

	for _, tc := range []struct{ name, in, want string }{
		{"misspelt top-level key", `{"name":"a","capabilites":{}}`, "capabilites"},
		{"unknown nested key", `{"name":"a","tools":[{"name":"t","description":"d","parameters":{},"titel":"x"}]}`, `tools[0].titel`},
		{"unknown capability key", `{"name":"a","capabilities":{"stream":{"delta":{},"deltas":{}}}}`, "capabilities.stream.deltas"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := aap2agui.LoadAgentInfo([]byte(tc.in))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}
