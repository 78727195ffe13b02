package agui

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
)

// This file, event_decode.go, event_scan.go and event_encode.go are the
// AG-UI event JSON codec. It sits on the per-event hot path of the bridge,
// so both directions have hand-written fast paths for the events that come
// once per token (TEXT_MESSAGE_CONTENT, REASONING_MESSAGE_CONTENT,
// TOOL_CALL_ARGS) and fall back to encoding/json for everything else. The
// fast paths are defined as "whatever encoding/json does": the fuzz targets
// compare them with encoding/json byte for byte and value for value, and
// any input they are not sure about goes the slow way.
//
// This file holds what both directions share, event_decode.go the decoder,
// event_scan.go the scanner that reads an event's top level in one pass
// for it, and event_encode.go the encoder.

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

// PassOn is an event of type typ written as raw, its JSON, byte for byte:
// an event the caller passes on as it came (a known type, checked by the
// caller) rather than re-encoding its decoded fields.
func PassOn(typ events.EventType, raw json.RawMessage) *UnknownEvent {
	return &UnknownEvent{BaseEvent: &events.BaseEvent{EventType: typ}, Raw: raw}
}

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
