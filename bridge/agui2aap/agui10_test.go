package agui2aap_test

import (
	"encoding/json"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
)

// TestToolMessageContentParts: a tool message whose content is an array of
// content parts (@ag-ui/core 1.0) is no 400: its text and image parts
// reach the AAP server as tool-result blocks, a part AAP cannot hold (an
// audio part here) as a text block holding the part's JSON.
func TestToolMessageContentParts(t *testing.T) {
	e := newEnv(t)
	c := e.conv("weather-parts")
	c.Tools = []types.Tool{weatherTool}
	c.say("what is the weather in Paris?")
	r := c.run(t)
	require.Len(t, r.Calls, 1)
	call := r.Calls[0]

	var parts []any
	require.NoError(t, json.Unmarshal([]byte(`[{"type":"text","text":"Sunny"},`+
		`{"type":"image","source":{"type":"url","value":"https://example.com/sun.png"}},`+
		`{"type":"audio","source":{"type":"data","value":"AAAA","mimeType":"audio/wav"}}]`), &parts))
	c.Messages = append(c.Messages, types.Message{ID: c.newID("tool"), Role: types.RoleTool, ToolCallID: call.ID, Content: parts})
	r = c.run(t)
	assert.Equal(t, "success", r.outcome())

	hist := e.history(t, e.onlySession(t))
	var tool *aap.ToolMessage
	for _, m := range hist {
		if tm, ok := m.(*aap.ToolMessage); ok && tm.ToolCallID == call.ID {
			tool = tm
		}
	}
	require.NotNil(t, tool, "the AAP session holds the result")
	b, err := json.Marshal(tool)
	require.NoError(t, err)
	assert.JSONEq(t, `{"role":"tool","toolCallId":"`+call.ID+`","content":[{"type":"text","text":"Sunny"},`+
		`{"type":"image","url":"https://example.com/sun.png"},`+
		`{"type":"text","text":"{\"source\":{\"mimeType\":\"audio/wav\",\"type\":\"data\",\"value\":\"AAAA\"},\"type\":\"audio\"}"}]}`, string(b),
		"the part as the client sent it (this client writes keys sorted)")
}
