package turns

import (
	"context"
	"errors"
	"net/http"

	"github.com/aapagui/aapagui/bridge/internal/edge"
	"github.com/aapagui/aapagui/bridge/internal/fault"
	"github.com/aapagui/aapagui/bridge/internal/tracing"
	"github.com/aapagui/aapagui/internal/aside"
	"github.com/aapagui/aapagui/store"
)

// The turn's sequence, written once for both bridges: admission, the
// conversation's lock and what it continues, the turn's context, the
// bridge's checks and plan, the upstream call, the stream, the last write
// that frees the lock, and only then the acknowledged end. Each bridge
// supplies its protocol (Protocol); the order is Run's.

// Protocol is what a bridge supplies to a turn (Base.Run): how it takes
// and reads its conversation, plans the turn, calls its upstream, reads
// and translates the upstream's events, stores the turn's end and tells
// its client. What both bridges do around those steps is Run's: the
// agent traced and the turn counted once it is planned, its run log kept
// and the client's stream opened once the upstream took it. An error a
// step returns before the answer began is the handler's to answer (an
// HTTP error); after it began, a step tells the client in-band.
type Protocol interface {
	// Take takes the conversation's lock with lo and reads what the turn
	// continues (the session and its history, the thread), all within
	// start, which StartTimeout bounds.
	Take(start context.Context, lo store.LeaseOptions) (*store.Lease, error)
	// Prepare checks and plans the turn once it holds its lock: an error
	// refuses it, before anything of it ran. The plan names the turn's
	// agent as soon as it is known, with an error too (the turn's span
	// names it).
	Prepare(ctx context.Context, t *Turn) (Plan, error)
	// Call sends the turn to the upstream: an error means the upstream
	// never took it.
	Call(ctx context.Context, t *Turn) error
	// Stream reads the upstream's events, translates them and writes
	// them to the client (Turn.Out, open), withholding the event that
	// ends the answer (Writer). An error is returned only while nothing
	// of the answer has gone out, or ErrEndedInBand.
	Stream(ctx context.Context, t *Turn) error
	// Store writes the turn's end in one write that frees holder's lock
	// (store.Lease.ReleaseWith: tried again while the lease holds). ctx
	// is bounded by WriteTimeout and not cancelled with the request's.
	Store(ctx context.Context, holder string) error
	// Acknowledge tells the client the turn's end, after the lock is free:
	// the event withheld when stored is nil, else the error that takes
	// its place. An error is returned only when nothing was sent (an
	// answer of one JSON body).
	Acknowledge(t *Turn, stored error) error
}

// Plan is what a turn's Prepare tells Base.Run of the turn.
type Plan struct {
	// Agent is the agent the turn calls: the turn's span names it
	// (tracing.Agent), its metrics count it (Turn.Count).
	Agent string
	// Mode is the upstream stream mode the turn's metrics count it under.
	Mode string
	// RunLog, when not nil, is where the turn's stream is kept once the
	// upstream took the turn (Turn.KeepRunLog), so that a client can
	// rejoin or stop it; nil: it is not kept.
	RunLog *RunLog
}

// RunLog is a run log a turn's stream is kept in: its store, and the log.
type RunLog struct {
	Store store.RunLogStore
	Log   store.RunLog
}

// ErrEndedInBand is Protocol.Stream's when it has ended the answer
// itself with an error told in-band (the turn's own messages could not
// be stored once its stream had begun): the turn is over, with nothing
// more to store or send.
var ErrEndedInBand = errors.New("the turn ended in-band; nothing of it is to be stored")

