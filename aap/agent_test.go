package aap_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/aapagui/aapagui/aap"
)

func TestAgentConfigOverride(t *testing.T) {
	base := func() aap.AgentConfig {
		return aap.AgentConfig{Name: "demo", Tools: []aap.ServerToolRef{{Name: "web_search", Trust: true}},
			Options: map[string]string{"language": "French", "model": "a"}}
	}
	a := base()
	a.Override(nil)
	assert.Equal(t, base(), a, "nil changes nothing")

	a.Override(&aap.AgentConfig{Name: "other", Options: map[string]string{"model": "b"}})
	assert.Equal(t, "demo", a.Name, "the name never changes")
	assert.Equal(t, map[string]string{"language": "French", "model": "b"}, a.Options, "options merge by key")
	assert.Equal(t, base().Tools, a.Tools, "tools not given stay")

	a.Override(&aap.AgentConfig{Tools: []aap.ServerToolRef{}})
	assert.Empty(t, a.Tools, "an empty list disables every server tool")
	assert.NotNil(t, a.Tools)
}
