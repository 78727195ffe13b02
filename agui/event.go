package agui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"

	"github.com/aapagui/aapagui/internal/jsonenc"
	"github.com/aapagui/aapagui/internal/slab"
)

// This file is the AG-UI event JSON codec. It sits on the per-event hot path
// of the bridge, so both directions have hand-written fast paths for the
// events that come once per token (TEXT_MESSAGE_CONTENT,
// REASONING_MESSAGE_CONTENT, TOOL_CALL_ARGS) and fall back to encoding/json
// for everything else. The fast paths are defined as "whatever encoding/json
// does": the fuzz targets compare them with encoding/json byte for byte and
// value for value, and any input they are not sure about goes the slow way.

// UnknownEvent is an AG-UI event whose type DecodeEvent does not know: a
// newer protocol revision or a vendor extension. It is returned instead of an
// error so that a stream reader can log it and carry on.
//
// Only EventType is set in the BaseEvent (timestamp and rawEvent are not
// extracted); Raw is authoritative for everything else.
type UnknownEvent struct {
	*events.BaseEvent
	// Raw is a copy of the event's JSON exactly as it was decoded.
	Raw json.RawMessage
}

var _ events.Event = (*UnknownEvent)(nil)

// Validate returns nil: an unknown event cannot be checked, only passed on.
func (e *UnknownEvent) Validate() error { return nil }

// ToJSON returns Raw, unchanged.
func (e *UnknownEvent) ToJSON() ([]byte, error) { return e.Raw, nil }

// MarshalJSON returns Raw compacted, so that encoding/json writes an unknown
// event the way AppendEvent does.
func (e *UnknownEvent) MarshalJSON() ([]byte, error) {
	if e == nil {
		return []byte("null"), nil
	}
	return appendUnknown(nil, e)
}

// appendUnknown appends e.Raw compacted.
func appendUnknown(dst []byte, e *UnknownEvent) ([]byte, error) {
	buf := bytes.NewBuffer(dst)
	if err := json.Compact(buf, e.Raw); err != nil {
		var typ events.EventType
		if e.BaseEvent != nil {
			typ = e.EventType
		}
		return dst, fmt.Errorf("agui: encode AG-UI %s event: raw JSON: %w", typ, err)
	}
	return buf.Bytes(), nil
}

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

// ErrNilEvent is returned by AppendEvent for a nil event (a nil interface or
// a nil pointer).
var ErrNilEvent = errors.New("agui: nil AG-UI event")

// ErrNilBaseEvent is returned (wrapped) by AppendEvent for an event whose
// embedded *events.BaseEvent is nil: such an event has no type, and calling
// its Type method would panic.
var ErrNilBaseEvent = errors.New("agui: AG-UI event with a nil BaseEvent")

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
}

// Decode decodes one event; see [DecodeEvent].
func (d *Decoder) Decode(data []byte) (events.Event, error) { return decodeEvent(d, data) }

