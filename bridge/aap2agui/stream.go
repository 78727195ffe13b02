package aap2agui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/rs/zerolog"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/bridge/internal/fault"
	"github.com/aapagui/aapagui/bridge/internal/metrics"
	"github.com/aapagui/aapagui/bridge/internal/turns"
	"github.com/aapagui/aapagui/bridge/internal/upstream"
	"github.com/aapagui/aapagui/internal/sse"
	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/translate"
)

// turnRun is one turn once the agent took its run: it reads the agent's
// events, answers the client and keeps the run's record (record.go). It
// is given what it needs of the turn (turn.stream) and does not point back
// at it.
type turnRun struct {
	s              *Server
	log            *zerolog.Logger
	sess           *store.Session
	agent          *agent
	life           *turns.Turn       // the turn's lease, stream, metrics and log line
	prevInterrupts []types.Interrupt // open before the turn
	tr             *translate.AGUIToAAP
	rec            record // what the run has stored of itself (record.go)
	state          json.RawMessage

	callNames    map[string]string // toolCallId → tool name of the calls this run streamed
	stateChanged bool
	follow       *followUp // the run that may be followed by one of the new message (CancelRunAuto), else nil
	movingOn     bool      // the turn's user message cancelled the open interrupts

	ans    answer       // what the client gets (answer.go)
	saving <-chan error // the save of the turn's own messages, until awaited

	// msgBytes counts what the agent streamed of the message it is
	// building (Config.MaxMessageSize); settled is how many messages had
	// settled when it was reset.
	msgBytes, settled int
}

// stream reads the agent's events, writes the AAP response and stores
// what the run produces as it goes.
// It sets the turn's stop reason and the upstream's result (see
// turns.EndTurn).
//
// r.saving, when not nil, delivers the outcome of saving the turn's own
// messages, begun beside the upstream call: nothing of the answer is sent
// or saved before it succeeded, and a failed save ends the turn as a store
// error (returned, to be answered 500, when nothing has been sent yet,
// else an error stop), with nothing of it stored.
//
// The turn's stop (turn_stop, or the none answer) is sent only once the
// run is stored: a run that cannot be stored ends with an error stop (a
// 500 in mode none), never with a clean end for what is not in history.
func (r *turnRun) stream(ctx context.Context, body *upstream.IdleBody) error {
	r.s.streaming.Add(1)
	defer r.s.streaming.Add(-1)
	r.state = r.sess.State
	defer r.ans.open()()
	failure, err := r.read(ctx, body)
	if err == nil {
		err = r.awaitSave(ctx) // (the agent's stream ended before its first event)
	}
	if err != nil {
		r.life.Line.Stop, r.life.Line.Upstream = string(aap.StopError), "store_error"
		if errors.Is(err, errEndedInBand) {
			return nil
		}
		return err
	}
	return r.conclude(ctx, failure)
}

// read feeds the agent's events to the translator and the client until
// the run ends; it returns what cut the stream short, if anything, and
// the error of awaitSave when the turn's own messages could not be stored.
// A run the agent ended without reading the turn's new user message is
// followed by the run that carries it (followUp), read in turn.
func (r *turnRun) read(ctx context.Context, body *upstream.IdleBody) (failure, unsaved error) {
	failure, unsaved = r.readRun(ctx, body)
	if unsaved != nil || !r.follow.holding() {
		return failure, unsaved
	}
	// The first run was read to its end (what cut it short after its
	// RUN_FINISHED changes nothing).
	body.Close()
	next, ev, finished := r.followUp(ctx)
	if next == nil {
		_, failure = r.handle(ctx, ev, finished)
		return failure, nil
	}
	defer next.Close()
	r.write(ctx, r.tr.EndMessage())
	return r.readRun(ctx, next)
}

// readRun reads the events of one run of the turn (body).
func (r *turnRun) readRun(ctx context.Context, body *upstream.IdleBody) (failure, unsaved error) {
	var dec agui.Decoder
	for frame, err := range sse.Read(r.source(ctx, body), sse.ReadOptions{MaxEventSize: r.s.cfg.MaxEventSize}) {
		if r.saving != nil { // the first event only
			if err := r.awaitSave(ctx); err != nil {
				return nil, err
			}
		}
		if err != nil {
			return err, nil
		}
		body.Touch()
		if r.follow.holding() {
			continue // the rest of a run that did not read the message
		}
		ev, err := r.decode(ctx, &dec, frame.Data)
		if err != nil {
			return fmt.Errorf("%w: %w", fault.ErrBadEvent, err), nil
		}
		if ev == nil {
			continue // a plain text delta, written
		}
		if r.follow != nil && !r.follow.pass(ev, frame.Data) {
			continue
		}
		data := frame.Data
		if dec.Plain() {
			data = nil // nothing beyond ev in it: nobody need look
		}
		done, err := r.handle(ctx, ev, data)
		if err != nil {
			return err, nil
		}
		if done {
			return nil, nil
		}
	}
	return nil, nil
}

