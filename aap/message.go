package aap

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/aapagui/aapagui/internal/jsonenc"
)

// Role names the author of a message.
type Role string

// The message roles of AAP v3.
const (
	RoleSystem         Role = "system"
	RoleUser           Role = "user"
	RoleAssistant      Role = "assistant"
	RoleTool           Role = "tool"
	RoleToolPermission Role = "tool_permission"
)

// Message is one message: *SystemMessage, *UserMessage, *AssistantMessage,
// *ToolMessage or *ToolPermissionMessage. The set is closed. The first four
// may appear in history; a tool permission appears only in a turn request.
type Message interface {
	Role() Role
	isMessage()
}

// SystemMessage gives the agent instructions.
type SystemMessage struct {
	Content string
}

// UserMessage is what the user said.
type UserMessage struct {
	Content Content
}

// AssistantMessage is what the agent said, with any thinking and tool calls
// as blocks.
type AssistantMessage struct {
	Content Content
}

// ToolMessage carries the result of a tool call.
type ToolMessage struct {
	ToolCallID string
	Content    Content
}

// ToolPermissionMessage grants or denies an untrusted server-side tool call.
type ToolPermissionMessage struct {
	ToolCallID string
	Granted    bool
	// Reason is optional, mostly useful when permission is denied.
	Reason string
}

// Role returns RoleSystem.
func (*SystemMessage) Role() Role { return RoleSystem }

// Role returns RoleUser.
func (*UserMessage) Role() Role { return RoleUser }

// Role returns RoleAssistant.
func (*AssistantMessage) Role() Role { return RoleAssistant }

// Role returns RoleTool.
func (*ToolMessage) Role() Role { return RoleTool }

// Role returns RoleToolPermission.
func (*ToolPermissionMessage) Role() Role { return RoleToolPermission }

func (*SystemMessage) isMessage()         {}
func (*UserMessage) isMessage()           {}
func (*AssistantMessage) isMessage()      {}
func (*ToolMessage) isMessage()           {}
func (*ToolPermissionMessage) isMessage() {}

// UserText returns a user message with string content.
func UserText(s string) *UserMessage { return &UserMessage{Content: TextContent(s)} }

// MarshalJSON encodes the message with its role.
func (m *SystemMessage) MarshalJSON() ([]byte, error) { return AppendMessage(nil, m) }

// MarshalJSON encodes the message with its role.
func (m *UserMessage) MarshalJSON() ([]byte, error) { return AppendMessage(nil, m) }

// MarshalJSON encodes the message with its role.
func (m *AssistantMessage) MarshalJSON() ([]byte, error) { return AppendMessage(nil, m) }

// MarshalJSON encodes the message with its role.
func (m *ToolMessage) MarshalJSON() ([]byte, error) { return AppendMessage(nil, m) }

// MarshalJSON encodes the message with its role; an empty Reason is omitted.
func (m *ToolPermissionMessage) MarshalJSON() ([]byte, error) { return AppendMessage(nil, m) }

// MessageSize is about what m holds: the bytes of its strings (its text,
// ids, reasons, tool inputs, image URLs), and how many content blocks it
// has, for a caller to add its own cost per block (what a copy of the
// message takes in memory, or in its JSON).
func MessageSize(m Message) (size, blocks int) {
	var c Content
	switch m := m.(type) {
	case *SystemMessage:
		size += len(m.Content)
	case *UserMessage:
		c = m.Content
	case *AssistantMessage:
		c = m.Content
	case *ToolMessage:
		c = m.Content
		size += len(m.ToolCallID)
	case *ToolPermissionMessage:
		size += len(m.ToolCallID) + len(m.Reason)
	}
	size += len(c.Text)
	for _, b := range c.Blocks {
		switch b := b.(type) {
		case *TextBlock:
			size += len(b.Text)
		case *ThinkingBlock:
			size += len(b.Thinking)
		case *ToolUseBlock:
			size += len(b.ToolCallID) + len(b.Name) + len(b.Input)
		case *ImageBlock:
			size += len(b.URL)
		}
	}
	return size, len(c.Blocks)
}

