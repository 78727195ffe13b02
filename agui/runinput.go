package agui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/aapagui/aapagui/internal/jsonenc"
)

// runInputWire mirrors types.RunAgentInput with plain camelCase fields, so
// that encoding/json decodes it directly: the SDK's own UnmarshalJSON goes
// through a map per object (to accept snake_case keys), which makes a long
// history several times slower to read.
type runInputWire struct {
	ThreadID       string              `json:"threadId"`
	RunID          string              `json:"runId"`
	ParentRunID    *string             `json:"parentRunId"`
	State          any                 `json:"state"`
	Messages       []messageWire       `json:"messages"`
	Tools          []types.Tool        `json:"tools"`
	Context        []types.Context     `json:"context"`
	ForwardedProps any                 `json:"forwardedProps"`
	Resume         []types.ResumeEntry `json:"resume"`
}

type messageWire struct {
	ID               string           `json:"id"`
	Role             types.Role       `json:"role"`
	Content          json.RawMessage  `json:"content"`
	Name             string           `json:"name"`
	EncryptedContent string           `json:"encryptedContent"`
	EncryptedValue   string           `json:"encryptedValue"`
	ToolCalls        []types.ToolCall `json:"toolCalls"`
	ToolCallID       string           `json:"toolCallId"`
	Error            string           `json:"error"`
	ActivityType     string           `json:"activityType"`
}

// snakeKeys are the snake_case spellings the SDK accepts; a body that uses
// any of them is decoded by the SDK.
var snakeKeys = [][]byte{
	[]byte(`"thread_id"`), []byte(`"run_id"`), []byte(`"parent_run_id"`), []byte(`"forwarded_props"`),
	[]byte(`"tool_calls"`), []byte(`"tool_call_id"`), []byte(`"encrypted_content"`), []byte(`"encrypted_value"`),
	[]byte(`"activity_type"`), []byte(`"interrupt_id"`),
}

// hasSnakeKey reports whether data holds any of snakeKeys. It is one pass
// over the underscores of data, each checked against the keys that could
// hold it there: every key holds one, and an underscore is rare in a
// conversation, where the keys' opening quote is everywhere (ten searches
// for them, each stopping at every quote, were most of the cost of reading
// a long history).
func hasSnakeKey(data []byte) bool {
	for i := 0; ; {
		j := bytes.IndexByte(data[i:], '_')
		if j < 0 {
			return false
		}
		p := i + j
		for _, k := range snakeKeys {
			for at, c := range k {
				if c == '_' && p >= at && bytes.HasPrefix(data[p-at:], k) {
					return true
				}
			}
		}
		i = p + 1
	}
}

// escapesLetter reports whether data writes an ASCII letter or an
// underscore as an escape (\u0074, \u005f): a name so written may be one
// of snakeKeys, which only the SDK's decoder reads as such. No encoder
// writes a letter so; a body that does goes to the SDK's decoder.
func escapesLetter(data []byte) bool {
	for i := 0; ; {
		j := bytes.Index(data[i:], []byte(`\u00`))
		if j < 0 {
			return false
		}
		p := i + j + len(`\u00`)
		if p+2 <= len(data) {
			if v, err := strconv.ParseUint(string(data[p:p+2]), 16, 8); err == nil {
				if c := byte(v); c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' {
					return true
				}
			}
		}
		i = p
	}
}

// DecodeRunAgentInput decodes a RunAgentInput as the SDK does (camelCase
// keys, and the snake_case ones the SDK also accepts), faster for the
// common camelCase body.
func DecodeRunAgentInput(data []byte) (*types.RunAgentInput, error) {
	in, err := DecodeRunAgentInputLazy(data)
	if err != nil {
		return nil, err
	}
	for i := range in.Messages {
		if raw, ok := in.Messages[i].Content.(json.RawMessage); ok {
			if in.Messages[i].Content, err = DecodeContent(raw); err != nil {
				return nil, err
			}
		}
	}
	return in, nil
}

// DecodeRunAgentInputLazy is DecodeRunAgentInput leaving each message's
// content as json.RawMessage, for a caller that reads the content of only
// some messages (a proxy that forwards only what is new): the cost of a
// long history is then little more than scanning it. The functions of this
// package that read content (MessagesToAAP, TurnFromAGUI, …) accept it.
func DecodeRunAgentInputLazy(data []byte) (*types.RunAgentInput, error) {
	if hasSnakeKey(data) || escapesLetter(data) {
		var in types.RunAgentInput
		if err := json.Unmarshal(data, &in); err != nil {
			return nil, err
		}
		return &in, nil
	}
	if in, ok := decodeSkippingContents(data); ok {
		return in, nil
	}
	return decodeWire(data)
}

