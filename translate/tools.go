package translate

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/aapagui/aapagui/aap"
)

// ToolsToAGUI translates AAP tool specs to AG-UI tools. AG-UI tools have no
// title; it is dropped. Parameters pass through as raw JSON.
func ToolsToAGUI(specs []aap.ToolSpec) []types.Tool {
	if specs == nil {
		return nil
	}
	out := make([]types.Tool, len(specs))
	for i, s := range specs {
		var params any = s.Parameters
		if len(s.Parameters) == 0 {
			params = json.RawMessage(emptySchema)
		}
		out[i] = types.Tool{Name: s.Name, Description: s.Description, Parameters: params}
	}
	return out
}

const emptySchema = `{"type":"object","properties":{}}`

// ToolsToAAP translates AG-UI tools to AAP tool specs. A tool without
// parameters gets an empty object schema; parameters that are not a JSON
// object, or a tool without a name, are an error naming the tool.
func ToolsToAAP(tools []types.Tool) ([]aap.ToolSpec, error) {
	if tools == nil {
		return nil, nil
	}
	out := make([]aap.ToolSpec, len(tools))
	for i, t := range tools {
		if t.Name == "" {
			return nil, fmt.Errorf("tools[%d]: name is required", i)
		}
		var raw json.RawMessage
		switch p := t.Parameters.(type) {
		case nil:
			raw = json.RawMessage(emptySchema)
		case json.RawMessage:
			raw = p
		default:
			b, err := json.Marshal(p)
			if err != nil {
				return nil, fmt.Errorf("tools[%d] (%s): parameters: %w", i, t.Name, err)
			}
			raw = b
		}
		raw = json.RawMessage(bytes.TrimLeft(raw, " \t\r\n"))
		if len(raw) == 0 || raw[0] != '{' || !json.Valid(raw) {
			return nil, fmt.Errorf("tools[%d] (%s): parameters must be a JSON Schema object", i, t.Name)
		}
		out[i] = aap.ToolSpec{Name: t.Name, Description: t.Description, Parameters: raw}
	}
	return out, nil
}
