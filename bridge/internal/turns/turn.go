package turns

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/rs/zerolog"

	"github.com/aapagui/aapagui/bridge/internal/fault"
	"github.com/aapagui/aapagui/bridge/internal/metrics"
	"github.com/aapagui/aapagui/bridge/internal/runlog"
	"github.com/aapagui/aapagui/bridge/internal/ssestream"
	"github.com/aapagui/aapagui/store"
)

// Turn is what a turn of aap2agui and a run of agui2aap share, from
// the moment it holds its conversation's lock to its log line: the lease
// and the context bound to it, the client's stream, the metrics, and why
// it ended. Each bridge begins one with Base.BeginTurn and supplies
// only what differs: its wire, its translator and what it stores.
//
// A Turn is used by the one goroutine that serves its request.
type Turn struct {
	// Log is the request's logger.
	Log *zerolog.Logger
	// Out is the client's stream, once OpenStream has made it.
	Out *ssestream.Stream
	// Met counts the turn once Count has started it.
	Met *metrics.Turn
	// Line is the turn's log line (Report): the bridge fills in the stop
	// reason and the upstream's result as the turn goes.
	Line LogLine
	// Lease is the lock of the turn's conversation.
	Lease *store.Lease
	// RunLog records the turn's stream in its run log (KeepRunLog), or is nil.
	RunLog *runlog.Recorder

	base     *Base
	onReport []func()
	end      context.CancelCauseFunc
	stop     func()
}

// BeginTurn starts the turn of the conversation whose lock lease holds:
// the returned context, derived from ctx, ends when the lock is lost (a
// turn whose lock was lost, this process having stalled past the lease,
// stops rather than run beside the turn that took it over), when the
// client stops reading or leaves (the stream's writes end it), and after
// MaxTurnDuration. Close frees it all.
//
// With OnClientGone finish the turn's context does not end with the
// request's, nor with a failed write: the turn runs to its end whether or
// not anybody reads it.
func (b *Base) BeginTurn(ctx context.Context, lease *store.Lease, log *zerolog.Logger, line LogLine) (context.Context, *Turn) {
	s := b.serving
	if s.OnClientGone == ClientGoneFinish {
		ctx = context.WithoutCancel(ctx) // the request's values (its trace) stay
	}
	ctx, end, stop := TurnContext(ctx, s.MaxTurnDuration)
	lease.CancelOnLoss(end)
	return ctx, &Turn{Log: log, Line: line, Lease: lease, base: b, end: end, stop: stop}
}

// Close closes the client's stream, ends the turn's context, frees its
// lock, if Unlock has not, and ends its run log, if it is recorded.
func (t *Turn) Close() {
	if t.Out != nil {
		t.Out.Done()
	}
	t.stop()
	t.Lease.Release()
	if t.RunLog != nil {
		t.RunLog.Finish()
	}
}

// KeepRunLog makes the turn's stream recorded in st as run rl (its Owner,
// Key, RunID, Form and Input: store.RunLog), each of its events with an
// SSE id, so that a client can rejoin it (Base.Rejoin), and stoppable
// on request (Base.StopRun: the turn's context then ends with
// ErrRunStopped); call it before OpenStream.
func (t *Turn) KeepRunLog(st store.RunLogStore, rl store.RunLog) {
	t.RunLog = t.base.runs.Start(st, t.Log, rl)
	unstop := t.base.runs.Stoppable(st, t.RunLog.ID(), func() { t.end(fault.ErrRunStopped) })
	stop := t.stop
	t.stop = func() { unstop(); stop() }
}

// Unlock frees the turn's lock at once (the turn stored its end with
// it, or could not), before the final event goes out: a client that
// starts its next turn as soon as it has this one's end finds the
// conversation free.
func (t *Turn) Unlock() { t.Lease.Release() }

