package agui

import (
	"slices"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/aapagui/aapagui/internal/jsonenc"
)

// MarshalRunAgentInput is the JSON of in, byte for byte what
// jsonenc.Marshal writes, with each message of text (a string content and
// no tool calls: most of a long conversation) written by hand instead of
// by the reflection encoder, whose string escaping was most of the cost of
// sending a long conversation upstream.
func MarshalRunAgentInput(in *types.RunAgentInput) ([]byte, error) {
	size := 256
	for i := range in.Messages {
		if s, ok := in.Messages[i].Content.(string); ok {
			size += len(s) + 64
		}
	}
	b := make([]byte, 0, size)
	b = append(b, `{"threadId":`...)
	b = jsonenc.AppendString(b, in.ThreadID)
	b = append(b, `,"runId":`...)
	b = jsonenc.AppendString(b, in.RunID)
	if in.ParentRunID != nil {
		b = append(b, `,"parentRunId":`...)
		b = jsonenc.AppendString(b, *in.ParentRunID)
	}
	var err error
	if b, err = appendField(b, `,"state":`, in.State); err != nil {
		return nil, err
	}
	if b, err = appendMessages(b, in.Messages); err != nil {
		return nil, err
	}
	if b, err = appendField(b, `,"tools":`, in.Tools); err != nil {
		return nil, err
	}
	if b, err = appendField(b, `,"context":`, in.Context); err != nil {
		return nil, err
	}
	if b, err = appendField(b, `,"forwardedProps":`, in.ForwardedProps); err != nil {
		return nil, err
	}
	if len(in.Resume) > 0 {
		if b, err = appendField(b, `,"resume":`, in.Resume); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// appendField appends key and v as jsonenc.Marshal writes it.
func appendField(b []byte, key string, v any) ([]byte, error) {
	data, err := jsonenc.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(append(b, key...), data...), nil
}

func appendMessages(b []byte, msgs []types.Message) ([]byte, error) {
	b = append(b, `,"messages":`...)
	if msgs == nil {
		return append(b, "null"...), nil
	}
	b = append(slices.Grow(b, messagesSize(msgs)), '[')
	for i := range msgs {
		if i > 0 {
			b = append(b, ',')
		}
		m := &msgs[i]
		text, isText := m.Content.(string)
		if !isText && m.Content != nil || len(m.ToolCalls) > 0 {
			data, err := jsonenc.Marshal(m)
			if err != nil {
				return nil, err
			}
			b = append(b, data...)
			continue
		}
		b = appendTextMessage(b, m, text, isText)
	}
	return append(b, ']'), nil
}

// messagesSize is about the bytes appendMessages writes of msgs: each
// message's id and text and its JSON's frame (escapes, calls and parts
// take more, which append grows into), so that a long conversation is
// written into one allocation of its size, not append's sequence of
// copies each a quarter larger (five times the conversation in all).
func messagesSize(msgs []types.Message) int {
	n := 2
	for i := range msgs {
		m := &msgs[i]
		n += len(m.ID) + len(m.ToolCallID) + len(`{"id":"","role":"assistant","content":""},`)
		if text, ok := m.Content.(string); ok {
			n += len(text)
		}
	}
	return n
}

// appendTextMessage writes m, whose content is text (or none) and which
// has no tool calls, with the fields of types.Message in their order and
// their omitempty rules.
func appendTextMessage(b []byte, m *types.Message, text string, hasContent bool) []byte {
	b = append(b, `{"id":`...)
	b = jsonenc.AppendString(b, m.ID)
	b = append(b, `,"role":`...)
	b = jsonenc.AppendString(b, string(m.Role))
	if hasContent {
		b = append(b, `,"content":`...)
		b = jsonenc.AppendString(b, text)
	}
	for _, f := range [...]struct{ key, value string }{
		{`,"name":`, m.Name}, {`,"encryptedContent":`, m.EncryptedContent}, {`,"encryptedValue":`, m.EncryptedValue},
		{`,"toolCallId":`, m.ToolCallID}, {`,"error":`, m.Error}, {`,"activityType":`, m.ActivityType},
	} {
		if f.value != "" {
			b = jsonenc.AppendString(append(b, f.key...), f.value)
		}
	}
	return append(b, '}')
}
