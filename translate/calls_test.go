package translate_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/aapagui/aapagui/translate"
)

func TestCallFromInterrupt(t *testing.T) {
	tests := []struct {
		name, in       string
		id, tool, args string // tool "": not ok
	}{
		{
			name: "Mastra's suspend: metadata.mastra, args kept byte for byte",
			in:   `{"id":"r1::c1","reason":"mastra:tool_suspend","toolCallId":"c1","metadata":{"mastra":{"toolName":"publish","args":{"z":1.50,"a":"<b>"}}}}`,
			id:   "c1", tool: "publish", args: `{"z":1.50,"a":"<b>"}`,
		},
		{
			name: "metadata.aap is read first; no arguments are {}",
			in:   `{"id":"i","reason":"x","toolCallId":"c2","metadata":{"zz":{"toolName":"other"},"aap":{"toolName":"web_search"}}}`,
			id:   "c2", tool: "web_search", args: `{}`,
		},
		{
			name: "arguments as a JSON string, snake_case names",
			in:   `{"id":"i","reason":"x","tool_call_id":"c3","metadata":{"lg":{"tool_name":"f","arguments":"{\"q\": 1}"}}}`,
			id:   "c3", tool: "f", args: `{"q":1}`,
		},
		{name: "no tool name", in: `{"id":"i","reason":"x","toolCallId":"c4","metadata":{"m":{"args":{}}}}`},
		{name: "no toolCallId", in: `{"id":"i","reason":"x","metadata":{"m":{"toolName":"f"}}}`},
		{name: "not an object", in: `[1]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, call, ok := translate.CallFromInterrupt(json.RawMessage(tt.in))
			if tt.tool == "" {
				assert.False(t, ok)
				return
			}
			assert.True(t, ok)
			assert.Equal(t, tt.id, id)
			assert.Equal(t, tt.tool, call.Name)
			assert.Equal(t, tt.args, string(call.Input))
		})
	}
}
