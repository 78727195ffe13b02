package aap2agui

import (
	"encoding/json"
	"maps"

	"github.com/aapagui/aapagui/agui"

	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/translate"
)

// runExtras are what a run's messages hold that the AG-UI SDK's types
// cannot carry, added to the run's JSON (agent.post): the tool calls'
// encrypted values (toolCallId → value) and the messages' and tool
// calls' metadata.
type runExtras struct {
	values map[string]string
	meta   agui.Metadata
}

// storedExtras gives what the entries of each list keep of their
// messages that the AG-UI SDK's types cannot carry (store.Entry.AGUI).
func storedExtras(lists ...[]store.Entry) *runExtras {
	x := &runExtras{values: map[string]string{},
		meta: agui.Metadata{Messages: map[string]json.RawMessage{}, ToolCalls: map[string]json.RawMessage{}}}
	for _, entries := range lists {
		for _, e := range entries {
			v := translate.ParseEncryptedValues(e.AGUI)
			if v == nil {
				continue
			}
			maps.Copy(x.values, v.ToolCalls)
			if len(v.Metadata) > 0 {
				x.meta.Messages[e.AGUIID] = v.Metadata
			}
			maps.Copy(x.meta.ToolCalls, v.ToolCallMetadata)
		}
	}
	return x
}

// patch adds the extras to a RunAgentInput's JSON (nil x: none).
func (x *runExtras) patch(data []byte) ([]byte, error) {
	if x == nil {
		return data, nil
	}
	data, err := agui.PatchToolCallValues(data, x.values)
	if err != nil {
		return nil, err
	}
	return agui.PatchMetadata(data, x.meta)
}
