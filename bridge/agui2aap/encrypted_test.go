package agui2aap_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A RunAgentInput whose messages carry encryptedValue (@ag-ui/core 1.0:
// a reasoning message with its provider's signature, an assistant message
// with its own) is accepted; AAP has no field for the values, so they do
// not reach the AAP server (docs/MAPPING.md, "AG-UI 1.0").
func TestEncryptedValuesAccepted(t *testing.T) {
	e := newEnv(t)
	c := e.conv("weather-encrypted")
	c.Tools = []types.Tool{weatherTool}
	c.say("what is the weather in Paris?")
	r := c.run(t)
	require.Len(t, r.Calls, 1)
	call := r.Calls[0]
	for i, m := range c.Messages {
		if m.Role == types.RoleAssistant {
			c.Messages[i].EncryptedValue = "gAAAAmsg"
			c.Messages = slices.Insert(c.Messages, i, types.Message{ID: c.newID("reasoning"), Role: types.RoleReasoning, Content: "checking", EncryptedValue: "EqQBsig=="})
			break
		}
	}
	c.Messages = append(c.Messages, types.Message{ID: c.newID("tool"), Role: types.RoleTool, ToolCallID: call.ID, Content: "Sunny", EncryptedValue: "gAAAAtool"})
	r = c.run(t)
	assert.Equal(t, "success", r.outcome())
	b, err := json.Marshal(e.history(t, e.onlySession(t)))
	require.NoError(t, err)
	assert.NotContains(t, string(b), "gAAAA")
	assert.NotContains(t, string(b), "EqQB")
}