// source is what readRun reads body through. Before each read of the
// agent's stream, what is buffered for the client is flushed (modes other
// than none). Before that, history messages that became final (a tool's
// result settles the call before it) are saved: a client that has an event
// finds every message before it stored, and a burst that settles messages
// and ends the run is one write, at the end. Checkpoints of the message
// still streaming are due then too, after those saves (a draft is the last
// entry): the clock is read once per read of the agent's stream, not per
// event.
func (r *turnRun) source(ctx context.Context, body *upstream.IdleBody) io.Reader {
	return saveBeforeRead{r: r.ans.source(body), save: func() {
		r.rec.saveSettled(ctx)
		r.checkpoint(ctx)
	}}
}

// handle takes one event of the agent's (data: its JSON, or nil when it
// holds nothing beyond ev's fields, agui.Decoder.Plain): it is counted,
// observed, translated and written; done reports that the run ended, and
// an error what cut the stream short.
func (r *turnRun) handle(ctx context.Context, ev events.Event, data []byte) (done bool, failure error) {
	if _, unknown := ev.(*agui.UnknownEvent); unknown {
		r.life.Met.In("unknown") // bounded: the type is whatever the agent sent
	} else {
		r.life.Met.In(string(ev.Type()))
	}
	if !r.observe(ctx, ev, data) {
		return false, nil
	}
	if err := r.grow(ev); err != nil {
		return false, err
	}
	evs, err := r.tr.FeedJSON(ev, data)
	if err != nil {
		r.feedError(err)
	}
	r.write(ctx, evs)
	return r.tr.Done(), nil
}

// decode reads one event of the agent's, data: a plain text delta the
// translator takes is written at once (textDelta), and ev is nil; any
// other event is returned for handle. A run that may be followed by
// another is read event by event.
func (r *turnRun) decode(ctx context.Context, dec *agui.Decoder, data []byte) (events.Event, error) {
	if r.follow != nil {
		return dec.Decode(data)
	}
	ev, id, delta, err := dec.DecodeText(data)
	if err != nil || ev != nil || r.textDelta(ctx, id, delta) {
		return ev, err
	}
	return dec.Decode(data) // a delta the translator's general path takes (a message's first): decoded again
}

// textDelta takes a TEXT_MESSAGE_CONTENT that the decoder read as its
// message's id and plain delta (agui.Decoder.DecodeText) when the
// translator adds it to the message as one text_delta
// (AGUIToAAP.AddTextDelta): it is counted, sized and written as handle
// would, without an event made of it. false: nothing was done (the
// delta is not the usual case, or it does not fit the message, which
// handle then says), and the caller decodes the event for handle.
func (r *turnRun) textDelta(ctx context.Context, id string, delta []byte) bool {
	if !r.fits(len(delta)) || !r.tr.AddTextDelta(id, delta) {
		return false
	}
	r.msgBytes += len(delta)
	r.life.Met.In(string(events.EventTypeTextMessageContent))
	r.ans.writeTextDelta(delta, func() { r.rec.saveSettled(ctx) })
	return true
}

// write sends AAP events to the client (coalesced by the stream), counting
// them; the turn's stop is held back until the turn is stored (sendStop).
// Before a burst that fills the stream's buffer goes out, the messages it
// settled are stored.
func (r *turnRun) write(ctx context.Context, evs []aap.Event) {
	r.ans.write(evs, func() { r.rec.saveSettled(ctx) })
}

// errEndedInBand is awaitSave's when the turn's own messages could not be
// stored and its stream had begun: it has ended with an error stop.
var errEndedInBand = errors.New("the turn's messages could not be saved; its stream ended with an error stop")

// awaitSave waits for the turn's own messages to be stored. When they
// could not be, the turn is over: with nothing sent yet, the store's error
// is returned, for the handler to answer as a failure before the save
// would get; with a keep-alive sent, the stream ends with an error stop
// (errEndedInBand).
func (r *turnRun) awaitSave(ctx context.Context) error {
	if r.saving == nil {
		return nil
	}
	err := <-r.saving
	r.saving = nil
	if err == nil {
		return nil
	}
	if r.ans.withdraw() {
		return err // nothing had gone out, headers included
	}
	r.log.Error().Err(err).Str("session", r.sess.ID).Msg("store: the turn's messages could not be saved")
	r.write(ctx, r.tr.Finish())
	r.ans.stop(aap.StopError, namedStop(fault.CauseOf(ctx, err)))
	return errEndedInBand
}