// decodeWire decodes a camelCase RunAgentInput through runInputWire, each
// message's content left raw.
func decodeWire(data []byte) (*types.RunAgentInput, error) {
	var w runInputWire
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, err
	}
	in := &types.RunAgentInput{
		ThreadID: w.ThreadID, RunID: w.RunID, ParentRunID: w.ParentRunID, State: w.State,
		Tools: w.Tools, Context: w.Context, ForwardedProps: w.ForwardedProps, Resume: w.Resume,
	}
	if w.Messages != nil {
		in.Messages = make([]types.Message, len(w.Messages))
		for i, m := range w.Messages {
			var content any
			if len(m.Content) > 0 && string(m.Content) != "null" {
				content = m.Content
			}
			in.Messages[i] = types.Message{
				ID: m.ID, Role: m.Role, Content: content, Name: m.Name, EncryptedContent: m.EncryptedContent,
				EncryptedValue: m.EncryptedValue, ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID, Error: m.Error,
				ActivityType: m.ActivityType,
			}
		}
	}
	return in, nil
}

// DecodeContent decodes a message content left as raw JSON by
// DecodeRunAgentInputLazy; any other value is returned as it is.
func DecodeContent(c any) (any, error) {
	raw, ok := c.(json.RawMessage)
	if !ok {
		return c, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("content: %w", err)
	}
	return v, nil
}

// PatchToolCallValues adds to the RunAgentInput JSON body the
// encryptedValue of each tool call named in values (toolCallId → value),
// which the AG-UI SDK's ToolCall has no field for. A body with none of
// them is left as it was.
func PatchToolCallValues(body []byte, values map[string]string) ([]byte, error) {
	if len(values) == 0 {
		return body, nil
	}
	return patchMessages(body, func(m map[string]json.RawMessage) (bool, error) {
		return patchCalls(m, func(id string, c map[string]json.RawMessage) bool {
			val, ok := values[id]
			if ok {
				c["encryptedValue"], _ = json.Marshal(val)
			}
			return ok
		})
	})
}

// patchMessages calls edit with each message of the "messages" array of
// the JSON object body, and writes the body again when an edit changed
// one; body as it was otherwise.
func patchMessages(body []byte, edit func(m map[string]json.RawMessage) (bool, error)) ([]byte, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return nil, err
	}
	var msgs []json.RawMessage
	if err := json.Unmarshal(top["messages"], &msgs); err != nil {
		return nil, err
	}
	changed := false
	for i, raw := range msgs {
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			continue
		}
		hit, err := edit(m)
		if err != nil {
			return nil, err
		}
		if !hit {
			continue
		}
		if msgs[i], err = jsonenc.Marshal(m); err != nil {
			return nil, err
		}
		changed = true
	}
	if !changed {
		return body, nil
	}
	var err error
	if top["messages"], err = jsonenc.Marshal(msgs); err != nil {
		return nil, err
	}
	return jsonenc.Marshal(top)
}

// patchCalls calls edit with each tool call of the message m (by its id),
// and writes m's toolCalls again when an edit changed one.
func patchCalls(m map[string]json.RawMessage, edit func(id string, c map[string]json.RawMessage) bool) (bool, error) {
	if m["toolCalls"] == nil {
		return false, nil
	}
	var calls []map[string]json.RawMessage
	if json.Unmarshal(m["toolCalls"], &calls) != nil {
		return false, nil
	}
	hit := false
	for _, c := range calls {
		var id string
		if json.Unmarshal(c["id"], &id) == nil && edit(id, c) {
			hit = true
		}
	}
	if !hit {
		return false, nil
	}
	var err error
	m["toolCalls"], err = jsonenc.Marshal(calls)
	return err == nil, err
}

// Metadata is the AG-UI metadata (@ag-ui/core 1.0) of messages, by
// message id, and of tool calls, by toolCallId, each a JSON object: what
// the AG-UI SDK's Message and ToolCall have no field for.
type Metadata struct {
	Messages  map[string]json.RawMessage
	ToolCalls map[string]json.RawMessage
}

// PatchMetadata sets, in the JSON body of an object with a "messages"
// array (a RunAgentInput, a MESSAGES_SNAPSHOT), the metadata of each
// message and tool call meta names; body is left as it is when meta
// names none of them.
func PatchMetadata(body []byte, meta Metadata) ([]byte, error) {
	if len(meta.Messages)+len(meta.ToolCalls) == 0 {
		return body, nil
	}
	return patchMessages(body, func(m map[string]json.RawMessage) (bool, error) {
		hit := false
		var id string
		if json.Unmarshal(m["id"], &id) == nil {
			if v, ok := meta.Messages[id]; ok {
				m["metadata"], hit = v, true
			}
		}
		if len(meta.ToolCalls) == 0 {
			return hit, nil
		}
		calls, err := patchCalls(m, func(id string, c map[string]json.RawMessage) bool {
			v, ok := meta.ToolCalls[id]
			if ok {
				c["metadata"] = v
			}
			return ok
		})
		return hit || calls, err
	})
}
