package agui

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"

	"github.com/aapagui/aapagui/internal/jsonenc"
)

// ErrNilEvent is returned by AppendEvent for a nil event (a nil interface or
// a nil pointer).
var ErrNilEvent = errors.New("agui: nil AG-UI event")

// ErrNilBaseEvent is returned (wrapped) by AppendEvent for an event whose
// embedded *events.BaseEvent is nil: such an event has no type, and calling
// its Type method would panic.
var ErrNilBaseEvent = errors.New("agui: AG-UI event with a nil BaseEvent")

// AppendFrame appends ev as one SSE frame, "data: " then its JSON
// (AppendEvent) and a blank line: AppendEvent writes compact JSON, which
// has no raw line breaks, so one data line holds it. On error dst is
// returned unchanged.
func AppendFrame(dst []byte, ev events.Event) ([]byte, error) {
	start := len(dst)
	dst = append(dst, "data: "...)
	dst, err := AppendEvent(dst, ev)
	if err != nil {
		return dst[:start], err
	}
	return append(dst, '\n', '\n'), nil
}

// AppendTextContentFrame appends the frame AppendFrame appends for a
// TEXT_MESSAGE_CONTENT of messageID and delta without a timestamp, byte
// for byte, without an event: a stream's usual event, which agui2aap
// writes so (translate.AAPToAGUI.AddTextDelta).
func AppendTextContentFrame(dst []byte, messageID, delta string) []byte {
	dst = appendStringMember(dst, `data: {"type":"`+string(events.EventTypeTextMessageContent)+`","messageId":`, messageID)
	dst = appendStringMember(dst, `,"delta":`, delta)
	return append(dst, "}\n\n"...)
}

// AppendEvent appends the JSON encoding of ev to dst, without a trailing
// newline. The bytes are exactly those json.Encoder with SetEscapeHTML(false)
// writes for the struct (the SDK's field order and omitempty rules), minus
// the newline: <, > and & are never escaped.
//
// The per-token and lifecycle events (RUN_STARTED, RUN_FINISHED without a
// Result, RUN_ERROR, TEXT_MESSAGE_START/CONTENT/END, REASONING_START/END,
// REASONING_MESSAGE_START/CONTENT/END, TOOL_CALL_START/ARGS/END/RESULT) are
// written by hand and do not allocate when dst has room, and so are the
// text messages of a MESSAGES_SNAPSHOT; an event with a RawEvent, and
// every other type, goes through encoding/json. An *UnknownEvent is
// written as its Raw JSON, compacted.
//
// A nil event gives ErrNilEvent and an event with a nil BaseEvent an error
// wrapping ErrNilBaseEvent; on error dst is returned unchanged.
func AppendEvent(dst []byte, ev events.Event) ([]byte, error) {
	switch e := ev.(type) {
	case *events.TextMessageContentEvent:
		if e != nil && fastBase(e.BaseEvent) {
			dst = appendEventHead(dst, e.BaseEvent)
			dst = appendStringMember(dst, `,"messageId":`, e.MessageID)
			dst = appendStringMember(dst, `,"delta":`, e.Delta)
			return append(dst, '}'), nil
		}
	case *events.ToolCallArgsEvent:
		if e != nil && fastBase(e.BaseEvent) {
			dst = appendEventHead(dst, e.BaseEvent)
			dst = appendStringMember(dst, `,"toolCallId":`, e.ToolCallID)
			dst = appendStringMember(dst, `,"delta":`, e.Delta)
			return append(dst, '}'), nil
		}
	case *events.ReasoningMessageContentEvent:
		if e != nil && fastBase(e.BaseEvent) {
			dst = appendEventHead(dst, e.BaseEvent)
			dst = appendStringMember(dst, `,"messageId":`, e.MessageID)
			dst = appendStringMember(dst, `,"delta":`, e.Delta)
			return append(dst, '}'), nil
		}
	default:
		if out, ok := appendMessageEvent(dst, ev); ok {
			return out, nil
		}
		if out, ok := appendToolOrRunEvent(dst, ev); ok {
			return out, nil
		}
	}
	return appendEncoded(dst, ev)
}

// appendMessageEvent writes the lifecycle events of text and reasoning
// messages by hand, as AppendEvent does; false (dst unchanged) for any
// other event, or one the hand-written encoders cannot write.
func appendMessageEvent(dst []byte, ev events.Event) ([]byte, bool) {
	switch e := ev.(type) {
	case *events.TextMessageStartEvent:
		if e != nil && fastBase(e.BaseEvent) {
			dst = appendEventHead(dst, e.BaseEvent)
			dst = appendStringMember(dst, `,"messageId":`, e.MessageID)
			if e.Role != nil {
				dst = appendStringMember(dst, `,"role":`, *e.Role)
			}
			return append(dst, '}'), true
		}
	case *events.TextMessageEndEvent:
		if e != nil && fastBase(e.BaseEvent) {
			return appendOneString(dst, e.BaseEvent, `,"messageId":`, e.MessageID), true
		}
	case *events.ReasoningStartEvent:
		if e != nil && fastBase(e.BaseEvent) {
			return appendOneString(dst, e.BaseEvent, `,"messageId":`, e.MessageID), true
		}
	case *events.ReasoningEndEvent:
		if e != nil && fastBase(e.BaseEvent) {
			return appendOneString(dst, e.BaseEvent, `,"messageId":`, e.MessageID), true
		}
	case *events.ReasoningMessageStartEvent:
		if e != nil && fastBase(e.BaseEvent) {
			dst = appendEventHead(dst, e.BaseEvent)
			dst = appendStringMember(dst, `,"messageId":`, e.MessageID)
			dst = appendStringMember(dst, `,"role":`, e.Role)
			return append(dst, '}'), true
		}
	case *events.ReasoningMessageEndEvent:
		if e != nil && fastBase(e.BaseEvent) {
			return appendOneString(dst, e.BaseEvent, `,"messageId":`, e.MessageID), true
		}
	case *events.MessagesSnapshotEvent:
		if e != nil && fastBase(e.BaseEvent) {
			// A whole conversation: its text messages by hand (see
			// MarshalRunAgentInput).
			if out, err := appendMessages(appendEventHead(dst, e.BaseEvent), e.Messages); err == nil {
				return append(out, '}'), true
			}
		}
	}
	return dst, false
}

