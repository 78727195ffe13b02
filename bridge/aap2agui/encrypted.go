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
	x := &runExtras{values: map[string]string{}}
	for _, entries := range lists {
		for _, e := range entries {
			v := translate.ParseEncryptedValues(e.AGUI)
			if v == nil {
				continue
			}
			maps.Copy(x.values, v.ToolCalls)
			if len(v.Metadata) > 0 {
				x.meta.Messages = setMeta(x.meta.Messages, e.AGUIID, v.Metadata)
			}
			for id, m := range v.ToolCallMetadata {
				x.meta.ToolCalls = setMeta(x.meta.ToolCalls, id, m)
			}
		}
	}
	return x
}

func setMeta(m map[string]json.RawMessage, k string, v json.RawMessage) map[string]json.RawMessage {
	if m == nil {
		m = map[string]json.RawMessage{}
	}
	m[k] = v
	return m
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
