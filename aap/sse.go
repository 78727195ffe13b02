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
		// The per-token events are allocated a slab at a time, and their
		// texts a chunk of bytes at a time (internal/slab; each is still
		// its own value, never reused), so that a long stream costs a
		// fraction of an allocation per delta.
		var (
			texts    []TextDelta
			thoughts []ThinkingDelta
			text     slab.Text
		)
		for f, err := range sse.Read(r, sse.ReadOptions{MaxEventSize: maxEventSize}) {
			if err != nil {
				yield(nil, err)
				return
			}
			name := f.Name
			var ev Event
			switch EventName(name) {
			case EventTextDelta:
				if d, ok := fastDelta(f.Data); ok {
					ev = slabEvent(&texts, TextDelta{Delta: text.String(d)})
				}
			case EventThinkingDelta:
				if d, ok := fastDelta(f.Data); ok {
					ev = slabEvent(&thoughts, ThinkingDelta{Delta: text.String(d)})
				}
			case "":
				name = "message"
			}
			if ev != nil {
				if !yield(ev, nil) {
					return
				}
				continue
			}
			ev, err := DecodeEvent(name, f.Data)
			if err != nil {
				yield(nil, err)
				return
			}
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// slabEvent returns a pointer to a new element of slab s (internal/slab)
// holding v.
func slabEvent[E any](s *[]E, v E) *E {
	e := slab.Next(s)
	*e = v
	return e
}
