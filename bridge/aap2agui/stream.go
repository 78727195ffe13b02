package aap2agui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/rs/zerolog"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/bridge/internal/fault"
	"github.com/aapagui/aapagui/bridge/internal/metrics"
	"github.com/aapagui/aapagui/bridge/internal/pump"
	"github.com/aapagui/aapagui/bridge/internal/turns"
	"github.com/aapagui/aapagui/bridge/internal/upstream"
	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/translate"
)

// turnRun is one turn once the agent took its run: it reads the agent's
// events, answers the client and writes the run into the session's history as it goes (history.go). It
// is given what it needs of the turn (turn.Stream) and does not point back
// at it or at the server.
type turnRun struct {
	env            *turnEnv
	log            *zerolog.Logger
	sess           *store.Session
	agent          *agent
	turn           *turns.Turn       // the turn's lease, stream, metrics and log line
	prevInterrupts []types.Interrupt // open before the turn
	tr             *translate.AGUIToAAP
	obs            observer      // what the agent's events change of the session (observe.go)
	history        historyWriter // what the run has stored of itself (history.go)
	followUp       *followUp     // the run that may be followed by one of the new message (CancelRunAuto), else nil

	ans    answer       // what the client gets (answer.go)
	saving <-chan error // the save of the turn's own messages, until awaited

	// size counts what the agent streamed of the message it is building
	// (Config.MaxMessageSize); settled is how many messages had settled
	// when it was reset.
	size    turns.MessageSize
	settled int

	// How the stream ended (ended), for the stop the client gets once the
	// run is stored (acknowledge).
	result  string         // the upstream's result
	named   *aap.TurnError // what ended it, when the bridge knows
	cut     bool           // cut short before the run's end
	stopped bool           // stopped on request (DELETE of the run)
	refused bool           // the agent refused the run outright

	movingOn bool // the turn's user message cancelled the open interrupts
}

// stream reads the agent's events, writes the AAP response and stores
// what the run produces as it goes; once the agent's stream has ended, it
// works out how the turn ends (ended) and makes the session ready to be
// stored (prepareStore).
//
// r.saving, when not nil, delivers the outcome of saving the turn's own
// messages, begun beside the upstream call: nothing of the answer is sent
// or saved before it succeeded, and a failed save ends the turn as a store
// error (returned, to be answered 500, when nothing has been sent yet,
// else an error stop: turns.ErrEndedInBand), with nothing of it stored.
func (r *turnRun) stream(ctx context.Context, body *upstream.IdleBody) error {
	r.env.streaming.Add(1)
	r.turn.OnReport(func() { r.env.streaming.Add(-1) })
	r.ans.open()
	failure, err := r.read(ctx, body)
	if err == nil {
		err = r.awaitSave(ctx) // (the agent's stream ended before its first event)
	}
	if err != nil {
		r.turn.Line.Stop, r.turn.Line.Upstream = string(aap.StopError), "store_error"
		return err
	}
	r.ended(ctx, failure)
	r.prepareStore()
	return nil
}

// read feeds the agent's events to the translator and the client until
// the run ends; it returns what cut the stream short, if anything, and
// the error of awaitSave when the turn's own messages could not be stored.
// A run the agent ended without reading the turn's new user message is
// followed by the run that carries it (followUp), read in turn.
func (r *turnRun) read(ctx context.Context, body *upstream.IdleBody) (failure, unsaved error) {
	failure, unsaved = r.readRun(ctx, body)
	if unsaved != nil || !r.followUp.withholding() {
		return failure, unsaved
	}
	// The first run was read to its end (what cut it short after its
	// RUN_FINISHED changes nothing).
	body.Close()
	next, ev, finished := r.sendFollowUp(ctx)
	if next == nil {
		_, failure = r.takeEvent(ctx, ev, finished)
		return failure, nil
	}
	defer next.Close()
	r.write(ctx, r.tr.EndMessage())
	return r.readRun(ctx, next)
}

