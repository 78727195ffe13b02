package aap

import (
	"bytes"
	"encoding/json"
	"errors"
	"unicode/utf8"

	"github.com/aapagui/aapagui/internal/jsonenc"
)

// EventName is the SSE event name of a streaming-turn event.
type EventName string

// The SSE event names of AAP v3.
const (
	EventTurnStart     EventName = "turn_start"
	EventTextDelta     EventName = "text_delta"     // delta mode only
	EventThinkingDelta EventName = "thinking_delta" // delta mode only
	EventText          EventName = "text"           // message mode only
	EventThinking      EventName = "thinking"       // message mode only
	EventToolCall      EventName = "tool_call"
	EventToolResult    EventName = "tool_result" // server-side tools only
	EventTurnStop      EventName = "turn_stop"
	// EventSessionStart opens the stream of PUT /session (versions 1 and
	// 2), before turn_start.
	EventSessionStart EventName = "session_start"
)

// Event is one event of a streaming turn. The set is closed apart from
// *UnknownEvent, which stands for a name this package does not know.
type Event interface {
	// EventName is the SSE event name.
	EventName() EventName
	// AppendData appends the JSON of the event's data field.
	AppendData(dst []byte) ([]byte, error)
}

// TurnStart opens every turn stream.
type TurnStart struct{}

// TextDelta is a piece of the agent's text.
type TextDelta struct{ Delta string }

// ThinkingDelta is a piece of the agent's thinking.
type ThinkingDelta struct{ Delta string }

// Text is one whole text message.
type Text struct{ Text string }

// Thinking is one whole thinking message.
type Thinking struct{ Thinking string }

// ToolCall is a call the agent makes to a tool.
type ToolCall struct {
	ToolCallID string
	Name       string
	// Input is the JSON object of arguments, kept byte for byte.
	Input json.RawMessage
}

// ToolResult is the result of a server-side tool call.
type ToolResult struct {
	ToolCallID string
	Content    Content
}

// TurnStop closes every turn stream.
type TurnStop struct {
	StopReason StopReason
	// Error names what ended an error stop, when the bridge knows (an
	// extension of AAP: "error":{"code","message"} beside stopReason,
	// which AAP clients ignore); nil otherwise.
	Error *TurnError
}

// TurnError names what ended a turn with an error stop (TurnStop.Error).
type TurnError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// SessionStart opens the stream of PUT /session in versions 1 and 2: the
// id of the session just created, before the first turn's turn_start.
type SessionStart struct{ SessionID string }

// UnknownEvent is an event whose name this package does not know, kept so
// that a reader can skip it without failing the stream.
type UnknownEvent struct {
	Name EventName
	Data json.RawMessage
}

// EventName returns EventTurnStart.
func (*TurnStart) EventName() EventName { return EventTurnStart }

// EventName returns EventTextDelta.
func (*TextDelta) EventName() EventName { return EventTextDelta }

// EventName returns EventThinkingDelta.
func (*ThinkingDelta) EventName() EventName { return EventThinkingDelta }

// EventName returns EventText.
func (*Text) EventName() EventName { return EventText }

// EventName returns EventThinking.
func (*Thinking) EventName() EventName { return EventThinking }

// EventName returns EventToolCall.
func (*ToolCall) EventName() EventName { return EventToolCall }

// EventName returns EventToolResult.
func (*ToolResult) EventName() EventName { return EventToolResult }

// EventName returns EventTurnStop.
func (*TurnStop) EventName() EventName { return EventTurnStop }

// EventName returns EventSessionStart.
func (*SessionStart) EventName() EventName { return EventSessionStart }

// EventName returns the unknown name.
func (e *UnknownEvent) EventName() EventName { return e.Name }

// AppendData appends {}.
func (*TurnStart) AppendData(dst []byte) ([]byte, error) { return append(dst, '{', '}'), nil }

// AppendData appends {"delta":…}.
func (e *TextDelta) AppendData(dst []byte) ([]byte, error) {
	return appendStringField(dst, `{"delta":`, e.Delta), nil
}

// AppendData appends {"delta":…}.
func (e *ThinkingDelta) AppendData(dst []byte) ([]byte, error) {
	return appendStringField(dst, `{"delta":`, e.Delta), nil
}

// AppendData appends {"text":…}.
func (e *Text) AppendData(dst []byte) ([]byte, error) {
	return appendStringField(dst, `{"text":`, e.Text), nil
}

// AppendData appends {"thinking":…}.
func (e *Thinking) AppendData(dst []byte) ([]byte, error) {
	return appendStringField(dst, `{"thinking":`, e.Thinking), nil
}

// AppendData appends {"toolCallId":…,"name":…,"input":…} with Input
// compacted ({} when empty). Input that is not a JSON object is an error.
func (e *ToolCall) AppendData(dst []byte) ([]byte, error) {
	dst = append(dst, `{"toolCallId":`...)
	dst = jsonenc.AppendString(dst, e.ToolCallID)
	dst = append(dst, `,"name":`...)
	dst = jsonenc.AppendString(dst, e.Name)
	dst = append(dst, `,"input":`...)
	dst, err := AppendInput(dst, e.Input)
	if err != nil {
		return dst, err
	}
	return append(dst, '}'), nil
}