// conclude ends the turn once the agent's stream has: it stores the run,
// frees the session and only then sends the turn's stop (or the none
// answer), an error stop when the run could not be stored (in mode none,
// the store's error is returned: nothing has been sent).
func (r *turnRun) conclude(ctx context.Context, failure error) error {
	log, sess := r.log, r.sess
	result := metrics.OutcomeOK
	cut := failure != nil && !r.tr.Done()
	var named *aap.TurnError
	if cut {
		var inBand error
		result, inBand = r.life.Ended(ctx, failure)
		named = namedStop(inBand)
	}
	r.write(ctx, r.tr.Finish())
	if r.tr.Incomplete() && failure == nil {
		result, _ = fault.StreamFailure(nil)
		log.Warn().Str("session", sess.ID).Msg("the agent's stream ended without RUN_FINISHED")
	}
	if u := r.usage(); len(u) > 0 {
		r.life.Met.Tokens(agui.UsageCounts(u))
	}
	if r.tr.Cancelled() {
		result = "agent_cancelled"
		log.Warn().Str("session", sess.ID).Msg("the agent cancelled the run (RUN_FINISHED outcome cancelled): the turn ends with an error stop")
	}
	if re := r.tr.RunError(); re != nil {
		code := ""
		if re.Code != nil {
			code = *re.Code
		}
		result = fault.AgentError
		log.Warn().Str("session", sess.ID).Str("agent_code", code).Str("agent_message", re.Message).Msg("the agent reported an error")
	}
	// Save and free the session before the client sees the end of the
	// turn: a client that sends its next turn at once must find the
	// history complete and the session free; and a turn that could not be
	// stored is not acknowledged.
	stored := r.finish(ctx)
	r.s.kept.keep(sess.ID, r.rec.st)
	r.life.Free()
	stopReason := r.tr.StopReason()
	if cut && turns.Stopped(ctx) {
		// Stopped on request: the turn is over as the user asked, not
		// failed (what came is stored, as when a client leaves).
		stopReason = aap.StopEndTurn
	}
	switch {
	case errors.Is(stored, store.ErrLeaseLost):
		result, stopReason, named = "lease_lost", aap.StopError, namedStop(stored)
		log.Error().Err(stored).Str("session", sess.ID).Msg("the turn was not stored: its lock was taken by another holder; it ends with an error stop")
	case stored != nil:
		result, stopReason = "store_error", aap.StopError
		log.Error().Err(stored).Str("session", sess.ID).Msg("store: the turn could not be stored; it ends with an error stop")
	}
	r.life.Line.Stop, r.life.Line.Upstream = string(stopReason), result
	switch {
	case r.ans.streams():
		r.ans.stop(stopReason, named)
	case stored != nil:
		return stored
	default:
		r.ans.none(r.tr.Response())
	}
	if stored == nil {
		r.s.base.Metrics.InterruptsChanged(len(sess.Interrupts) - len(r.prevInterrupts))
	}
	return nil
}

// grow counts what ev adds to the message the agent is building and
// refuses an event that would take it past Config.MaxMessageSize.
func (r *turnRun) grow(ev events.Event) error {
	n := deltaSize(ev)
	if n == 0 {
		return nil
	}
	if !r.fits(n) {
		return &fault.MessageTooLargeError{Limit: r.s.cfg.MaxMessageSize}
	}
	r.msgBytes += n
	return nil
}

// fits reports whether n more bytes fit the message being built
// (--max-message-size); a message settled since starts the count again.
func (r *turnRun) fits(n int) bool {
	if s := len(r.tr.Settled()); s != r.settled {
		r.settled, r.msgBytes = s, 0
	}
	max := r.s.cfg.MaxMessageSize
	return max <= 0 || r.msgBytes+n <= max
}

// deltaSize is what ev adds to the message being built: the bytes of its
// text, thinking or tool-argument delta.
func deltaSize(ev events.Event) int {
	switch e := ev.(type) {
	case *events.TextMessageContentEvent:
		return len(e.Delta)
	case *events.ToolCallArgsEvent:
		return len(e.Delta)
	case *events.ReasoningMessageContentEvent:
		return len(e.Delta)
	case *events.ThinkingTextMessageContentEvent:
		return len(e.Delta)
	case *events.TextMessageChunkEvent:
		return lenOf(e.Delta)
	case *events.ToolCallChunkEvent:
		return lenOf(e.Delta)
	case *events.ReasoningMessageChunkEvent:
		return lenOf(e.Delta)
	}
	return 0
}

func lenOf(s *string) int {
	if s == nil {
		return 0
	}
	return len(*s)
}

