package turns

import (
	"github.com/rs/zerolog"

	"github.com/aapagui/aapagui/bridge/internal/metrics"
	"github.com/aapagui/aapagui/bridge/internal/runlog"
)

// Writer writes a turn's events of one wire (E: aap.Event, events.Event)
// to its client as SSE frames, and withholds the event that ends the
// answer (turn_stop, RUN_FINISHED) until the turn is stored: a client
// never sees a turn end that history does not hold. The bridge then sends
// it, or the error that replaces it, with Send.
type Writer[E any] struct {
	// Frame appends one event as an SSE frame (aap.AppendFrame,
	// agui.AppendFrame).
	Frame func([]byte, E) ([]byte, error)
	// Name is an event's name, for the metrics and the log.
	Name func(E) string
	// Final reports the event that ends the answer.
	Final func(E) bool

	withheld    E
	hasWithheld bool
}

// Write appends evs to the turn's stream, counting each under its name,
// withholding a final event that ends them (Withheld). beforeFull, when
// not nil, is called before a buffer grown full goes out (aap2agui stores
// the messages a burst settled before the client has them).
func (w *Writer[E]) Write(t *Turn, evs []E, beforeFull func()) {
	if n := len(evs); n > 0 && w.Final(evs[n-1]) {
		w.withheld, w.hasWithheld, evs = evs[n-1], true, evs[:n-1]
	}
	commit(t, w.appendTo(t, t.Out.Buffer(), evs), beforeFull)
}

// WriteFrame writes one frame that appendFrame appends, of an event the
// bridge encodes without making it (aap2agui's plain text delta: see
// aap.AppendTextDeltaFrame), counted under name: as Write writes an event
// that is not final. A frame that cannot be written is logged and left
// out, as Write leaves out an event.
func (w *Writer[E]) WriteFrame(t *Turn, name string, appendFrame func([]byte) ([]byte, error), beforeFull func()) {
	buf, err := appendRecorded(t.Out.Buffer(), t.RunLog, appendFrame)
	switch {
	case err != nil:
		t.Log.Error().Err(err).Str("event", name).Msg("encoding an event for the client")
	case t.Met != nil:
		t.Met.Out(name)
	}
	commit(t, buf, beforeFull)
}

// commit hands buf to the turn's stream; beforeFull, when not nil, is
// called first when buf filled it.
func commit(t *Turn, buf []byte, beforeFull func()) {
	if beforeFull != nil && t.Out.Full(buf) {
		beforeFull()
	}
	t.Out.Commit(buf)
}

// appendRecorded appends the frame that appendFrame appends, after its
// SSE id line and recorded when rec is not nil; buf is as it was when
// appendFrame fails.
func appendRecorded(buf []byte, rec *runlog.Recorder, appendFrame func([]byte) ([]byte, error)) ([]byte, error) {
	at := len(buf)
	if rec != nil {
		buf = rec.AppendID(buf)
	}
	body := len(buf)
	buf, err := appendFrame(buf)
	if err != nil {
		return buf[:at], err
	}
	if rec != nil {
		rec.Add(buf[body:])
	}
	return buf, nil
}

// Withheld takes the final event withheld, if any: the bridge sends it
// (Send) once the turn is stored, or an error instead.
func (w *Writer[E]) Withheld() (ev E, ok bool) {
	ev, ok = w.withheld, w.hasWithheld
	var zero E
	w.withheld, w.hasWithheld = zero, false
	return ev, ok
}

// Send writes the turn's last event, counted, and flushes the stream.
func (w *Writer[E]) Send(t *Turn, ev E) {
	t.Out.Commit(w.appendTo(t, t.Out.Buffer(), []E{ev}))
	t.Out.Flush()
}

// appendTo appends evs to buf as Append does, each frame with its SSE id
// and recorded when the turn is (Turn.KeepRunLog).
func (w *Writer[E]) appendTo(t *Turn, buf []byte, evs []E) []byte {
	return w.appendFrames(buf, evs, t.Log, t.Met, t.RunLog)
}

// Append appends evs to buf as SSE frames, counting each on met when it
// is not nil; an event that cannot be encoded is logged and left out.
func (w *Writer[E]) Append(buf []byte, evs []E, log *zerolog.Logger, met *metrics.Turn) []byte {
	return w.appendFrames(buf, evs, log, met, nil)
}

// appendFrames is Append, each frame after its SSE id line and recorded
// when rec is not nil.
func (w *Writer[E]) appendFrames(buf []byte, evs []E, log *zerolog.Logger, met *metrics.Turn, rec *runlog.Recorder) []byte {
	for _, ev := range evs {
		var err error
		if buf, err = appendRecorded(buf, rec, func(b []byte) ([]byte, error) { return w.Frame(b, ev) }); err != nil {
			log.Error().Err(err).Str("event", w.Name(ev)).Msg("encoding an event for the client")
			continue
		}
		if met != nil {
			met.Out(w.Name(ev))
		}
	}
	return buf
}