// appendToolOrRunEvent writes the tool call and run lifecycle events by
// hand, as AppendEvent does; false (dst unchanged) for any other event, or
// one the hand-written encoders cannot write.
func appendToolOrRunEvent(dst []byte, ev events.Event) ([]byte, bool) {
	switch e := ev.(type) {
	case *events.ToolCallStartEvent:
		if e != nil && fastBase(e.BaseEvent) {
			dst = appendEventHead(dst, e.BaseEvent)
			dst = appendStringMember(dst, `,"toolCallId":`, e.ToolCallID)
			dst = appendStringMember(dst, `,"toolCallName":`, e.ToolCallName)
			if e.ParentMessageID != nil {
				dst = appendStringMember(dst, `,"parentMessageId":`, *e.ParentMessageID)
			}
			return append(dst, '}'), true
		}
	case *events.ToolCallEndEvent:
		if e != nil && fastBase(e.BaseEvent) {
			return appendOneString(dst, e.BaseEvent, `,"toolCallId":`, e.ToolCallID), true
		}
	case *events.ToolCallResultEvent:
		if e != nil && fastBase(e.BaseEvent) {
			dst = appendEventHead(dst, e.BaseEvent)
			dst = appendStringMember(dst, `,"messageId":`, e.MessageID)
			dst = appendStringMember(dst, `,"toolCallId":`, e.ToolCallID)
			dst = appendStringMember(dst, `,"content":`, e.Content)
			if e.Role != nil {
				dst = appendStringMember(dst, `,"role":`, *e.Role)
			}
			return append(dst, '}'), true
		}
	case *events.RunStartedEvent:
		if e != nil && fastBase(e.BaseEvent) {
			dst = appendEventHead(dst, e.BaseEvent)
			dst = appendStringMember(dst, `,"threadId":`, e.ThreadIDValue)
			dst = appendStringMember(dst, `,"runId":`, e.RunIDValue)
			return append(dst, '}'), true
		}
	case *events.RunFinishedEvent:
		if e != nil && fastBase(e.BaseEvent) && e.Result == nil && (e.Outcome == nil || len(e.Outcome.Interrupts) == 0) {
			dst = appendEventHead(dst, e.BaseEvent)
			dst = appendStringMember(dst, `,"threadId":`, e.ThreadIDValue)
			dst = appendStringMember(dst, `,"runId":`, e.RunIDValue)
			if e.Outcome != nil {
				dst = appendStringMember(dst, `,"outcome":{"type":`, string(e.Outcome.Type))
				dst = append(dst, '}')
			}
			return append(dst, '}'), true
		}
	case *events.RunErrorEvent:
		if e != nil && fastBase(e.BaseEvent) {
			dst = appendEventHead(dst, e.BaseEvent)
			if e.Code != nil {
				dst = appendStringMember(dst, `,"code":`, *e.Code)
			}
			dst = appendStringMember(dst, `,"message":`, e.Message)
			if e.RunIDValue != "" {
				dst = appendStringMember(dst, `,"runId":`, e.RunIDValue)
			}
			return append(dst, '}'), true
		}
	}
	return dst, false
}

// fastBase reports whether the hand-written encoders can write an event
// with this base: it exists and has no RawEvent (an arbitrary value).
func fastBase(b *events.BaseEvent) bool {
	return b != nil && b.RawEvent == nil
}

// appendEventHead appends `{"type":…` and the timestamp, if any.
func appendEventHead(dst []byte, b *events.BaseEvent) []byte {
	dst = appendStringMember(dst, `{"type":`, string(b.EventType))
	if b.TimestampMs != nil {
		dst = append(dst, `,"timestamp":`...)
		dst = strconv.AppendInt(dst, *b.TimestampMs, 10)
	}
	return dst
}

// appendOneString appends a whole event whose only field is a string.
func appendOneString(dst []byte, b *events.BaseEvent, name, value string) []byte {
	dst = appendEventHead(dst, b)
	dst = appendStringMember(dst, name, value)
	return append(dst, '}')
}

// appendStringMember appends prefix (punctuation and the quoted key) and
// the JSON string s.
func appendStringMember(dst []byte, prefix, s string) []byte {
	dst = append(dst, prefix...)
	return jsonenc.AppendString(dst, s)
}

// appendWriter is an io.Writer appending to a byte slice.
type appendWriter struct{ buf []byte }

// Write implements io.Writer.
func (w *appendWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	return len(p), nil
}

// appendEncoded is AppendEvent's slow path: encoding/json for SDK structs,
// the compacted Raw for an *UnknownEvent.
func appendEncoded(dst []byte, ev events.Event) ([]byte, error) {
	if err := CheckEvent(ev); err != nil {
		return dst, err
	}
	if u, ok := ev.(*UnknownEvent); ok {
		return appendUnknown(dst, u)
	}
	w := appendWriter{buf: dst}
	if err := jsonenc.Encode(&w, ev); err != nil {
		return dst, fmt.Errorf("agui: encode AG-UI %s event: %w", ev.GetBaseEvent().EventType, err)
	}
	out := w.buf
	if n := len(out); n > len(dst) && out[n-1] == '\n' {
		out = out[:n-1]
	}
	return out, nil
}