// AppendMessage appends m's JSON to dst, with its role: compact, as
// encoding/json writes it without HTML escaping (jsonenc.Marshal), and
// without encoding/json's second pass over what a message's MarshalJSON
// wrote.
func AppendMessage(dst []byte, m Message) ([]byte, error) {
	switch m := m.(type) {
	case *SystemMessage:
		dst = append(dst, `{"role":"system","content":`...)
		return append(jsonenc.AppendString(dst, m.Content), '}'), nil
	case *UserMessage:
		return appendRoleContent(dst, `{"role":"user","content":`, m.Content)
	case *AssistantMessage:
		return appendRoleContent(dst, `{"role":"assistant","content":`, m.Content)
	case *ToolMessage:
		dst = append(dst, `{"role":"tool","toolCallId":`...)
		dst = jsonenc.AppendString(dst, m.ToolCallID)
		return appendRoleContent(dst, `,"content":`, m.Content)
	case *ToolPermissionMessage:
		dst = append(dst, `{"role":"tool_permission","toolCallId":`...)
		dst = jsonenc.AppendString(dst, m.ToolCallID)
		dst = append(dst, `,"granted":`...)
		dst = strconv.AppendBool(dst, m.Granted)
		if m.Reason != "" {
			dst = append(dst, `,"reason":`...)
			dst = jsonenc.AppendString(dst, m.Reason)
		}
		return append(dst, '}'), nil
	}
	return dst, fmt.Errorf("aap: cannot encode message %T", m)
}

// appendRoleContent appends prefix, c and the closing brace.
func appendRoleContent(dst []byte, prefix string, c Content) ([]byte, error) {
	dst, err := appendContent(append(dst, prefix...), c)
	if err != nil {
		return nil, err
	}
	return append(dst, '}'), nil
}