// readRun reads the events of one run of the turn (body) through the
// pump (runTaker). Before each read of the agent's stream, what is
// buffered for the client is flushed (modes other than none); before
// that, history messages that became final (a tool's result settles the
// call before it) are stored: a client that has an event finds every
// message before it stored, and a burst that settles messages and ends
// the run is one write, at the end. Checkpoints of the message still
// streaming are due then too, after those writes (a draft is the last
// entry): the clock is read once per read of the agent's stream, not per
// event.
func (r *turnRun) readRun(ctx context.Context, body *upstream.IdleBody) (failure, unsaved error) {
	src := pump.Source{Body: body, MaxEventSize: r.env.cfg.MaxEventSize, BeforeRead: func() {
		r.history.storeSettled(ctx)
		r.checkpoint(ctx)
	}}
	if r.ans.streams() {
		src.Out = r.turn.Out
	}
	err := pump.Run(ctx, src, &runTaker{r: r})
	if r.saving != nil { // the stream ended before its first event
		if err := r.awaitSave(ctx); err != nil {
			return nil, err
		}
	}
	var us unsavedError
	if errors.As(err, &us) {
		return nil, us.err
	}
	return err, nil
}

// unsavedError is runTaker's for the turn's own messages that could not
// be stored (awaitSave): not the stream's failure.
type unsavedError struct{ err error }

func (e unsavedError) Error() string { return e.err.Error() }

// runTaker is the turn's side of the pump for one run of the agent
// (pump.FastTaker). Its first event waits for the turn's own messages to
// be stored (awaitSave). A delta is taken on the stream's goroutine; an
// event that takes encoding/json (decodeFast) is decoded and taken aside,
// as is every event of a run that may be followed by another.
type runTaker struct {
	r   *turnRun
	dec agui.Decoder
}

// Take decodes and takes one event of the agent's (decodeAndTake), unless
// it is the rest of a run that did not read the message.
func (k *runTaker) Take(ctx context.Context, _ string, data []byte) (bool, error) {
	r := k.r
	if r.saving != nil { // the first event only
		if err := r.awaitSave(ctx); err != nil {
			return false, unsavedError{err}
		}
	}
	if r.followUp.withholding() {
		return false, nil // the rest of a run that did not read the message
	}
	return r.decodeAndTake(ctx, &k.dec, data)
}

// TakeFast takes what decodeFast decodes of an event of a run that no
// other follows, once the turn's own messages are stored.
func (k *runTaker) TakeFast(ctx context.Context, _ string, data []byte) (ok, done bool, err error) {
	r := k.r
	if r.saving != nil || r.followUp != nil {
		return false, false, nil
	}
	ev, err := r.decodeFast(ctx, &k.dec, data)
	if err != nil {
		return true, false, fmt.Errorf("%w: %w", fault.ErrBadEvent, err)
	}
	if ev != nil {
		done, err = r.takeEvent(ctx, ev, nil) // (Plain: nothing beyond ev in data)
		return true, done, err
	}
	return !k.dec.Deep(), false, nil // a plain text delta, written; or one for Take
}

// decodeFast reads one event of the agent's, data, as far as the decoder's
// scanner goes (agui.Decoder.DecodeText): a plain text delta the
// translator takes is written at once (textDelta), and ev is nil; another
// event of the scanner's is returned for takeEvent; one that takes
// encoding/json is left for decodeAndTake (ev nil, dec.Deep).
func (r *turnRun) decodeFast(ctx context.Context, dec *agui.Decoder, data []byte) (events.Event, error) {
	ev, id, delta, err := dec.DecodeText(data)
	if err != nil || ev != nil || dec.Deep() || r.textDelta(ctx, id, delta) {
		return ev, err
	}
	return dec.Decode(data) // a delta the translator's general path takes (a message's first): decoded again
}

// decodeAndTake decodes one event of the agent's, data, with encoding/json
// where it needs to, and takes it (takeEvent), unless it belongs to a run
// that did not read the turn's message (followUp).
func (r *turnRun) decodeAndTake(ctx context.Context, dec *agui.Decoder, data []byte) (done bool, failure error) {
	ev, err := dec.Decode(data)
	if err != nil {
		return false, fmt.Errorf("%w: %w", fault.ErrBadEvent, err)
	}
	if r.followUp != nil && !r.followUp.pass(ev, data) {
		return false, nil
	}
	if dec.Plain() {
		data = nil // nothing beyond ev in it: nobody need look
	}
	return r.takeEvent(ctx, ev, data)
}