// OpenStream makes the client's stream on w: keep-alive comments while
// the upstream is quiet, and writes bounded by StallTimeout, a failed
// write ending the turn's context with its cause (ErrClientStalled,
// ErrClientGone), unless the turn runs to its end whatever its client
// does (OnClientGone finish): then the stream only stops writing. Close it
// with Out.Done.
func (t *Turn) OpenStream(w http.ResponseWriter) *ssestream.Stream {
	t.Out = ssestream.New(w)
	t.Out.KeepAlive = t.base.serving.KeepAlive
	t.Out.StallTimeout = t.base.serving.StallTimeout
	t.Out.Recorder = t.RunLog
	if t.base.serving.OnClientGone != ClientGoneFinish {
		t.Out.Cancel = t.end
	}
	return t.Out
}

// Count starts the turn's metrics (from the request's start) for the
// agent and the upstream stream mode; the turn is then counted in flight
// until End.
func (t *Turn) Count(m *metrics.Metrics, start time.Time, agent, mode string) {
	t.Met = m.StartTurn(start, agent, mode)
	t.Line.Upstream = metrics.OutcomeOK
}

// CountIn counts an event read from the upstream under its name, or
// under "unknown" for one the bridge does not know (the metric's labels
// stay bounded: an unknown event's name is whatever the upstream sent).
func (t *Turn) CountIn(name string, known bool) {
	if !known {
		name = "unknown"
	}
	t.Met.In(name)
}

// OnReport makes f run when the turn ends, before its metrics and log line
// (Report).
func (t *Turn) OnReport(f func()) { t.onReport = append(t.onReport, f) }

// Report ends the turn's metrics and writes its one log line (WriteLogLine). A
// turn that was never counted ends silently.
func (t *Turn) Report() {
	for _, f := range t.onReport {
		f()
	}
	if t.Met != nil {
		WriteLogLine(t.Log, t.Met, t.Line)
	}
}

// Cut names what ended the turn's upstream stream early, once its
// answer began (failure: the read's error, not nil), and logs it. It
// returns the upstream's result for the metrics and the log line, and
// the error to tell the client in-band: nil when the client stopped
// reading or left, since nobody reads it any more.
//
// The turn's own context says why it ended, before the failure does: a
// lock that could not be kept, a stop on request (OutcomeStopped), a
// client that stopped reading or left, a turn past MaxTurnDuration;
// otherwise the failure is the upstream's, named by StreamFailure.
func (t *Turn) Cut(ctx context.Context, failure error) (result string, inBand error) {
	log, cause := t.Log, context.Cause(ctx)
	switch {
	case ctx.Err() == nil || errors.Is(cause, fault.ErrTurnTooLong):
		if ctx.Err() != nil {
			failure = cause
		}
		code, msg := fault.StreamFailure(failure)
		log.Warn().Err(failure).Str(t.Line.IDKey, t.Line.ID).Str("code", code).Msg(msg)
		return code, failure
	case errors.Is(cause, store.ErrLeaseLost):
		log.Error().Err(cause).Str(t.Line.IDKey, t.Line.ID).Msg("the " + t.Line.What + " stopped: its lock could not be kept")
		return "lease_lost", cause
	case errors.Is(cause, fault.ErrRunStopped):
		log.Info().Str(t.Line.IDKey, t.Line.ID).Str("run_log", t.RunLog.ID()).Msg("the " + t.Line.What + " was stopped on request; upstream cancelled")
		return metrics.OutcomeStopped, nil
	case errors.Is(cause, fault.ErrClientStalled):
		log.Info().Str(t.Line.IDKey, t.Line.ID).Msg("client stopped reading; upstream cancelled")
	default:
		log.Info().Str(t.Line.IDKey, t.Line.ID).Msg("client went away; upstream cancelled")
	}
	return metrics.OutcomeCancelled, nil
}

// TurnContext derives a turn's context from parent: end ends it with a
// cause (the stream's Cancel: a client that stopped reading or left), and
// it ends by itself with ErrTurnTooLong once max has passed (never when
// max <= 0). stop releases it.
func TurnContext(parent context.Context, max time.Duration) (ctx context.Context, end context.CancelCauseFunc, stop func()) {
	ctx, end = context.WithCancelCause(parent)
	if max <= 0 {
		return ctx, end, func() { end(nil) }
	}
	ctx, stopClock := context.WithTimeoutCause(ctx, max, fault.ErrTurnTooLong)
	return ctx, end, func() { stopClock(); end(nil) }
}