// Run runs one turn of p's conversation, from its admission to its
// acknowledged end, for the request whose context is ctx, answered on w
// (its logger and arrival are RequestLog's: edge.LoggerOf, edge.StartOf);
// line names the turn in its log line. It returns an error only before
// the turn's answer began (the caller answers it as a failure), and names
// one cut short by the turn's own context (a lost lease, a stop on
// request) by that cause.
//
// The order is Run's, the same for both bridges: admission and the lock
// (Take), the turn's context (BeginTurn), Prepare, then the agent traced
// and the turn counted; Call, then the run log kept and the client's
// stream opened; Stream; the last write that frees the lock (Store); and
// only then the acknowledged end (Acknowledge).
//
// The start's store work (the lock and the reads) is bounded by
// StartTimeout: past it the turn is refused, 503 store_busy, before
// anything of it ran; a process too busy to take it is refused first,
// 503 overloaded (admit.Load). The turn's steps get the turn's context;
// ctx stays the request's, on which an error returned is answered
// (edge.ClientLeft asks it whether the client went away).
func (b *Base) Run(ctx context.Context, w http.ResponseWriter, line LogLine, p Protocol) error {
	var st turnStart
	defer st.finish()
	// The steps before the stream go deep (the store, the upstream call):
	// they run aside, on one goroutine, so that the goroutine that waits
	// on the stream stays small (internal/aside).
	var tctx context.Context
	if err := aside.Do(func() (err error) {
		tctx, err = b.start(ctx, w, line, p, &st)
		return err
	}); err != nil {
		return err
	}
	t := st.t
	if err := p.Stream(tctx, t); errors.Is(err, ErrEndedInBand) {
		return nil
	} else if err != nil {
		return fault.CauseOf(tctx, err)
	}
	stored := aside.Do(func() error { return t.store(tctx, p.Store) })
	t.Unlock()
	return p.Acknowledge(t, stored)
}

// turnStart is what a turn's start (Base.start) has made so far: its
// Turn once begun, and whether it was prepared.
type turnStart struct {
	t        *Turn
	prepared bool
}

// finish reports the turn (Turn.Report) once it was prepared and closes it
// once begun, whatever stopped it, a panic too.
func (st *turnStart) finish() {
	if st.t == nil {
		return
	}
	if st.prepared {
		st.t.Report()
	}
	st.t.Close()
}

// start runs the turn's steps before its stream, recording in st what it
// made, and returns the turn's context: admission and the lock (take),
// the turn's context (BeginTurn), Prepare, the agent traced and the turn
// counted, Call, the run log kept and the client's stream opened on w. An
// error after the turn began is the turn context's cause, when it has one.
func (b *Base) start(ctx context.Context, w http.ResponseWriter, line LogLine, p Protocol, st *turnStart) (context.Context, error) {
	log := edge.LoggerOf(w)
	lease, err := b.take(ctx, p, b.LeaseOptions(log, line.IDKey, line.ID))
	if err != nil {
		return nil, err
	}
	tctx, t := b.BeginTurn(ctx, lease, log, line)
	st.t = t
	plan, err := p.Prepare(tctx, t)
	if plan.Agent != "" {
		tracing.Agent(tctx, plan.Agent)
	}
	if err != nil {
		return nil, fault.CauseOf(tctx, err)
	}
	t.Count(b.Metrics, edge.StartOf(w), plan.Agent, plan.Mode)
	st.prepared = true
	if err := p.Call(tctx, t); err != nil {
		return nil, fault.CauseOf(tctx, err)
	}
	if plan.RunLog != nil {
		t.KeepRunLog(plan.RunLog.Store, plan.RunLog.Log)
	}
	t.OpenStream(w)
	return tctx, nil
}

// take admits the turn's start and takes its lock (Protocol.Take), within
// StartTimeout.
func (b *Base) take(ctx context.Context, p Protocol, lo store.LeaseOptions) (*store.Lease, error) {
	start, cancel := fault.StartContext(ctx, b.serving.StartTimeout)
	defer cancel()
	if err := b.Load.Admit(start); err != nil {
		return nil, err // 503 overloaded, before the store is asked
	}
	lease, err := p.Take(start, lo)
	err = fault.CauseOf(start, err)
	b.Load.Started(err)
	return lease, err
}

// store makes the turn's last write (Protocol.Store) with a context of
// its own, not cancelled with the request's (ctx lends it only its
// values: the trace), so that what was received is stored even when the
// client has gone; each try is bounded by WriteTimeout, and tried again
// while the lease holds. An error means the turn is not stored, and must
// not be acknowledged.
func (t *Turn) store(ctx context.Context, write func(context.Context, string) error) error {
	ctx = context.WithoutCancel(ctx)
	return t.Lease.ReleaseWith(func(holder string) error {
		wctx, cancel := context.WithTimeout(ctx, WriteTimeout)
		defer cancel()
		return write(wctx, holder)
	})
}
