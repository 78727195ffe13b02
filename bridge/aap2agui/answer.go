package aap2agui

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/internal/edge"
	"github.com/aapagui/aapagui/bridge/internal/turns"
)

// What the client of a turn gets: the event stream, or in mode none one
// JSON body, shaped as the route asks (a session's turn, PUT /session),
// the turn's stop withheld until the turn is stored.

// answer is a turn's answer to its client. It holds the response and the
// turn's stream and writer; it never looks at the run that feeds it.
type answer struct {
	turn *turns.Turn
	rw   gin.ResponseWriter
	mode aap.StreamMode
	form answerForm
	w    turns.Writer[aap.Event]
	// carry: the client was granted the AG-UI extension and the turn
	// streams, so the agent's events AAP has no event for go to it too
	// (extension.go).
	carry bool
}

// aapWriter writes a turn's AAP events, withholding its turn_stop.
var aapWriter = turns.Writer[aap.Event]{
	Frame: aap.AppendFrame,
	Name:  func(ev aap.Event) string { return string(ev.EventName()) },
	Final: func(ev aap.Event) bool { _, ok := ev.(*aap.TurnStop); return ok },
}

// open begins the client's stream (turns.Base.Run opened it), when the
// turn streams, with the form's opening events (the turn closes it:
// turns.Turn.Close).
func (a *answer) open() {
	out := a.turn.Out
	if a.mode != aap.StreamNone {
		out.Start()
		if len(a.form.opening) > 0 {
			a.write(a.form.opening, nil)
		}
	}
}

// streams reports whether the answer is an event stream (not mode none).
func (a *answer) streams() bool { return a.mode != aap.StreamNone }

// write sends events to the client (coalesced by the stream), counting
// them, the turn's stop withheld (stop); beforeFull, when not nil, runs
// before a burst that fills the stream's buffer goes out.
func (a *answer) write(evs []aap.Event, beforeFull func()) {
	a.w.Write(a.turn, evs, beforeFull)
}

// writeTextDelta sends a text_delta of text (plain: agui.Decoder.DecodeText's
// delta), as write sends the event.
func (a *answer) writeTextDelta(text []byte, beforeFull func()) {
	a.w.WriteFrame(a.turn, string(aap.EventTextDelta), func(b []byte) ([]byte, error) { return aap.AppendTextDeltaFrame(b, text), nil }, beforeFull)
}

// stop writes the turn's stop with the reason given (the translator's own,
// or error when the turn could not be stored), named by named when the
// bridge knows what ended it (nil: not named), and flushes the stream.
func (a *answer) stop(reason aap.StopReason, named *aap.TurnError) {
	withheld, _ := a.w.Withheld()
	stop, ok := withheld.(*aap.TurnStop)
	if !ok {
		stop = &aap.TurnStop{}
	}
	stop.StopReason, stop.Error = reason, named
	a.w.Send(a.turn, stop)
}

// none writes the answer of mode none: one JSON body, in the route's form.
func (a *answer) none(r *aap.PostSessionTurnResponse) {
	edge.WriteJSON(a.rw, http.StatusOK, a.form.none(r))
}

// withdraw takes back the stream's headers while nothing has gone out,
// so that the handler can answer with an error instead; false once
// something has.
func (a *answer) withdraw() bool {
	if a.rw.Written() {
		return false
	}
	for _, h := range []string{"Content-Type", "Cache-Control", "X-Accel-Buffering"} {
		a.rw.Header().Del(h)
	}
	return true
}

// answerForm is what differs between the answer to a turn of a session
// and the answer to PUT /session (versions 1 and 2), chosen once, by the
// handler: the turn itself never asks which route it serves.
type answerForm struct {
	// opening are events the stream opens with, before the agent has
	// said anything. A turn with an opening saves its own messages before
	// the agent is called, not beside it (turn.save): the session the
	// events name is stored when they go out.
	opening []aap.Event
	// none makes the body of the answer in mode none.
	none func(*aap.PostSessionTurnResponse) any
}

// turnForm is the answer to a turn of a session.
var turnForm = answerForm{none: func(r *aap.PostSessionTurnResponse) any { return r }}

// startForm is the answer to PUT /session, which created the session
// with the given id: its stream opens with session_start, its none answer
// carries sessionId.
func startForm(id string) answerForm {
	return answerForm{
		opening: []aap.Event{&aap.SessionStart{SessionID: id}},
		none: func(r *aap.PostSessionTurnResponse) any {
			return aap.PutSessionResponse{SessionID: id, StopReason: r.StopReason, Messages: r.Messages}
		},
	}
}
