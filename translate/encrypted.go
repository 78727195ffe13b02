package translate

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/aapagui/aapagui/aap"
)

// EncryptedValues are what AG-UI says of one AAP history message that AAP
// has no field for: the opaque reasoning values an agent gave with it
// (AG-UI 1.0 encryptedValue on a message or a tool call,
// REASONING_ENCRYPTED_VALUE) and its metadata and its tool calls'. A
// bridge keeps them beside the message (store.Entry.AGUI) and sends them
// back with it in every later RunAgentInput (ApplyEncrypted, and
// agui.PatchRunInput for what the SDK's types have no field for), never
// to a plain AAP client (docs/MAPPING.md).
type EncryptedValues struct {
	// Value is the encryptedValue of the message itself (assistant, user,
	// tool or system).
	Value string `json:"encryptedValue,omitempty"`
	// Reasoning are the values of the reasoning messages the message
	// holds as thinking blocks, or that had no text.
	Reasoning []EncryptedReasoning `json:"reasoning,omitempty"`
	// ToolCalls maps the toolCallId of a tool_use of the message to its
	// value.
	ToolCalls map[string]string `json:"toolCalls,omitempty"`
	// Metadata is the message's AG-UI metadata (@ag-ui/core 1.0: an
	// object, what the events that built it said, merged key by key, the
	// last write winning), as JSON.
	Metadata json.RawMessage `json:"metadata,omitempty"`
	// ToolCallMetadata maps the toolCallId of a tool_use of the message to
	// the call's own metadata.
	ToolCallMetadata map[string]json.RawMessage `json:"toolCallMetadata,omitempty"`
}

// EncryptedReasoning is the value of one reasoning message.
type EncryptedReasoning struct {
	// ID is the reasoning message's id as the agent sent it ("" when it
	// had none); it goes back under that id.
	ID string `json:"id,omitempty"`
	// Block is the index of the message's thinking block that the
	// reasoning message is; with Alone, the index of the thinking block
	// it goes before (their count: after the last).
	Block int `json:"block"`
	// Alone: the reasoning message had no text, so no thinking block is
	// it; it goes back as a reasoning message with empty content.
	Alone bool   `json:"alone,omitempty"`
	Value string `json:"encryptedValue"`
}

func (v *EncryptedValues) empty() bool {
	return v == nil || v.Value == "" && len(v.Reasoning) == 0 && len(v.ToolCalls) == 0 && len(v.Metadata) == 0 && len(v.ToolCallMetadata) == 0
}