// AppendData appends {"toolCallId":…,"content":…}.
func (e *ToolResult) AppendData(dst []byte) ([]byte, error) {
	dst = append(dst, `{"toolCallId":`...)
	dst = jsonenc.AppendString(dst, e.ToolCallID)
	dst = append(dst, `,"content":`...)
	dst, err := appendContent(dst, e.Content)
	if err != nil {
		return dst, err
	}
	return append(dst, '}'), nil
}

// AppendData appends {"stopReason":…}, and "error":{"code":…,"message":…}
// when Error is set.
func (e *TurnStop) AppendData(dst []byte) ([]byte, error) {
	if e.Error == nil {
		return appendStringField(dst, `{"stopReason":`, string(e.StopReason)), nil
	}
	dst = append(dst, `{"stopReason":`...)
	dst = jsonenc.AppendString(dst, string(e.StopReason))
	dst = append(dst, `,"error":{"code":`...)
	dst = jsonenc.AppendString(dst, e.Error.Code)
	dst = append(dst, `,"message":`...)
	dst = jsonenc.AppendString(dst, e.Error.Message)
	return append(dst, '}', '}'), nil
}

// AppendData appends {"sessionId":…}.
func (e *SessionStart) AppendData(dst []byte) ([]byte, error) {
	return appendStringField(dst, `{"sessionId":`, e.SessionID), nil
}

// AppendData appends the data as it was received, compacted.
func (e *UnknownEvent) AppendData(dst []byte) ([]byte, error) {
	if len(e.Data) == 0 {
		return append(dst, '{', '}'), nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, e.Data); err != nil {
		return dst, err
	}
	return append(dst, buf.Bytes()...), nil
}

func appendStringField(dst []byte, prefix, s string) []byte {
	dst = append(dst, prefix...)
	dst = jsonenc.AppendString(dst, s)
	return append(dst, '}')
}

// ErrInputNotObject reports tool input that is not a JSON object.
var ErrInputNotObject = errors.New("aap: tool input must be a JSON object")

// AppendInput appends tool input compacted, writing {} for empty input. It
// fails with ErrInputNotObject (wrapped) when input is not a JSON object.
func AppendInput(dst []byte, input json.RawMessage) ([]byte, error) {
	if len(input) == 0 {
		return append(dst, '{', '}'), nil
	}
	if firstByte(input) != '{' {
		return dst, ErrInputNotObject
	}
	if isCompact(input) && json.Valid(input) {
		return append(dst, input...), nil
	}
	buf := bytes.NewBuffer(dst)
	if err := json.Compact(buf, input); err != nil {
		return dst, errors.Join(ErrInputNotObject, err)
	}
	return buf.Bytes(), nil
}

