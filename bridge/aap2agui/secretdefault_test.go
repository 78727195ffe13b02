package aap2agui_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
)

// TestSecretOptionDefault: the default of a secret option is shown in
// GET /meta as a session's value of it is, "***", in every AAP version
// served and after the agents are replaced; the other options' defaults
// and an empty secret default are shown as they are.
func TestSecretOptionDefault(t *testing.T) {
	const secret, later = "sk-default-NOT-FOR-META", "sk-reloaded-NOT-FOR-META"
	options := []aap.AgentOption{
		{Type: aap.OptionText, Name: "language", Default: "English"},
		{Type: aap.OptionSecret, Name: "api_key", Default: secret},
		{Type: aap.OptionSecret, Name: "org_key", Default: ""},
	}
	e := newEnv(t, demoAgent(t), allVersions, func(c *aap2agui.Config) { c.Agent.Options = options })
	check := func(t *testing.T, secret string) {
		t.Helper()
		for _, path := range []string{"/meta", "/v1/meta", "/v2/meta"} {
			r := doRaw(t, http.MethodGet, e.URL+path, "", "")
			require.Equal(t, http.StatusOK, r.Status, r.Body)
			assert.NotContains(t, r.Body, secret, path)
			assert.Contains(t, r.Body, `"name":"api_key","default":"***"`, path)
			assert.Contains(t, r.Body, `"name":"org_key","default":""`, path)
			assert.Contains(t, r.Body, `"name":"language","default":"English"`, path)
		}
	}
	check(t, secret)
	assert.Equal(t, secret, options[1].Default, "the Config's description is not changed")

	options[1].Default = later
	require.NoError(t, e.Server.SetAgents([]aap2agui.AgentConfig{{Agent: aap.AgentInfo{Name: agentName, Options: options}, Upstream: demoAgent(t)}}))
	check(t, later)
}
