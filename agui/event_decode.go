package agui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"

	"github.com/aapagui/aapagui/internal/jsonenc"
	"github.com/aapagui/aapagui/internal/slab"
)

// EventDecodeError reports AG-UI event JSON that DecodeEvent cannot turn into
// an event: not a JSON object, malformed JSON, a missing, empty or non-string
// "type", or a field whose JSON type does not fit the event struct.
type EventDecodeError struct {
	// Type is the event's "type" when it could be read, else empty.
	Type events.EventType
	// Field is the JSON field at fault, as encoding/json names it ("delta",
	// or "delta.op" for a nested value), empty when the problem is with the
	// document as a whole.
	Field string
	// Reason says what is wrong, e.g. "expected a string, got number".
	Reason string
	// Err is the underlying encoding/json error, if any.
	Err error
}

// Error names the event type and the field when known, then the reason.
func (e *EventDecodeError) Error() string {
	var b strings.Builder
	b.WriteString("agui: AG-UI ")
	if e.Type != "" {
		b.WriteString(string(e.Type))
		b.WriteByte(' ')
	}
	b.WriteString("event: ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Reason)
	return b.String()
}

// Unwrap returns the underlying encoding/json error, if any.
func (e *EventDecodeError) Unwrap() error { return e.Err }

// DecodeEvent decodes one AG-UI event JSON object into the AG-UI Go SDK
// struct for its "type". Unlike the SDK's own decoders it knows every event
// type the SDK has a struct for, including TOOL_CALL_CHUNK,
// TEXT_MESSAGE_CHUNK, REASONING_MESSAGE_CHUNK, REASONING_ENCRYPTED_VALUE and
// the deprecated THINKING_* events, and an unknown type is not an error: it
// yields an *UnknownEvent holding a copy of data.
//
// The returned event always has a non-nil BaseEvent whose EventType is the
// decoded type. Fields are matched the way encoding/json matches them (case
// insensitively, the last duplicate wins, null leaves a field unset); unknown
// fields are ignored.
//
// DecodeEvent checks the JSON only: it does not enforce the fields that the
// SDK's Validate methods require (an empty delta, a missing messageId), so
// callers that need them call Validate on the result. Errors are
// *EventDecodeError. data is not retained.
func DecodeEvent(data []byte) (events.Event, error) { return decodeEvent(nil, data) }

// Decoder decodes the events of one AG-UI stream exactly as [DecodeEvent]
// does, more cheaply for a long run: the per-token events (text and
// reasoning content, tool call arguments) are allocated in slabs, their
// deltas' texts in chunks of bytes, and a message or tool call id equal to
// the previous one is shared rather than allocated again, so that a delta
// costs a fraction of an allocation. Every event and every string is still
// its own value, never reused or changed; keeping one keeps its slab or
// chunk (a few KiB) alive. The zero value is ready to use; a Decoder is
// not safe for concurrent use.
type Decoder struct {
	text      []fastBox[events.TextMessageContentEvent]
	reasoning []fastBox[events.ReasoningMessageContentEvent]
	args      []fastBox[events.ToolCallArgsEvent]
	texts     slab.Text // the deltas with nothing to unescape
	lastID    string
	plain     bool // the last event was read by the fast path
	deep      bool // DecodeText left the last event to Decode
}

// Decode decodes one event; see [DecodeEvent].
func (d *Decoder) Decode(data []byte) (events.Event, error) { return decodeEvent(d, data) }

// Plain reports whether the JSON of the event Decode returned last held
// only members of its struct, spelt exactly (a per-token event's type,
// timestamp, id and delta): nothing more is to be found in it, a
// subagent's run id or a usage report included.
func (d *Decoder) Plain() bool { return d.plain }

// DecodeText is Decode, in the same one pass over data, as far as the
// decoder's own scanner reads an event, and no further:
//
//   - a TEXT_MESSAGE_CONTENT that Decode reads by its fast path (Plain)
//     with a plain message id and delta (no escape, valid UTF-8, neither
//     U+2028 nor U+2029: bytes written into a JSON string as they are) is
//     not made an event: ev is nil, and id and delta are the event's,
//     delta a part of data, not copied. A stream's deltas are most of it:
//     the caller passes them on without an event made of each (aap2agui,
//     AGUIToAAP.AddTextDelta), and decodes one it does not take with
//     Decode;
//   - any other event of the fast path is returned, as Decode returns it;
//   - an event that takes encoding/json (a RUN_STARTED, a tool call's
//     start, a STATE_SNAPSHOT, …) is left undecoded: ev is nil, Deep
//     reports it, and Decode reads it. Its decoding goes as deep as its
//     JSON: the caller may do it where a deep stack costs nothing.
//
// Malformed data is Decode's error.
func (d *Decoder) DecodeText(data []byte) (ev events.Event, id string, delta []byte, err error) {
	s := eventScan{data: data, dec: d}
	d.plain, d.deep = false, false
	if !s.scan() {
		return nil, "", nil, malformedEvent(s.typeSoFar(), data)
	}
	if id, delta, ok := s.plainText(); ok {
		d.plain = true
		return nil, id, delta, nil
	}
	if ev := s.fastEvent(); ev != nil {
		d.plain = true
		return ev, "", nil, nil
	}
	d.deep = true
	return nil, "", nil, nil
}

// Deep reports whether DecodeText left the last event undecoded, for
// Decode: it takes encoding/json.
func (d *Decoder) Deep() bool { return d.deep }

// plainText is the message id and delta of a TEXT_MESSAGE_CONTENT of the
// fast path whose id and delta are plain (DecodeText); the id is the
// decoder's last one when it is the same.
func (s *eventScan) plainText() (id string, delta []byte, ok bool) {
	if s.fastType() != events.EventTypeTextMessageContent {
		return "", nil, false
	}
	a, b := s.str[slotMessageID], s.str[slotDelta]
	if !a.set || a.flags != 0 || !b.set || b.flags != 0 {
		return "", nil, false
	}
	delta = s.data[b.start:b.end]
	if bytes.IndexByte(delta, 0xE2) >= 0 && !jsonenc.Plain(delta) { // U+2028 and U+2029 begin with 0xE2
		return "", nil, false
	}
	d := s.dec
	if raw := s.data[a.start:a.end]; string(raw) != d.lastID {
		d.lastID = string(raw)
	}
	return d.lastID, delta, true
}

func decodeEvent(d *Decoder, data []byte) (events.Event, error) {
	s := eventScan{data: data, dec: d}
	if d != nil {
		d.plain = false
	}
	if !s.scan() {
		return nil, malformedEvent(s.typeSoFar(), data)
	}
	return s.decode()
}

// decode makes the event of a scanned object: by the fast path, else
// through encoding/json.
func (s *eventScan) decode() (events.Event, error) {
	data := s.data
	if ev := s.fastEvent(); ev != nil {
		if s.dec != nil {
			s.dec.plain = true
		}
		return ev, nil
	}
	typ, err := s.eventType()
	if err != nil {
		return nil, err
	}
	ev := newEvent(typ)
	if ev == nil {
		ev = newEvent10(typ)
	}
	if ev == nil {
		if !json.Valid(data) {
			return nil, syntaxError(typ, data)
		}
		return &UnknownEvent{BaseEvent: &events.BaseEvent{EventType: typ}, Raw: bytes.Clone(data)}, nil
	}
	if err := json.Unmarshal(data, ev); err != nil {
		if typ != events.EventTypeToolCallResult || !contentIsArray(err) {
			return nil, decodeError(typ, err)
		}
		// @ag-ui/core 1.0: the result's content is an array of parts.
		ev = &ToolCallResultPartsEvent{BaseEvent: &events.BaseEvent{EventType: typ}}
		if err := json.Unmarshal(data, ev); err != nil {
			return nil, decodeError(typ, err)
		}
	}
	if got := ev.GetBaseEvent().EventType; got != typ {
		// Unreachable as long as eventScan reads "type" the way
		// encoding/json does; kept so that a disagreement is an error, not
		// a mislabelled event.
		return nil, &EventDecodeError{Type: typ, Field: "type", Reason: fmt.Sprintf("ambiguous: also read as %q", string(got))}
	}
	return ev, nil
}

// newEvent returns an empty event struct with a non-nil BaseEvent for typ,
// or nil when typ is not a type the SDK has a struct for. The list is
// checked against the SDK's constants by the tests.
func newEvent(typ events.EventType) events.Event {
	base := &events.BaseEvent{EventType: typ}
	switch typ {
	case events.EventTypeRunStarted:
		return &events.RunStartedEvent{BaseEvent: base}
	case events.EventTypeRunFinished:
		return &events.RunFinishedEvent{BaseEvent: base}
	case events.EventTypeRunError:
		return &events.RunErrorEvent{BaseEvent: base}
	case events.EventTypeStepStarted:
		return &events.StepStartedEvent{BaseEvent: base}
	case events.EventTypeStepFinished:
		return &events.StepFinishedEvent{BaseEvent: base}
	case events.EventTypeTextMessageStart:
		return &events.TextMessageStartEvent{BaseEvent: base}
	case events.EventTypeTextMessageContent:
		return &events.TextMessageContentEvent{BaseEvent: base}
	case events.EventTypeTextMessageEnd:
		return &events.TextMessageEndEvent{BaseEvent: base}
	case events.EventTypeTextMessageChunk:
		return &events.TextMessageChunkEvent{BaseEvent: base}
	case events.EventTypeToolCallStart:
		return &events.ToolCallStartEvent{BaseEvent: base}
	case events.EventTypeToolCallArgs:
		return &events.ToolCallArgsEvent{BaseEvent: base}
	case events.EventTypeToolCallEnd:
		return &events.ToolCallEndEvent{BaseEvent: base}
	case events.EventTypeToolCallChunk:
		return &events.ToolCallChunkEvent{BaseEvent: base}
	case events.EventTypeToolCallResult:
		return &events.ToolCallResultEvent{BaseEvent: base}
	case events.EventTypeStateSnapshot:
		return &events.StateSnapshotEvent{BaseEvent: base}
	case events.EventTypeStateDelta:
		return &events.StateDeltaEvent{BaseEvent: base}
	case events.EventTypeMessagesSnapshot:
		return &events.MessagesSnapshotEvent{BaseEvent: base}
	case events.EventTypeActivitySnapshot:
		return &events.ActivitySnapshotEvent{BaseEvent: base}
	case events.EventTypeActivityDelta:
		return &events.ActivityDeltaEvent{BaseEvent: base}
	case events.EventTypeRaw:
		return &events.RawEvent{BaseEvent: base}
	case events.EventTypeCustom:
		return &events.CustomEvent{BaseEvent: base}
	case events.EventTypeThinkingStart:
		return &events.ThinkingStartEvent{BaseEvent: base}
	case events.EventTypeThinkingEnd:
		return &events.ThinkingEndEvent{BaseEvent: base}
	case events.EventTypeThinkingTextMessageStart:
		return &events.ThinkingTextMessageStartEvent{BaseEvent: base}
	case events.EventTypeThinkingTextMessageContent:
		return &events.ThinkingTextMessageContentEvent{BaseEvent: base}
	case events.EventTypeThinkingTextMessageEnd:
		return &events.ThinkingTextMessageEndEvent{BaseEvent: base}
	case events.EventTypeReasoningStart:
		return &events.ReasoningStartEvent{BaseEvent: base}
	case events.EventTypeReasoningMessageStart:
		return &events.ReasoningMessageStartEvent{BaseEvent: base}
	case events.EventTypeReasoningMessageContent:
		return &events.ReasoningMessageContentEvent{BaseEvent: base}
	case events.EventTypeReasoningMessageEnd:
		return &events.ReasoningMessageEndEvent{BaseEvent: base}
	case events.EventTypeReasoningMessageChunk:
		return &events.ReasoningMessageChunkEvent{BaseEvent: base}
	case events.EventTypeReasoningEnd:
		return &events.ReasoningEndEvent{BaseEvent: base}
	case events.EventTypeReasoningEncryptedValue:
		return &events.ReasoningEncryptedValueEvent{BaseEvent: base}
	}
	return nil
}

// malformedEvent explains why data, which eventScan rejected, is not an
// event: it is either malformed JSON or valid JSON that is not an object.
// typ is the type read before the scan stopped, if any.
func malformedEvent(typ events.EventType, data []byte) *EventDecodeError {
	if err := syntaxError(typ, data); err != nil {
		return err
	}
	i := jsonenc.SkipSpace(data, 0)
	if data[i] == '{' {
		// Unreachable: eventScan accepts every valid JSON object.
		return &EventDecodeError{Reason: "unsupported JSON object"}
	}
	return &EventDecodeError{Reason: "not a JSON object (got " + jsonKindAt(data[i]) + ")"}
}

// syntaxError returns the encoding/json syntax error for data, or nil when
// data is valid JSON.
func syntaxError(typ events.EventType, data []byte) *EventDecodeError {
	if json.Valid(data) {
		return nil
	}
	var v struct{}
	err := json.Unmarshal(data, &v)
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		// json.Valid and json.Unmarshal disagree: cannot happen, but keep
		// the answer an error.
		return &EventDecodeError{Type: typ, Reason: "malformed JSON", Err: err}
	}
	return &EventDecodeError{Type: typ, Reason: "malformed JSON at byte " + strconv.FormatInt(se.Offset, 10) + ": " + se.Error(), Err: err}
}