// JSON is v as stored (store.Entry.AGUI): nil when v holds nothing.
func (v *EncryptedValues) JSON() json.RawMessage {
	if v.empty() {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

// ParseEncryptedValues reads what JSON wrote; nil for nil or anything else.
func ParseEncryptedValues(raw json.RawMessage) *EncryptedValues {
	if len(raw) == 0 {
		return nil
	}
	var v EncryptedValues
	if json.Unmarshal(raw, &v) != nil || v.empty() {
		return nil
	}
	return &v
}

// SnapshotEncrypted gives, for each AAP message MessagesToAAP makes of
// msgs, the JSON of its EncryptedValues (nil when none): the
// encryptedValue of each message and, read from data (the
// MESSAGES_SNAPSHOT event's JSON, whose messages msgs are; the AG-UI SDK
// has no field for it), of each tool call. A reasoning message folds into
// the assistant message after it by the rule MessagesToAAP folds by
// (foldMessages).
func SnapshotEncrypted(msgs []types.Message, data []byte) []json.RawMessage {
	callValues := snapshotCallValues(data, len(msgs))
	msgMeta, callMeta := snapshotMetadata(data, len(msgs))
	var out []json.RawMessage
	_ = foldMessages(msgs, func(reasoning []int, at int) error {
		v := &EncryptedValues{}
		for block, i := range reasoning {
			if val := msgs[i].EncryptedValue; val != "" {
				v.Reasoning = append(v.Reasoning, EncryptedReasoning{ID: msgs[i].ID, Block: block, Value: val})
			}
		}
		if at >= 0 {
			v.Value = msgs[at].EncryptedValue
			if msgs[at].Role == types.RoleAssistant && at < len(callValues) {
				v.ToolCalls = callValues[at]
			}
			if at < len(msgMeta) {
				v.Metadata, v.ToolCallMetadata = msgMeta[at], callMeta[at]
			}
		}
		out = append(out, v.JSON())
		return nil
	})
	return out
}

// snapshotCallValues reads the encryptedValue of each tool call of the n
// messages of a MESSAGES_SNAPSHOT's JSON, by message index; nil when none.
func snapshotCallValues(data []byte, n int) []map[string]string {
	if !bytes.Contains(data, []byte("encryptedValue")) {
		return nil
	}
	var w struct {
		Messages []struct {
			ToolCalls []struct {
				ID             string `json:"id"`
				EncryptedValue string `json:"encryptedValue"`
			} `json:"toolCalls"`
		} `json:"messages"`
	}
	if json.Unmarshal(data, &w) != nil || len(w.Messages) != n {
		return nil
	}
	out := make([]map[string]string, n)
	for i, m := range w.Messages {
		for _, c := range m.ToolCalls {
			if c.ID != "" && c.EncryptedValue != "" {
				if out[i] == nil {
					out[i] = map[string]string{}
				}
				out[i][c.ID] = c.EncryptedValue
			}
		}
	}
	return out
}

// ApplyEncrypted puts the values stored with a history entry (raw, its
// store.Entry.AGUI) back on the AG-UI messages AppendMessageToAGUI made of
// it, msgs[from:] (id: the entry's AG-UI id): the message's own value, each
// reasoning message's (under the id the agent gave it; one that had no text
// is added back with empty content, where it was). The values of tool calls,
// which the AG-UI SDK's ToolCall cannot carry, are added to calls (toolCallId
// → value) for PatchToolCallValues. It returns the messages.
func ApplyEncrypted(msgs []types.Message, from int, id string, raw json.RawMessage, calls map[string]string) []types.Message {
	v := ParseEncryptedValues(raw)
	if v == nil || from > len(msgs) {
		return msgs
	}
	own := msgs[from:]
	for i := range own {
		if own[i].ID == id && own[i].Role != types.RoleReasoning {
			if v.Value != "" {
				own[i].EncryptedValue = v.Value
			}
			for _, c := range own[i].ToolCalls {
				if val, ok := v.ToolCalls[c.ID]; ok && calls != nil {
					calls[c.ID] = val
				}
			}
		}
	}
	if len(v.Reasoning) == 0 {
		return msgs
	}
	rebuilt := make([]types.Message, 0, len(own)+len(v.Reasoning))
	block := 0
	alone := func(upTo int) {
		for _, r := range v.Reasoning {
			if r.Alone && (r.Block == upTo || upTo < 0 && r.Block >= block) {
				rebuilt = append(rebuilt, types.Message{ID: aloneID(r, id, block), Role: types.RoleReasoning, Content: "", EncryptedValue: r.Value})
			}
		}
	}
	for _, m := range own {
		if m.Role == types.RoleReasoning {
			alone(block)
			for _, r := range v.Reasoning {
				if !r.Alone && r.Block == block {
					m.EncryptedValue = r.Value
					if r.ID != "" {
						m.ID = r.ID
					}
				}
			}
			block++
		} else if m.ID == id {
			alone(-1)
		}
		rebuilt = append(rebuilt, m)
	}
	return append(msgs[:from], rebuilt...)
}

func aloneID(r EncryptedReasoning, id string, block int) string {
	if r.ID != "" {
		return r.ID
	}
	return fmt.Sprintf("%s-encrypted-%d", id, block)
}

// ThinkingPositions gives, in order, the message index and the thinking
// block index (within that message) of every thinking block of msgs.
func ThinkingPositions(msgs []aap.Message) (pos [][2]int) {
	for i, m := range msgs {
		am, ok := m.(*aap.AssistantMessage)
		if !ok || !am.Content.IsBlocks() {
			continue
		}
		n := 0
		for _, b := range am.Content.Blocks {
			if _, ok := b.(*aap.ThinkingBlock); ok {
				pos = append(pos, [2]int{i, n})
				n++
			}
		}
	}
	return pos
}
