package aap2agui_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/store"
)

// An agent's server tool and a tool it runs on its own cannot share a
// name: New refuses the Config.
func TestOwnToolDeclaredTwice(t *testing.T) {
	_, err := aap2agui.New(aap2agui.Config{Upstream: "http://127.0.0.1:1", Store: store.NewMemory(),
		Agent: aap.AgentInfo{Tools: []aap.ToolSpec{{Name: "web_search"}}}, OwnTools: []aap.ToolSpec{{Name: "web_search"}}})
	assert.ErrorContains(t, err, `"web_search" is declared twice`)
}