// feedError logs what the translator reported about an event.
func (r *turnRun) feedError(err error) {
	var dropped *translate.DroppedResultError
	switch {
	case errors.As(err, &dropped):
		r.log.Warn().Str("session", r.sess.ID).Str("tool_call_id", dropped.ToolCallID).Str("reason", dropped.Reason).
			Msg("a tool result from the agent left out: history keeps every tool result after its tool_use")
	case !errors.Is(err, translate.ErrTerminated):
		r.log.Warn().Err(err).Str("session", r.sess.ID).Msg("event out of order from the agent")
	}
}

// saveBeforeRead calls save before each read of r.
type saveBeforeRead struct {
	r    io.Reader
	save func()
}

func (s saveBeforeRead) Read(p []byte) (int, error) {
	s.save()
	return s.r.Read(p)
}

// checkpoint stores the message the agent is still streaming, at most once
// per CheckpointInterval, so that a crash of the bridge mid-answer loses
// at most that interval of text. The draft is stored as the last history
// entry and replaced by the next save of the run (a later draft, settled
// messages, or the end of the turn). Not after a MESSAGES_SNAPSHOT, whose
// history the run no longer extends entry by entry.
//
// With more turns streaming than Config.MaxCheckpoints, the interval
// grows so that all of them together stay under that many a second.
//
// A checkpoint rewrites only the run's own entries and the draft
// (Store.ReplaceTail), and only when the draft has changed; once the draft
// is past checkpointSmall, only when it has grown by half since the last:
// over a whole message, checkpoints write a few times its size at most,
// however long it is, and a stream that makes no progress writes nothing.
func (r *turnRun) checkpoint(ctx context.Context) {
	every := r.s.cfg.CheckpointInterval
	if every < 0 || r.rec.replaced {
		return
	}
	if n := r.s.streaming.Load(); n > int64(r.s.cfg.MaxCheckpoints) && r.s.cfg.MaxCheckpoints > 0 {
		every = max(every, time.Duration(n)*time.Second/time.Duration(r.s.cfg.MaxCheckpoints))
	}
	r.rec.checkpoint(ctx, r.s.cfg.Clock(), every, r.msgBytes)
}

// finish stores the rest of the run: the last messages, the open
// interrupts and the state; the same write frees the turn's lock. It uses
// a context of its own, not cancelled with the request's (ctx lends it
// only its values: the trace), so that what was received is saved even
// when the client has gone. A write that fails is tried again while the
// lease holds (Lease.ReleaseWith); the error it returns means the run is
// not stored, and the turn must not be acknowledged.
func (r *turnRun) finish(ctx context.Context) error {
	ctx = context.WithoutCancel(ctx)
	msgs := r.tr.Messages()
	ids := r.tr.MessageIDs()
	// The agent refused the run outright (e.g. it did not accept the
	// resume): what it was waiting for is still open.
	refused := r.tr.StopReason() == aap.StopError && len(msgs) == 0
	r.sess.Interrupts = r.tr.Interrupts()
	if refused && !r.movingOn {
		// A turn that moved on has closed what it cancelled, in the
		// history (its results are stored below): its interrupts never
		// come back, whatever the agent made of the cancellation.
		r.sess.Interrupts = r.prevInterrupts
	}
	if r.stateChanged {
		r.sess.State = r.state
	}
	st := r.rec.st
	if r.rec.refreshEncrypted(msgs, ids) {
		// Values that came after their messages were stored: the run's
		// entries are written again.
		r.rec.uncertain = true
	}
	if !r.rec.draft && !r.rec.uncertain && len(r.rec.perms) == 0 && len(r.rec.movedOn) == 0 {
		// The usual end: the last messages and the session in one write.
		// A try whose outcome is unknown may have stored them: a retry
		// first looks.
		entries := r.rec.unsaved(msgs, ids)
		tries := 0
		err := r.life.Lease.ReleaseWith(func(holder string) error {
			wctx, cancel := context.WithTimeout(ctx, turns.WriteTimeout)
			defer cancel()
			if tries++; tries > 1 {
				if done, err := r.rec.stored(wctx, entries); err != nil || done {
					return err
				}
			}
			return st.SaveSessionUnlock(wctx, r.sess, entries, holder)
		})
		if err == nil {
			r.rec.entries = append(r.rec.entries, entries...)
			r.rec.saved = len(msgs)
		}
		return err
	}
	// A draft to take out, answered permissions to record, or a write of
	// unknown outcome: the run's entries written as they must be (the
	// whole history when answered permissions go before later messages),
	// then the session, both safe to repeat.
	return r.life.Lease.ReleaseWith(func(holder string) error {
		wctx, cancel := context.WithTimeout(ctx, turns.WriteTimeout)
		defer cancel()
		run := append(r.rec.entries[:len(r.rec.entries):len(r.rec.entries)], r.rec.unsaved(msgs, ids)...)
		if err := r.rec.storeRun(wctx, run, refused); err != nil {
			return err
		}
		return st.SaveSessionUnlock(wctx, r.sess, nil, holder)
	})
}
