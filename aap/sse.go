package aap

import (
	"errors"
	"io"
	"iter"
	"strings"

	"github.com/aapagui/aapagui/internal/slab"
	"github.com/aapagui/aapagui/internal/sse"
)

// AppendFrame appends ev as one SSE frame: "event: <name>", "data: <json>"
// and a blank line, the framing of the AAP reference server.
func AppendFrame(dst []byte, ev Event) ([]byte, error) {
	if strings.ContainsAny(string(ev.EventName()), "\r\n") {
		return dst, errors.New("aap: event name contains a line break")
	}
	// The data is compact JSON with no raw line breaks, so it fits on one
	// data: line; writing it in place avoids a copy.
	start := len(dst)
	dst = append(dst, "event: "...)
	dst = append(dst, ev.EventName()...)
	dst = append(dst, "\ndata: "...)
	dst, err := ev.AppendData(dst)
	if err != nil {
		return dst[:start], err
	}
	return append(dst, '\n', '\n'), nil
}

// AppendTextDeltaFrame appends the frame AppendFrame appends for a
// TextDelta of text, byte for byte, from text's bytes without an event:
// text must be plain (jsonenc.Plain: no byte that a JSON string escapes),
// as agui.Decoder.DecodeText gives a delta.
func AppendTextDeltaFrame(dst, text []byte) []byte {
	dst = append(dst, "event: "+EventTextDelta+"\ndata: {\"delta\":\""...)
	dst = append(dst, text...)
	return append(dst, "\"}\n\n"...)
}

// ErrIncompleteEvent reports a stream that ended in the middle of an SSE
// event (the connection was cut).
var ErrIncompleteEvent = sse.ErrIncompleteEvent

// ReadEvents reads AAP SSE events from r until EOF, decoding each with
// DecodeEvent. maxEventSize bounds a single event (zero: 16 MiB). A frame
// that fails to decode, an oversized event or a read error ends the
// sequence with that error; a stream cut in the middle of an event ends it
// with ErrIncompleteEvent. Unknown event names yield
// *UnknownEvent. The texts of a stream's text_delta and thinking_delta
// events are made a chunk of bytes at a time: each is its own immutable
// string, but keeping one keeps its chunk (at most 4 KiB) alive.
func ReadEvents(r io.Reader, maxEventSize int) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		er := NewEventReader(r, maxEventSize)
		for {
			ev, err := er.Next()
			if err == io.EOF || !yield(ev, err) || err != nil {
				return
			}
		}
	}
}

// EventReader reads the events of a stream one at a time, as ReadEvents
// yields them, for a caller that pulls them in a loop of its own: a range
// over ReadEvents holds the iterator's frames on the caller's stack while
// it waits for the stream, about 1.5 KB more than a call of Next.
type EventReader struct {
	sse    *sse.Reader
	deltas Deltas
}

// NewEventReader returns an EventReader of r's events; maxEventSize is
// ReadEvents'. It waits on a buffer of 128 bytes, what an AAP delta's
// frame takes (some 45 bytes and its text); a larger frame, or a burst,
// is read into larger buffers the process's streams share.
func NewEventReader(r io.Reader, maxEventSize int) *EventReader {
	return &EventReader{sse: sse.NewReader(r, sse.ReadOptions{MaxEventSize: maxEventSize, SmallBuffer: true})}
}

// Next returns the next event, or io.EOF at a clean end of the stream;
// any other error is ReadEvents', after which the stream is over.
func (r *EventReader) Next() (Event, error) {
	ev, name, data, err := r.NextRaw()
	if ev != nil || err != nil {
		return ev, err
	}
	return DecodeEvent(name, data)
}

// NextRaw is Next for a caller that decodes the events the per-token
// fast path does not take (turn_start, message_start, tool calls,
// turn_stop) where it likes: on a goroutine of its own, say, since
// encoding/json goes several kilobytes deep and a goroutine that waits on
// the stream between tokens keeps the deepest stack it had. Such an event
// comes as ev nil with its name and data, which DecodeEvent takes (data is
// valid until the next call); a delta comes decoded, as from Next.
func (r *EventReader) NextRaw() (ev Event, name string, data []byte, err error) {
	f, err := r.sse.Next()
	if err != nil {
		return nil, "", nil, err
	}
	if ev = r.deltas.Decode(f.Name, f.Data); ev != nil {
		return ev, "", nil, nil
	}
	if f.Name == "" {
		return nil, "message", f.Data, nil
	}
	return nil, f.Name, f.Data, nil
}

// Deltas decodes a stream's per-token events on their fast path. The
// events are allocated a slab at a time, and their texts a chunk of bytes
// at a time (internal/slab; each is still its own value, never reused), so
// that a long stream costs a fraction of an allocation per delta. The zero
// value is ready; one Deltas serves one stream.
type Deltas struct {
	texts    []TextDelta
	thoughts []ThinkingDelta
	text     slab.Text
}

// Decode returns the text_delta or thinking_delta of a frame (its SSE
// event name and data) whose data is the plain case the fast path reads
// (no escape but the common ones, no other member); nil for any other
// frame, which DecodeEvent takes (and which Decode does not judge).
func (d *Deltas) Decode(name string, data []byte) Event {
	switch EventName(name) {
	case EventTextDelta:
		if t, ok := fastDelta(data); ok {
			return slabEvent(&d.texts, TextDelta{Delta: d.text.String(t)})
		}
	case EventThinkingDelta:
		if t, ok := fastDelta(data); ok {
			return slabEvent(&d.thoughts, ThinkingDelta{Delta: d.text.String(t)})
		}
	}
	return nil
}

// slabEvent returns a pointer to a new element of slab s (internal/slab)
// holding v.
func slabEvent[E any](s *[]E, v E) *E {
	e := slab.Next(s)
	*e = v
	return e
}