// takeEvent takes one event of the agent's (data: its JSON, or nil when it
// holds nothing beyond ev's fields, agui.Decoder.Plain): it is counted,
// observed, translated and written; done reports that the run ended, and
// an error what cut the stream short.
func (r *turnRun) takeEvent(ctx context.Context, ev events.Event, data []byte) (done bool, failure error) {
	_, unknown := ev.(*agui.UnknownEvent)
	r.turn.CountIn(string(ev.Type()), !unknown)
	pass, out := r.obs.observe(ctx, ev, data)
	if !r.obs.refused {
		r.carryEvent(ctx, ev, data)
	}
	if !pass {
		if len(out) > 0 {
			r.write(ctx, out) // what a MESSAGES_SNAPSHOT holds that the run had not streamed
		}
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

// textDelta takes a TEXT_MESSAGE_CONTENT that the decoder read as its
// message's id and plain delta (agui.Decoder.DecodeText) when the
// translator adds it to the message as one text_delta
// (AGUIToAAP.AddTextDelta): it is counted, sized and written as takeEvent
// would, without an event made of it. false: nothing was done (the
// delta is not the usual case, or it does not fit the message, which
// takeEvent then says), and the caller decodes the event for takeEvent.
func (r *turnRun) textDelta(ctx context.Context, id string, delta []byte) bool {
	r.newMessage()
	if !r.size.Fits(len(delta)) || !r.tr.AddTextDelta(id, delta) {
		return false
	}
	r.size.Add(len(delta))
	r.turn.CountIn(string(events.EventTypeTextMessageContent), true)
	r.ans.writeTextDelta(delta, func() { r.history.storeSettled(ctx) })
	return true
}

// write sends AAP events to the client (coalesced by the stream), counting
// them; the turn's stop is withheld until the turn is stored (sendStop).
// Before a burst that fills the stream's buffer goes out, the messages it
// settled are stored.
func (r *turnRun) write(ctx context.Context, evs []aap.Event) {
	r.ans.write(evs, func() { r.history.storeSettled(ctx) })
}

// awaitSave waits for the turn's own messages to be stored. When they
// could not be, the turn is over: with nothing sent yet, the store's error
// is returned, for the handler to answer as a failure before the save
// would get; with a keep-alive sent, the stream ends with an error stop
// (turns.ErrEndedInBand).
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
	return turns.ErrEndedInBand
}

// ended works out how the turn ends once the agent's stream has: what
// cut it short (failure), the run's error or cancellation, its usage.
func (r *turnRun) ended(ctx context.Context, failure error) {
	log, sess := r.log, r.sess
	r.result = metrics.OutcomeOK
	r.cut = failure != nil && !r.tr.Done()
	if r.cut {
		var inBand error
		r.result, inBand = r.turn.Cut(ctx, failure)
		r.named = namedStop(inBand)
	}
	r.write(ctx, r.tr.Finish())
	if r.tr.Incomplete() && failure == nil {
		r.result, _ = fault.StreamFailure(nil)
		log.Warn().Str("session", sess.ID).Msg("the agent's stream ended without RUN_FINISHED")
	}
	if u := r.usage(); len(u) > 0 {
		r.turn.Met.Tokens(agui.UsageCounts(u))
	}
	r.obs.dropped.report(log, r.env.met, sess.ID)
	if r.tr.Cancelled() {
		r.result = "agent_cancelled"
		log.Warn().Str("session", sess.ID).Msg("the agent cancelled the run (RUN_FINISHED outcome cancelled): the turn ends with an error stop")
	}
	if re := r.tr.RunError(); re != nil {
		code := ""
		if re.Code != nil {
			code = *re.Code
		}
		r.result = fault.AgentError
		log.Warn().Str("session", sess.ID).Str("agent_code", code).Str("agent_message", re.Message).Msg("the agent reported an error")
	}
	if r.cut && turns.Stopped(ctx) {
		// Stopped on request: the turn is over as the user asked, not
		// failed (what came is stored, as when a client leaves).
		r.stopped = true
	}
}

// usage is the turn's token usage: with a run of the message, the first
// run's too.
func (r *turnRun) usage() []agui.TokenUsage {
	if r.followUp == nil {
		return r.tr.Usage()
	}
	return slices.Concat(r.followUp.usage, r.tr.Usage())
}

// acknowledge sends the turn's stop (or the none answer) once the run is
// stored and the session free, an error stop when the run could not be
// stored (in mode none, the store's error is returned: nothing has been
// sent).
func (r *turnRun) acknowledge(stored error) error {
	log, sess := r.log, r.sess
	result, named := r.result, r.named
	stopReason := r.tr.StopReason()
	if r.stopped {
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
	r.turn.Line.Stop, r.turn.Line.Upstream = string(stopReason), result
	switch {
	case r.ans.streams():
		r.ans.stop(stopReason, named)
	case stored != nil:
		return stored
	default:
		r.ans.none(r.tr.Response())
	}
	if stored == nil {
		r.env.met.InterruptsChanged(len(sess.Interrupts) - len(r.prevInterrupts))
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
	r.newMessage()
	return r.size.Grow(n)
}

// newMessage starts the size count again when a message settled since.
func (r *turnRun) newMessage() {
	if s := len(r.tr.Settled()); s != r.settled {
		r.settled = s
		r.size.Reset()
	}
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
	cfg := r.env.cfg
	every := cfg.CheckpointInterval
	if every < 0 || r.history.replaced {
		return
	}
	if n := r.env.streaming.Load(); n > int64(cfg.MaxCheckpoints) && cfg.MaxCheckpoints > 0 {
		every = max(every, time.Duration(n)*time.Second/time.Duration(cfg.MaxCheckpoints))
	}
	r.history.checkpoint(ctx, cfg.Clock(), every, r.size.Bytes())
}

// prepareStore makes the session what the run leaves it: its open
// interrupts and its state; and works out what the run's last write is.
func (r *turnRun) prepareStore() {
	msgs, ids := r.tr.Messages(), r.tr.MessageIDs()
	// The agent refused the run outright (e.g. it did not accept the
	// resume): what it was waiting for is still open.
	r.refused = r.tr.StopReason() == aap.StopError && len(msgs) == 0
	r.sess.Interrupts = r.tr.Interrupts()
	if r.refused && !r.movingOn {
		// A turn that moved on has closed what it cancelled, in the
		// history (its results are stored below): its interrupts never
		// come back, whatever the agent made of the cancellation.
		r.sess.Interrupts = r.prevInterrupts
	}
	if r.obs.stateChanged {
		r.sess.State = r.obs.stateJSON()
	}
	if r.obs.actsChanged {
		r.sess.Activities = r.obs.acts.JSON()
	}
	r.history.prepareEnd(msgs, ids)
}

// store is one try of the run's last write, which frees holder's lock
// (historyWriter.storeEnd); the error of the last try means the run is not
// stored, and the turn must not be acknowledged (turns.Protocol.Store).
func (r *turnRun) store(ctx context.Context, holder string) error {
	return r.cacheHistory(r.history.storeEnd(ctx, r.sess, holder, r.refused))
}

// cacheHistory caches the history the run leaves for the next turn once
// it is stored (err nil), before the session is free: a client that sends
// its next turn at once finds it.
func (r *turnRun) cacheHistory(err error) error {
	if err == nil {
		r.env.cache.update(r.sess.ID, r.history.st)
	}
	return err
}

// turnEnv is what a turn uses of the server it runs on, handed down to it:
// the configuration, the agents served, the metrics, the history cache
// and the count of turns streaming.
type turnEnv struct {
	cfg       *Config
	roster    *roster
	met       *metrics.Metrics
	cache     *historyCache
	streaming *atomic.Int64
}