// decodeError turns an encoding/json error into an *EventDecodeError.
func decodeError(typ events.EventType, err error) *EventDecodeError {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return &EventDecodeError{Type: typ, Reason: "malformed JSON at byte " + strconv.FormatInt(se.Offset, 10) + ": " + se.Error(), Err: err}
	case errors.As(err, &te):
		got := te.Value
		if got == "bool" {
			got = "boolean"
		}
		// encoding/json names the fields of the embedded BaseEvent through
		// its Go name; on the wire they are top-level fields.
		field := strings.TrimPrefix(te.Field, "BaseEvent.")
		return &EventDecodeError{Type: typ, Field: field, Reason: "expected " + jsonKindOf(te.Type) + ", got " + got, Err: err}
	}
	return &EventDecodeError{Type: typ, Reason: err.Error(), Err: err}
}

// jsonKindOf names the JSON kind that encoding/json decodes into t.
func jsonKindOf(t reflect.Type) string {
	if t == nil {
		return "a value"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return t.String()
}

// jsonKindAt names the kind of the JSON value that starts with byte c.
func jsonKindAt(c byte) string {
	switch c {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// fastBox holds a fast-path event and its BaseEvent in one allocation.
type fastBox[E any] struct {
	ev   E
	base events.BaseEvent
	ts   int64
}

// sharedStringMax is the largest delta that the fast path stores in the same
// allocation as the event's id. Above it the two get separate allocations so
// that an id kept for the rest of a run does not pin a large delta.
const sharedStringMax = 1 << 10

// fastType is the type of the event when fastEvent builds it: the object
// holds nothing but "type" (one of the per-token events), "timestamp" (an
// integer or null) and that event's string fields, all spelled exactly.
// It is "" otherwise.
func (s *eventScan) fastType() events.EventType {
	if !s.fast || !s.typ.set || s.typ.flags != 0 || s.typeBad != "" {
		return ""
	}
	const common = keyType | keyTimestamp | keyDelta
	switch string(s.data[s.typ.start:s.typ.end]) {
	case string(events.EventTypeTextMessageContent):
		if s.keys&^(common|keyMessageID) == 0 {
			return events.EventTypeTextMessageContent
		}
	case string(events.EventTypeReasoningMessageContent):
		if s.keys&^(common|keyMessageID) == 0 {
			return events.EventTypeReasoningMessageContent
		}
	case string(events.EventTypeToolCallArgs):
		if s.keys&^(common|keyToolCallID) == 0 {
			return events.EventTypeToolCallArgs
		}
	}
	return ""
}

// fastEvent builds the event of fastType without encoding/json; nil for
// any other.
func (s *eventScan) fastEvent() events.Event {
	switch s.fastType() {
	case events.EventTypeTextMessageContent:
		b := s.box(events.EventTypeTextMessageContent).(*fastBox[events.TextMessageContentEvent])
		b.ev.BaseEvent = s.fillBase(&b.base, &b.ts, events.EventTypeTextMessageContent)
		b.ev.MessageID, b.ev.Delta = s.idAndDelta(slotMessageID)
		return &b.ev
	case events.EventTypeReasoningMessageContent:
		b := s.box(events.EventTypeReasoningMessageContent).(*fastBox[events.ReasoningMessageContentEvent])
		b.ev.BaseEvent = s.fillBase(&b.base, &b.ts, events.EventTypeReasoningMessageContent)
		b.ev.MessageID, b.ev.Delta = s.idAndDelta(slotMessageID)
		return &b.ev
	case events.EventTypeToolCallArgs:
		b := s.box(events.EventTypeToolCallArgs).(*fastBox[events.ToolCallArgsEvent])
		b.ev.BaseEvent = s.fillBase(&b.base, &b.ts, events.EventTypeToolCallArgs)
		b.ev.ToolCallID, b.ev.Delta = s.idAndDelta(slotToolCallID)
		return &b.ev
	}
	return nil
}

// box returns a new fast-path box for typ: from the decoder's slab, or
// allocated alone without a decoder.
func (s *eventScan) box(typ events.EventType) any {
	d := s.dec
	switch typ {
	case events.EventTypeTextMessageContent:
		if d == nil {
			return new(fastBox[events.TextMessageContentEvent])
		}
		return slab.Next(&d.text)
	case events.EventTypeReasoningMessageContent:
		if d == nil {
			return new(fastBox[events.ReasoningMessageContentEvent])
		}
		return slab.Next(&d.reasoning)
	default:
		if d == nil {
			return new(fastBox[events.ToolCallArgsEvent])
		}
		return slab.Next(&d.args)
	}
}

func (s *eventScan) fillBase(base *events.BaseEvent, ts *int64, typ events.EventType) *events.BaseEvent {
	base.EventType = typ
	if s.tsSet {
		*ts = s.ts
		base.TimestampMs = ts
	}
	return base
}

// idAndDelta returns the id in the given slot and the delta, sharing one
// allocation when the delta is small.
func (s *eventScan) idAndDelta(idSlot int) (id, delta string) {
	a, b := s.str[idSlot], s.str[slotDelta]
	if d := s.dec; d != nil && a.set && a.flags == 0 && d.lastID != "" && string(s.data[a.start:a.end]) == d.lastID {
		if b.set && b.flags == 0 {
			return d.lastID, d.texts.String(s.data[b.start:b.end])
		}
		return d.lastID, s.stringAt(b)
	}
	if d := s.dec; d != nil {
		id, delta = s.sharedIDAndDelta(a, b)
		d.lastID = id
		return id, delta
	}
	return s.sharedIDAndDelta(a, b)
}

// sharedIDAndDelta decodes the id and the delta into one allocation when
// the delta is small.
func (s *eventScan) sharedIDAndDelta(a, b strSpan) (id, delta string) {
	na, nb := a.maxLen(), b.maxLen()
	if na == 0 || nb == 0 || nb > sharedStringMax {
		return s.stringAt(a), s.stringAt(b)
	}
	var sb strings.Builder
	sb.Grow(na + nb)
	s.writeSpan(&sb, a)
	n := sb.Len()
	s.writeSpan(&sb, b)
	all := sb.String()
	return all[:n], all[n:]
}

// maxLen bounds the length of the decoded string: escapes only shrink it,
// each invalid UTF-8 byte becomes the 3-byte U+FFFD.
func (sp strSpan) maxLen() int {
	if !sp.set {
		return 0
	}
	n := sp.end - sp.start
	if sp.flags&strInvalidUTF8 != 0 {
		n *= utf8.RuneLen(utf8.RuneError)
	}
	return n
}

// stringAt returns the decoded string of a span ("" when unset).
func (s *eventScan) stringAt(sp strSpan) string {
	if !sp.set || sp.start == sp.end {
		return ""
	}
	if sp.flags == 0 {
		return string(s.data[sp.start:sp.end])
	}
	return unquote(s.data[sp.start:sp.end], sp.flags)
}

func (s *eventScan) writeSpan(sb *strings.Builder, sp strSpan) {
	if !sp.set {
		return
	}
	if sp.flags == 0 {
		sb.Write(s.data[sp.start:sp.end])
		return
	}
	unquoteTo(sb, s.data[sp.start:sp.end])
}