// isCompact reports whether b has no insignificant whitespace, checking
// cheaply: whitespace outside strings is the only thing Compact removes.
func isCompact(b []byte) bool {
	inString, escaped := false, false
	for _, c := range b {
		switch {
		case escaped:
			escaped = false
		case inString:
			switch c {
			case '\\':
				escaped = true
			case '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			return false
		}
	}
	return true
}

// DecodeEvent decodes the data of an SSE event with the given name. An
// unknown name yields *UnknownEvent, not an error; data that does not fit
// the named event yields a *DecodeError.
func DecodeEvent(name string, data []byte) (Event, error) {
	n := EventName(name)
	var ev Event
	var err error
	switch n {
	case EventTurnStart:
		if firstByte(data) != '{' {
			return nil, &DecodeError{Field: name, Reason: "data must be a JSON object"}
		}
		if !json.Valid(data) {
			return nil, &DecodeError{Field: name, Reason: "data is not valid JSON"}
		}
		return &TurnStart{}, nil
	case EventTextDelta, EventThinkingDelta:
		if d, ok := fastDelta(data); ok {
			if n == EventTextDelta {
				return &TextDelta{Delta: string(d)}, nil
			}
			return &ThinkingDelta{Delta: string(d)}, nil
		}
		ev, err = decodeDelta(n, data)
	case EventText:
		ev, err = decodeText(data)
	case EventThinking:
		ev, err = decodeThinking(data)
	case EventToolCall:
		ev, err = decodeToolCall(data)
	case EventToolResult:
		ev, err = decodeToolResult(data)
	case EventSessionStart:
		ev, err = decodeSessionStart(data)
	case EventTurnStop:
		ev, err = decodeTurnStop(data)
	case EventAGUI:
		ev, err = decodeAGUIEvent(data)
	default:
		return &UnknownEvent{Name: n, Data: bytes.Clone(data)}, nil
	}
	if err != nil {
		return nil, within(name, err)
	}
	return ev, nil
}

// The decoders of each event's data, for DecodeEvent: an error is the
// event's field's, which DecodeEvent places within the event's name.

// decodeDelta decodes text_delta or thinking_delta (n) by encoding/json,
// where fastDelta does not answer.
func decodeDelta(n EventName, data []byte) (Event, error) {
	var w struct {
		Delta *string `json:"delta"`
	}
	if err := decodeObject(data, &w); err != nil {
		return nil, err
	}
	if w.Delta == nil {
		return nil, fieldErr("delta", "required")
	}
	if n == EventTextDelta {
		return &TextDelta{Delta: *w.Delta}, nil
	}
	return &ThinkingDelta{Delta: *w.Delta}, nil
}

func decodeText(data []byte) (Event, error) {
	var w struct {
		Text *string `json:"text"`
	}
	if err := decodeObject(data, &w); err != nil {
		return nil, err
	}
	if w.Text == nil {
		return nil, fieldErr("text", "required")
	}
	return &Text{Text: *w.Text}, nil
}

func decodeThinking(data []byte) (Event, error) {
	var w struct {
		Thinking *string `json:"thinking"`
	}
	if err := decodeObject(data, &w); err != nil {
		return nil, err
	}
	if w.Thinking == nil {
		return nil, fieldErr("thinking", "required")
	}
	return &Thinking{Thinking: *w.Thinking}, nil
}

func decodeToolCall(data []byte) (Event, error) {
	var w struct {
		ToolCallID *string         `json:"toolCallId"`
		Name       *string         `json:"name"`
		Input      json.RawMessage `json:"input"`
	}
	if err := decodeObject(data, &w); err != nil {
		return nil, err
	}
	switch {
	case w.ToolCallID == nil || *w.ToolCallID == "":
		return nil, fieldErr("toolCallId", "required")
	case w.Name == nil || *w.Name == "":
		return nil, fieldErr("name", "required")
	}
	in, err := decodeInput(w.Input)
	if err != nil {
		return nil, within("input", err)
	}
	return &ToolCall{ToolCallID: *w.ToolCallID, Name: *w.Name, Input: in}, nil
}

func decodeToolResult(data []byte) (Event, error) {
	var w struct {
		ToolCallID *string         `json:"toolCallId"`
		Content    json.RawMessage `json:"content"`
	}
	if err := decodeObject(data, &w); err != nil {
		return nil, err
	}
	switch {
	case w.ToolCallID == nil || *w.ToolCallID == "":
		return nil, fieldErr("toolCallId", "required")
	case w.Content == nil:
		return nil, fieldErr("content", "required")
	}
	c, err := decodeContent(w.Content)
	if err != nil {
		return nil, within("content", err)
	}
	return &ToolResult{ToolCallID: *w.ToolCallID, Content: c}, nil
}

func decodeSessionStart(data []byte) (Event, error) {
	var w struct {
		SessionID *string `json:"sessionId"`
	}
	if err := decodeObject(data, &w); err != nil {
		return nil, err
	}
	if w.SessionID == nil || *w.SessionID == "" {
		return nil, fieldErr("sessionId", "required")
	}
	return &SessionStart{SessionID: *w.SessionID}, nil
}

func decodeTurnStop(data []byte) (Event, error) {
	var w struct {
		StopReason *StopReason `json:"stopReason"`
		Error      *TurnError  `json:"error"`
	}
	if err := decodeObject(data, &w); err != nil {
		return nil, err
	}
	switch {
	case w.StopReason == nil:
		return nil, fieldErr("stopReason", "required")
	case !w.StopReason.Valid():
		return nil, fieldErr("stopReason", "unknown stop reason %q", *w.StopReason)
	}
	return &TurnStop{StopReason: *w.StopReason, Error: w.Error}, nil
}

// fastDelta decodes the data of text_delta and thinking_delta as every
// known agent writes it, {"delta":"…"} with nothing to unescape, without
// encoding/json. For anything else (whitespace, other keys, escapes,
// control characters, invalid UTF-8) it reports false and DecodeEvent
// takes the encoding/json path; where it answers, the result is exactly
// encoding/json's (FuzzDecodeDeltaFast checks). The delta is returned as
// the bytes of data that hold it, which need no unescaping.
func fastDelta(data []byte) ([]byte, bool) {
	const prefix, suffix = `{"delta":"`, `"}`
	if len(data) < len(prefix)+len(suffix) || string(data[:len(prefix)]) != prefix || string(data[len(data)-len(suffix):]) != suffix {
		return nil, false
	}
	s := data[len(prefix) : len(data)-len(suffix)]
	ascii := true
	for _, c := range s {
		if c < 0x20 || c == '"' || c == '\\' {
			return nil, false
		}
		if c >= utf8.RuneSelf {
			ascii = false
		}
	}
	if !ascii && !utf8.Valid(s) {
		return nil, false // encoding/json replaces invalid bytes with U+FFFD
	}
	return s, true
}