func decodeEvent(d *Decoder, data []byte) (events.Event, error) {
	s := eventScan{data: data, dec: d}
	if !s.scan() {
		return nil, malformedEvent(s.typeSoFar(), data)
	}
	if ev := s.fastEvent(); ev != nil {
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
	i := skipSpace(data, 0)
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

// Bits for the top-level keys the scanner knows.
const (
	keyType uint8 = 1 << iota
	keyTimestamp
	keyMessageID
	keyToolCallID
	keyDelta
	keyOther
)

// Indexes of the string fields the fast path decodes.
const (
	slotMessageID = iota
	slotToolCallID
	slotDelta
	numSlots
)

// Flags returned by scanString.
const (
	strEscaped     uint8 = 1 << iota // contains backslash escapes
	strInvalidUTF8                   // contains bytes that are not UTF-8
)

// strSpan locates a JSON string's content (without quotes) in the input.
type strSpan struct {
	start, end int
	flags      uint8 // strEscaped, strInvalidUTF8
	set        bool
}

// eventScan reads the top level of an event object in one pass. It finds the
// "type" exactly as encoding/json would assign it to BaseEvent.EventType and,
// along the way, collects what the fast path needs. Values it does not
// decode are skipped without being validated: any input that is not decoded
// by the fast path is afterwards checked by encoding/json.
type eventScan struct {
	data []byte
	dec  *Decoder // nil: allocate each event alone

	typ      strSpan // the last string value of a "type" key
	typeNull bool    // a "type" key with a null value was seen
	typeBad  string  // JSON kind of a non-string, non-null "type" value

	keys  uint8 // key* bits of the keys seen
	fast  bool  // every key and value so far fits the fast path
	str   [numSlots]strSpan
	ts    int64
	tsSet bool
}

// scan walks the top-level object. It returns false when data is not a JSON
// object or is malformed at the top level.
func (s *eventScan) scan() bool {
	d := s.data
	s.fast = true
	i := skipSpace(d, 0)
	if i == len(d) || d[i] != '{' {
		return false
	}
	i = skipSpace(d, i+1)
	if i < len(d) && d[i] == '}' {
		return skipSpace(d, i+1) == len(d)
	}
	for {
		if i == len(d) || d[i] != '"' {
			return false
		}
		end, flags, ok := scanString(d, i+1)
		if !ok {
			return false
		}
		key, keyFlags := d[i+1:end], flags
		i = skipSpace(d, end+1)
		if i == len(d) || d[i] != ':' {
			return false
		}
		i = skipSpace(d, i+1)
		if i == len(d) {
			return false
		}
		if i, ok = s.member(key, keyFlags, i); !ok {
			return false
		}
		i = skipSpace(d, i)
		if i == len(d) {
			return false
		}
		switch d[i] {
		case ',':
			i = skipSpace(d, i+1)
		case '}':
			return skipSpace(d, i+1) == len(d)
		default:
			return false
		}
	}
}

// member records one top-level member whose value starts at d[i] and
// returns the index just past the value.
func (s *eventScan) member(key []byte, keyFlags uint8, i int) (int, bool) {
	d := s.data
	k, exact := classifyKey(key, keyFlags)
	s.keys |= k
	if !exact {
		s.fast = false
	}
	switch k {
	case keyType:
		switch d[i] {
		case '"':
			end, flags, ok := scanString(d, i+1)
			if !ok {
				return 0, false
			}
			s.typ = strSpan{start: i + 1, end: end, flags: flags, set: true}
			return end + 1, true
		case 'n':
			// null leaves a string field unchanged in encoding/json.
			s.typeNull = true
			return literal(d, i, "null")
		}
		s.typeBad = jsonKindAt(d[i])
	case keyTimestamp:
		if d[i] == 'n' {
			// null resets a pointer field in encoding/json.
			s.tsSet = false
			return literal(d, i, "null")
		}
		if v, end, ok := parseInt64(d, i); ok {
			s.ts, s.tsSet = v, true
			return end, true
		}
	case keyMessageID, keyToolCallID, keyDelta:
		slot := slotMessageID
		switch k {
		case keyToolCallID:
			slot = slotToolCallID
		case keyDelta:
			slot = slotDelta
		}
		switch d[i] {
		case '"':
			end, flags, ok := scanString(d, i+1)
			if !ok {
				return 0, false
			}
			s.str[slot] = strSpan{start: i + 1, end: end, flags: flags, set: true}
			return end + 1, true
		case 'n':
			return literal(d, i, "null")
		}
	}
	s.fast = false
	return skipValue(d, i)
}

// classifyKey maps a raw key (the bytes between the quotes) to its key* bit.
// exact reports a byte-for-byte match with the field name; encoding/json
// also accepts case-insensitive matches and escaped spellings, which the
// fast path leaves to encoding/json.
func classifyKey(raw []byte, flags uint8) (k uint8, exact bool) {
	key := raw
	if flags != 0 {
		key = []byte(unquote(raw, flags))
	}
	switch string(key) {
	case "type":
		return keyType, flags == 0
	case "timestamp":
		return keyTimestamp, flags == 0
	case "messageId":
		return keyMessageID, flags == 0
	case "toolCallId":
		return keyToolCallID, flags == 0
	case "delta":
		return keyDelta, flags == 0
	}
	// encoding/json folds keys with bytes.EqualFold semantics; no
	// non-ASCII rune folds to a letter of "type", so ASCII folding is exact
	// here. (Other keys only matter to the slow path.)
	if len(key) == 4 && asciiEqualFold(key, "type") {
		return keyType, false
	}
	return keyOther, false
}

func asciiEqualFold(b []byte, s string) bool {
	for i := range len(b) {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// typeSoFar returns the "type" read so far, if it is a string, for error
// messages about malformed input.
func (s *eventScan) typeSoFar() events.EventType {
	if !s.typ.set || s.typeBad != "" {
		return ""
	}
	return events.EventType(s.stringAt(s.typ))
}

// eventType returns the decoded "type" or the error that explains why there
// is none. Errors about "type" are only given for valid JSON.
func (s *eventScan) eventType() (events.EventType, error) {
	var typ events.EventType
	if s.typ.set {
		typ = events.EventType(s.stringAt(s.typ))
	}
	var reason string
	switch {
	case s.typeBad != "":
		reason = "expected a string, got " + s.typeBad
	case s.typ.set && typ == "":
		reason = "must not be empty"
	case s.typ.set:
		return typ, nil
	case s.typeNull:
		reason = "expected a string, got null"
	default:
		reason = "missing"
	}
	if err := syntaxError(typ, s.data); err != nil {
		return "", err
	}
	if s.typeBad != "" {
		typ = "" // a later "type" would not make the event decodable
	}
	return "", &EventDecodeError{Type: typ, Field: "type", Reason: reason}
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

// fastEvent builds the event without encoding/json when the object holds
// nothing but "type" (one of the per-token events), "timestamp" (an integer
// or null) and that event's string fields, all spelled exactly. It returns
// nil otherwise.
func (s *eventScan) fastEvent() events.Event {
	if !s.fast || !s.typ.set || s.typ.flags != 0 || s.typeBad != "" {
		return nil
	}
	const common = keyType | keyTimestamp | keyDelta
	switch string(s.data[s.typ.start:s.typ.end]) {
	case string(events.EventTypeTextMessageContent):
		if s.keys&^(common|keyMessageID) != 0 {
			return nil
		}
		b := s.box(events.EventTypeTextMessageContent).(*fastBox[events.TextMessageContentEvent])
		b.ev.BaseEvent = s.fillBase(&b.base, &b.ts, events.EventTypeTextMessageContent)
		b.ev.MessageID, b.ev.Delta = s.idAndDelta(slotMessageID)
		return &b.ev
	case string(events.EventTypeReasoningMessageContent):
		if s.keys&^(common|keyMessageID) != 0 {
			return nil
		}
		b := s.box(events.EventTypeReasoningMessageContent).(*fastBox[events.ReasoningMessageContentEvent])
		b.ev.BaseEvent = s.fillBase(&b.base, &b.ts, events.EventTypeReasoningMessageContent)
		b.ev.MessageID, b.ev.Delta = s.idAndDelta(slotMessageID)
		return &b.ev
	case string(events.EventTypeToolCallArgs):
		if s.keys&^(common|keyToolCallID) != 0 {
			return nil
		}
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

// unquote decodes the content of a valid JSON string that has the given
// scanString flags.
func unquote(raw []byte, flags uint8) string {
	var sb strings.Builder
	sb.Grow(strSpan{start: 0, end: len(raw), flags: flags, set: true}.maxLen())
	unquoteTo(&sb, raw)
	return sb.String()
}

// unquoteTo writes the decoded content of a JSON string (without its quotes)
// that scanString accepted. It mirrors encoding/json's unquoteBytes: invalid
// UTF-8 bytes and unpaired surrogate escapes become U+FFFD.
func unquoteTo(sb *strings.Builder, s []byte) {
	for i := 0; i < len(s); {
		if s[i] == '\\' {
			c := s[i+1]
			i += 2
			switch c {
			case 'b':
				sb.WriteByte('\b')
			case 'f':
				sb.WriteByte('\f')
			case 'n':
				sb.WriteByte('\n')
			case 'r':
				sb.WriteByte('\r')
			case 't':
				sb.WriteByte('\t')
			case 'u':
				r := getu4(s[i-2:])
				i += 4
				if utf16.IsSurrogate(r) {
					if dec := utf16.DecodeRune(r, getu4(s[i:])); dec != unicode.ReplacementChar {
						i += 6
						sb.WriteRune(dec)
						continue
					}
					r = unicode.ReplacementChar
				}
				sb.WriteRune(r)
			default: // '"', '\\', '/'
				sb.WriteByte(c)
			}
			continue
		}
		j := i
		for j < len(s) {
			c := s[j]
			if c == '\\' {
				break
			}
			if c < utf8.RuneSelf {
				j++
				continue
			}
			r, size := utf8.DecodeRune(s[j:])
			if r == utf8.RuneError && size == 1 {
				break
			}
			j += size
		}
		sb.Write(s[i:j])
		i = j
		if i < len(s) && s[i] != '\\' {
			sb.WriteRune(utf8.RuneError) // an invalid UTF-8 byte
			i++
		}
	}
}

// getu4 decodes \uXXXX from the beginning of s, returning the hex value,
// or -1 if s does not start with one.
func getu4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// strPlain marks the bytes that stand for themselves inside a JSON string.
var strPlain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// scanString validates the JSON string whose content starts at d[i] (just
// after the opening quote) as strictly as encoding/json does. It returns the
// index of the closing quote and whether the content has escapes or invalid
// UTF-8 (flags 0 means the bytes are the decoded value).
func scanString(d []byte, i int) (end int, flags uint8, ok bool) {
	for {
		for i < len(d) && strPlain[d[i]] {
			i++
		}
		if i == len(d) {
			return 0, 0, false
		}
		switch c := d[i]; {
		case c == '"':
			return i, flags, true
		case c == '\\':
			flags |= strEscaped
			if i+1 == len(d) {
				return 0, 0, false
			}
			switch d[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if getu4(d[i:]) < 0 {
					return 0, 0, false
				}
				i += 6
			default:
				return 0, 0, false
			}
		case c < 0x20:
			return 0, 0, false
		default:
			r, size := utf8.DecodeRune(d[i:])
			if r == utf8.RuneError && size == 1 {
				flags |= strInvalidUTF8
			}
			i += size
		}
	}
}

// skipString returns the index of the quote that closes the string whose
// content starts at d[i], or -1. It does not validate the content.
func skipString(d []byte, i int) int {
	start := i
	for {
		j := bytes.IndexByte(d[i:], '"')
		if j < 0 {
			return -1
		}
		j += i
		k := j
		for k > start && d[k-1] == '\\' {
			k--
		}
		if (j-k)%2 == 0 {
			return j
		}
		i = j + 1
	}
}

// skipValue returns the index just past the value that starts at d[i]. It
// only finds the value's end; validation is left to encoding/json.
func skipValue(d []byte, i int) (int, bool) {
	switch d[i] {
	case '"':
		end := skipString(d, i+1)
		return end + 1, end >= 0
	case '{', '[':
		depth := 0
		for ; i < len(d); i++ {
			switch d[i] {
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, true
				}
			case '"':
				end := skipString(d, i+1)
				if end < 0 {
					return 0, false
				}
				i = end
			}
		}
		return 0, false
	}
	j := i
	for j < len(d) && !valueEnd[d[j]] {
		j++
	}
	return j, j > i
}

// valueEnd marks the bytes that end a number or literal.
var valueEnd = [256]bool{' ': true, '\t': true, '\n': true, '\r': true, ',': true, '}': true, ']': true, ':': true, '"': true, '{': true, '[': true}

// literal checks that d[i:] starts with lit and returns the index after it.
func literal(d []byte, i int, lit string) (int, bool) {
	if len(d)-i < len(lit) || string(d[i:i+len(lit)]) != lit {
		return 0, false
	}
	return i + len(lit), true
}

// parseInt64 parses a JSON number at d[i] that encoding/json would store in
// an int64: an integer (no fraction or exponent) within range. ok is false
// for anything else, which the caller leaves to encoding/json.
func parseInt64(d []byte, i int) (v int64, end int, ok bool) {
	neg := false
	if d[i] == '-' {
		neg = true
		i++
	}
	start := i
	var u uint64
	for i < len(d) && '0' <= d[i] && d[i] <= '9' {
		if u > (1<<63)/10 {
			return 0, 0, false
		}
		u = u*10 + uint64(d[i]-'0')
		i++
	}
	switch {
	case i == start, i-start > 1 && d[start] == '0':
		return 0, 0, false // not a JSON number
	case i < len(d) && (d[i] == '.' || d[i] == 'e' || d[i] == 'E'):
		return 0, 0, false // not an integer
	case neg && u > 1<<63, !neg && u > 1<<63-1:
		return 0, 0, false // out of range
	}
	if neg {
		return -int64(u), i, true
	}
	return int64(u), i, true
}

func skipSpace(d []byte, i int) int {
	for i < len(d) {
		switch d[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// AppendEvent appends the JSON encoding of ev to dst, without a trailing
// newline. The bytes are exactly those json.Encoder with SetEscapeHTML(false)
// writes for the struct (the SDK's field order and omitempty rules), minus
// the newline: <, > and & are never escaped.
//
// The per-token and lifecycle events (RUN_STARTED, RUN_FINISHED without a
// Result, RUN_ERROR, TEXT_MESSAGE_START/CONTENT/END, REASONING_START/END,
// REASONING_MESSAGE_START/CONTENT/END, TOOL_CALL_START/ARGS/END/RESULT) are
// written by hand and do not allocate when dst has room; an event with a
// RawEvent, and every other type, goes through encoding/json. An
// *UnknownEvent is written as its Raw JSON, compacted.
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