type wireMessage struct {
	Role       *string         `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID *string         `json:"toolCallId"`
	Granted    *bool           `json:"granted"`
	Reason     *string         `json:"reason"`
}

// DecodeMessage decodes one message of any role, checking its required
// fields. Whether the role is allowed where the message appears is for the
// caller (see DecodeHistory and PostSessionTurnRequest) to decide.
func DecodeMessage(data []byte) (Message, error) {
	if m, ok := decodeTextMessage(data); ok {
		return m, nil
	}
	return decodeMessage(data)
}

// decodeMessage is DecodeMessage's general decoder.
func decodeMessage(data []byte) (Message, error) {
	var w wireMessage
	if err := decodeObject(data, &w); err != nil {
		return nil, err
	}
	if w.Role == nil {
		return nil, fieldErr("role", "required")
	}
	content := func() (Content, error) {
		if w.Content == nil {
			return Content{}, fieldErr("content", "required")
		}
		c, err := decodeContent(w.Content)
		return c, within("content", err)
	}
	switch Role(*w.Role) {
	case RoleSystem:
		if w.Content == nil {
			return nil, fieldErr("content", "required")
		}
		if firstByte(w.Content) != '"' {
			return nil, fieldErr("content", "must be a string for a system message")
		}
		var s string
		if err := json.Unmarshal(w.Content, &s); err != nil {
			return nil, jsonErr("content", err)
		}
		return &SystemMessage{Content: s}, nil
	case RoleUser:
		c, err := content()
		if err != nil {
			return nil, err
		}
		return &UserMessage{Content: c}, nil
	case RoleAssistant:
		c, err := content()
		if err != nil {
			return nil, err
		}
		return &AssistantMessage{Content: c}, nil
	case RoleTool:
		if w.ToolCallID == nil || *w.ToolCallID == "" {
			return nil, fieldErr("toolCallId", "required for a tool message")
		}
		c, err := content()
		if err != nil {
			return nil, err
		}
		return &ToolMessage{ToolCallID: *w.ToolCallID, Content: c}, nil
	case RoleToolPermission:
		if w.ToolCallID == nil || *w.ToolCallID == "" {
			return nil, fieldErr("toolCallId", "required for a tool_permission message")
		}
		if w.Granted == nil {
			return nil, fieldErr("granted", "required for a tool_permission message")
		}
		m := &ToolPermissionMessage{ToolCallID: *w.ToolCallID, Granted: *w.Granted}
		if w.Reason != nil {
			m.Reason = *w.Reason
		}
		return m, nil
	}
	return nil, fieldErr("role", "unknown role %q", *w.Role)
}

// decodeMessages decodes a JSON array of messages, passing each through
// check (which may reject a role where it is not allowed).
func decodeMessages(raws []json.RawMessage, check func(Message) error) ([]Message, error) {
	out := make([]Message, 0, len(raws))
	for i, raw := range raws {
		m, err := DecodeMessage(raw)
		if err == nil && check != nil {
			err = check(m)
		}
		if err != nil {
			return nil, within(index("", i), err)
		}
		out = append(out, m)
	}
	return out, nil
}

func historyOnly(m Message) error {
	if m.Role() == RoleToolPermission {
		return fieldErr("role", "tool_permission messages are only allowed in a turn, never in history")
	}
	return nil
}

// DecodeHistory decodes a JSON array of history messages (system, user,
// assistant, tool).
//
// The array is split into its messages in one pass (jsonenc.SplitArray)
// and each message decoded strictly; a history that does not decode so is
// read again by encoding/json, which says what is wrong with it.
func DecodeHistory(data []byte) ([]Message, error) {
	if raws, ok := jsonenc.SplitArray(data); ok {
		if msgs, err := decodeMessages(raws, historyOnly); err == nil {
			return msgs, nil
		}
	}
	return decodeHistoryGeneral(data)
}

// decodeHistoryGeneral is DecodeHistory by encoding/json alone.
func decodeHistoryGeneral(data []byte) ([]Message, error) {
	var raws []json.RawMessage
	if firstByte(data) != '[' {
		return nil, &DecodeError{Reason: "must be an array of messages"}
	}
	if err := json.Unmarshal(data, &raws); err != nil {
		return nil, jsonErr("", err)
	}
	return decodeMessages(raws, historyOnly)
}

// CheckTurnMessages checks the shape AAP requires of a turn's messages:
// exactly one user message, or one or more tool results and tool
// permissions (in any mix), with no toolCallId answered twice.
func CheckTurnMessages(msgs []Message) error {
	if len(msgs) == 0 {
		return fieldErr("messages", "must hold one user message, or tool results and tool permissions")
	}
	if msgs[0].Role() == RoleUser {
		if len(msgs) > 1 {
			return fieldErr("messages", "a user message must be the only message of its turn (got %d messages)", len(msgs))
		}
		return nil
	}
	seen := make(map[string]bool, len(msgs))
	for i, m := range msgs {
		var id string
		switch m := m.(type) {
		case *ToolMessage:
			id = m.ToolCallID
		case *ToolPermissionMessage:
			id = m.ToolCallID
		default:
			return fieldErr(index("messages", i)+".role", "%q is not allowed here: a turn holds one user message, or tool results and tool permissions", m.Role())
		}
		if seen[id] {
			return fieldErr(index("messages", i)+".toolCallId", "%q is answered more than once in this turn", id)
		}
		seen[id] = true
	}
	return nil
}

// DecodeTurnMessages decodes the JSON array of a turn's messages and checks
// its shape with CheckTurnMessages.
func DecodeTurnMessages(data []byte) ([]Message, error) {
	var raws []json.RawMessage
	if firstByte(data) != '[' {
		return nil, fieldErr("messages", "must be an array of messages")
	}
	if err := json.Unmarshal(data, &raws); err != nil {
		return nil, jsonErr("messages", err)
	}
	msgs, err := decodeMessages(raws, nil)
	if err != nil {
		return nil, within("messages", err)
	}
	return msgs, CheckTurnMessages(msgs)
}

// decodeTextMessage decodes, without the general decoder, the commonest
// message as this package writes it: {"role":"user","content":"…"} or the
// assistant's, its strings plain (jsonenc.CutPlain). ok is false for any
// other form, which the general decoder reads. The general decoder scans
// the text twice (the message, then its content); this is one pass.
func decodeTextMessage(data []byte) (m Message, ok bool) {
	rest, ok := bytes.CutPrefix(data, []byte(`{"role":"`))
	if !ok {
		return nil, false
	}
	role, rest, ok := jsonenc.CutPlain(rest)
	if !ok || (role != string(RoleUser) && role != string(RoleAssistant)) {
		return nil, false
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"content":"`)); !ok {
		return nil, false
	}
	text, rest, ok := jsonenc.CutPlain(rest)
	if !ok || string(rest) != "}" {
		return nil, false
	}
	if role == string(RoleUser) {
		return &UserMessage{Content: TextContent(text)}, true
	}
	return &AssistantMessage{Content: TextContent(text)}, true
}
