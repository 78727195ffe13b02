package agui2aap

import (
	"context"
	"errors"
	"iter"
	"net/http"
	"time"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/rs/zerolog"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/bridge/internal/fault"
	"github.com/aapagui/aapagui/bridge/internal/metrics"
	"github.com/aapagui/aapagui/bridge/internal/ssestream"
	"github.com/aapagui/aapagui/bridge/internal/tracing"
	"github.com/aapagui/aapagui/bridge/internal/turns"
	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/translate"
)

// runner carries one run through its AAP turns. It is the protocol
// agui2aap gives the run's sequence (turns.Base.Run): Take, Prepare,
// Call, Stream, Store and Acknowledge, in that order. It holds what the
// run needs of its request (the response writer, the request's start,
// the request's logger) and of its server (runEnv); the run's context is
// passed to its steps.
type runner struct {
	env       runEnv
	rw        http.ResponseWriter
	start     time.Time // the request's (metrics.RequestStart)
	cl        *aap.Client
	version   int // the AAP server's protocol version
	owner     string
	agentName string // the agent as the route names it
	// openSession starts the thread's new AAP session as the server's
	// version does (openerFor), chosen once.
	openSession func(context.Context, newSession) (*aap.PostSessionTurnRequest, error)
	in          *types.RunAgentInput
	info        *aap.AgentInfo
	th          *store.Thread
	p           *translate.RunPlan
	log         *zerolog.Logger
	life        *turns.Turn // the lease, the run's stream, metrics and log line
	clientTools []aap.ToolSpec
	fwd         *translate.Forwarded
	w           turns.Writer[events.Event] // writes the run, its RUN_FINISHED held back until the thread is saved
	put         *aap.PutSessionRequest     // the first turn of a new session, on a version 1 or 2 server
	movedFrom   string                     // the session a PUT /session replaces ("" for a thread's first)

	req      *aap.PostSessionTurnRequest // the run's first turn
	evs      iter.Seq2[aap.Event, error] // its events, once the AAP server took it
	a2g      *translate.AAPToAGUI
	clients  map[string]bool // client tool names
	results  map[string]bool // toolCallIds with a tool_result in this run
	answered answers         // the permissions the current turn answers
	followUp int
	// size counts what the agent streamed of the message it is building
	// (Serving.MaxMessageSize).
	size turns.MessageSize

	openBefore int // interrupts open when the run started
	// recordable are the client's messages the thread's record will get
	// at the save (keepForRecord).
	recordable []types.Message
}

// runEnv is what a run uses of the server it runs on, handed down to it:
// the configuration and the metrics.
type runEnv struct {
	cfg *Config
	met *metrics.Metrics
}

// Take takes the thread's run lock and reads the thread (nil for a new
// one). A thread a run holds is 409 run_in_progress.
func (r *runner) Take(start context.Context, lo store.LeaseOptions) (*store.Lease, error) {
	lease, err := takeThread(start, r.env.cfg.Store, r.owner, r.in.ThreadID, lo, runBusy)
	if err != nil {
		return nil, err
	}
	if r.th, err = r.env.cfg.loadThread(start, r.owner, r.in.ThreadID); err != nil {
		lease.Release()
		return nil, err
	}
	return lease, nil
}

// Prepare plans the run against what the thread's session has seen
// (plan.go): a new thread needs room under the key's limit, and a run the
// interrupt rules refuse is a *translate.Refusal. The run is then in
// flight, counted until its end.
func (r *runner) Prepare(ctx context.Context, life *turns.Turn) error {
	r.life = life
	if r.th == nil {
		if err := r.env.cfg.roomForThread(ctx, r.log, r.owner); err != nil {
			return err
		}
	}
	var err error
	if r.p, err = r.env.cfg.makePlan(r.th, r.in, r.agentName); err != nil {
		return err
	}
	if r.th == nil {
		r.th = &store.Thread{Owner: r.owner, ID: r.in.ThreadID}
	}
	r.size.Max = r.env.cfg.MaxMessageSize
	life.Count(r.env.met, r.start, r.info.Name, string(r.mode()))
	return nil
}

// Call opens the run's first turn (on a new session when the AAP server
// lost the thread's), with the translator and the client's stream ready
// for its events.
func (r *runner) Call(ctx context.Context, _ *turns.Turn) error {
	tracing.Agent(ctx, r.info.Name)
	r.openBefore = len(r.th.Interrupts)
	req, err := r.begin(ctx)
	if err != nil {
		return err
	}
	r.prepareStream(ctx)
	if r.evs, err = r.openFirst(ctx, req); err != nil {
		return err
	}
	r.req = req
	return nil
}

// Stream translates the run's turns to the client (pump), then makes the
// thread what the run leaves it (prepareSave).
func (r *runner) Stream(ctx context.Context, _ *turns.Turn) error {
	r.travelLight()
	r.life.Out.Start()
	r.pump(ctx, r.evs, r.req)
	if r.th.SessionID == "" {
		r.log.Warn().Str("thread", r.in.ThreadID).Msg("the AAP server's PUT /session answer named no session (no session_start): the next run starts a new session")
	}
	r.prepareSave()
	return nil
}

func (r *runner) mode() aap.StreamMode {
	caps := r.info.Capabilities
	switch {
	case caps.SupportsStream(aap.StreamDelta):
		return aap.StreamDelta
	case caps.SupportsStream(aap.StreamMessage):
		return aap.StreamMessage
	}
	return aap.StreamNone
}

// prepareStream sets up the translator and the client's stream.
func (r *runner) prepareStream(ctx context.Context) {
	r.clients = map[string]bool{}
	for _, t := range r.in.Tools {
		r.clients[t.Name] = true
	}
	interrupting := r.env.cfg.Policy == PolicyInterrupt
	r.a2g = translate.NewAAPToAGUI(translate.AAPToAGUIOptions{
		ThreadID: r.in.ThreadID, RunID: r.in.RunID,
		// Under a grant or deny policy nothing is ever interrupted.
		IsClientTool: func(name string) bool { return r.clients[name] || !interrupting },
		Spill:        r.spill(ctx),
	})
	r.results = map[string]bool{}
	r.keepForRecord()
	r.record()
	r.life.OpenStream(r.rw)
}

// travelLight lets go of what grows with the conversation once the turn
// is under way, so that an open stream's memory does not: the client's
// messages (the thread's title is taken from them first) and the plan's
// seed. With SnapshotAfterRuns the messages stay, for the snapshot at the
// end.
func (r *runner) travelLight() {
	if r.th.Title == "" {
		r.th.Title = threadTitle(r.in.Messages)
	}
	r.p.Seed = nil
	if !r.env.cfg.SnapshotAfterRuns {
		r.in.Messages = nil
	}
}

// pump translates the turn's events to the client, running follow-up turns
// when the permission policy answers for the client. A run stopped on
// request (turns.Stopped) ends with RUN_FINISHED.
func (r *runner) pump(ctx context.Context, evs iter.Seq2[aap.Event, error], req *aap.PostSessionTurnRequest) {
	r.answered = answersOf(req.Messages)
	for {
		next := r.stream(ctx, evs)
		if next == nil {
			break
		}
		if r.followUp++; r.followUp > r.env.cfg.MaxFollowUps {
			r.write(r.a2g.Fail(inBand(errTooManyFollowUps)))
			return
		}
		r.answered = answersOf(next)
		fu := &aap.PostSessionTurnRequest{Stream: req.Stream, Messages: next}
		var err error
		if evs, err = r.open(ctx, r.th.SessionID, fu); err != nil {
			if turns.Stopped(ctx) {
				break
			}
			r.log.Warn().Err(err).Msg("follow-up turn refused")
			r.write(r.a2g.Fail(inBand(&followUpError{err})))
			return
		}
	}
	switch {
	case r.a2g.Done():
	case turns.Stopped(ctx):
		// Stopped on request: the run ends as the user asked, with
		// RUN_FINISHED (what is open closed first), not RUN_ERROR.
		r.feed(&aap.TurnStop{StopReason: aap.StopEndTurn})
	default:
		r.write(r.a2g.Finish())
	}
}

// stream feeds one turn's events to the translator. It returns the
// permissions of a follow-up turn when the turn stopped for untrusted
// server tools only and the policy answers them, else nil.
//
// The result of each call the turn answered with a tool_permission reaches
// the client before anything of the answer that follows it: as the AAP
// server streams it, or, from a server that only stores it, read from the
// session's history when the answer begins. A server that has not stored it
// yet by then (it saves the turn at its end) makes the bridge hold the
// answer back until the turn ends and read the history again.
func (r *runner) stream(ctx context.Context, evs iter.Seq2[aap.Event, error]) []aap.Message {
	first := r.followUp == 0
	r.life.Line.Stop = ""
	result := "" // set by a failure; else worked out from the stop reason
	defer func() { r.turnDone(result) }()
	h := holdback{missing: r.missingResults()}
	for ev, err := range evs {
		if err != nil {
			if h.holding {
				r.release(ctx, &h)
			}
			result = r.failed(ctx, err)
			return nil
		}
		if d, ok := ev.(*aap.TextDelta); ok && !h.holding && len(h.missing) == 0 && r.textDelta(d.Delta) {
			continue
		}
		_, unknown := ev.(*aap.UnknownEvent)
		r.life.CountIn(string(ev.EventName()), !unknown)
		if err := r.grow(ev); err != nil {
			if h.holding {
				r.release(ctx, &h)
			}
			result = r.failed(ctx, err)
			return nil
		}
		switch e := ev.(type) {
		case *aap.TurnStart:
			if !first {
				continue // one run, several turns
			}
		case *aap.ToolResult:
			if r.lateResult(ctx, &h, e) {
				continue
			}
		case *aap.SessionStart:
			r.started(e.SessionID)
			continue
		case *aap.UnknownEvent:
			r.log.Debug().Str("event", string(e.Name)).Msg("unknown AAP event skipped")
			continue
		case *aap.TurnStop:
			r.life.Line.Stop = string(e.StopReason)
		}
		if r.holdBack(ctx, &h, ev) {
			continue
		}
		if next := r.policyTurn(ev); next != nil {
			return next
		}
		r.feed(ev)
		if r.a2g.Done() {
			return nil
		}
	}
	if h.holding {
		r.release(ctx, &h)
	}
	return nil
}

// grow counts what ev adds to the message the agent is building and
// refuses an event that would take it past Serving.MaxMessageSize; the
// count starts again with each message (a turn's start, a tool's result).
func (r *runner) grow(ev aap.Event) error {
	n := 0
	switch e := ev.(type) {
	case *aap.TurnStart, *aap.ToolResult:
		r.size.Reset()
		return nil
	case *aap.TextDelta:
		n = len(e.Delta)
	case *aap.ThinkingDelta:
		n = len(e.Delta)
	case *aap.Text:
		n = len(e.Text)
	case *aap.Thinking:
		n = len(e.Thinking)
	case *aap.ToolCall:
		n = len(e.Input)
	}
	return r.size.Grow(n)
}

// textDelta takes a text_delta that the translator adds to its text
// message as one TEXT_MESSAGE_CONTENT (AAPToAGUI.AddTextDelta): it is
// counted, sized and written as stream would, without an event made of
// it. false: nothing was done (the delta is not the usual case, or does
// not fit the message, which grow then says), and stream takes the event.
func (r *runner) textDelta(delta string) bool {
	if !r.size.Fits(len(delta)) {
		return false
	}
	id, ok := r.a2g.AddTextDelta(delta)
	if !ok {
		return false
	}
	r.size.Add(len(delta))
	r.life.Met.In(string(aap.EventTextDelta))
	r.w.WriteFrame(r.life, string(events.EventTypeTextMessageContent), func(b []byte) ([]byte, error) { return agui.AppendTextContentFrame(b, id, delta), nil }, nil)
	return true
}

// policyTurn returns the permissions of a follow-up turn when ev ends the
// turn for tool calls the grant or deny policy answers; else nil.
func (r *runner) policyTurn(ev aap.Event) []aap.Message {
	if e, ok := ev.(*aap.TurnStop); ok && e.StopReason == aap.StopToolUse && r.env.cfg.Policy != PolicyInterrupt {
		return r.policyAnswers()
	}
	return nil
}

// failed ends the run for a failure of its turn's stream (RUN_ERROR with
// the failure's code, unless the client is gone) and logs it; it returns
// the upstream's result for the metrics and the run's log line.
func (r *runner) failed(ctx context.Context, err error) string {
	result, told := r.life.Ended(ctx, err)
	if told != nil {
		r.write(r.a2g.Fail(inBand(told)))
	}
	return result
}

// policyAnswers returns the permissions the policy gives when every pending
// call is an untrusted server tool; nil otherwise (client tools pending:
// the run ends and the policy answers with the client's results).
func (r *runner) policyAnswers() []aap.Message {
	var out []aap.Message
	for _, c := range r.a2g.PendingCalls() {
		if r.clients[c.Name] {
			return nil
		}
		out = append(out, translate.PolicyPermission(c.ToolCallID, r.env.cfg.Policy))
	}
	return out
}

func (r *runner) feed(ev aap.Event) {
	out, err := r.a2g.Feed(ev)
	if err != nil && !errors.Is(err, translate.ErrTerminated) {
		r.log.Warn().Err(err).Msg("AAP event could not be translated")
	}
	r.write(out)
}

// write sends AG-UI events to the client, counting them. With
// Config.SnapshotAfterRuns a MESSAGES_SNAPSHOT of the thread goes right
// before RUN_FINISHED.
func (r *runner) write(evs []events.Event) {
	if r.env.cfg.SnapshotAfterRuns {
		for i, ev := range evs {
			if _, ok := ev.(*events.RunFinishedEvent); ok {
				evs = append(append(append([]events.Event{}, evs[:i]...), events.NewMessagesSnapshotEvent(r.threadMessages())), evs[i:]...)
				break
			}
		}
	}
	r.w.Write(r.life, evs, nil) // RUN_FINISHED held back until the thread is saved (finish)
}

// turnDone counts an upstream turn that streamed: its result is the
// failure's, or worked out from how it stopped (an agent error, no stop at
// all, or ok).
func (r *runner) turnDone(result string) {
	switch {
	case result != "":
	case r.life.Line.Stop == "":
		result, _ = fault.StreamFailure(nil)
	case r.life.Line.Stop == string(aap.StopError):
		result = fault.AgentError
	default:
		result = metrics.OutcomeOK
	}
	r.env.met.Upstream("turn", r.info.Name, result)
	r.life.Line.Upstream = result
}

// aguiWriter writes a run's AG-UI events, holding its RUN_FINISHED back.
var aguiWriter = turns.Writer[events.Event]{
	Frame: agui.AppendFrame,
	Name:  func(ev events.Event) string { return string(ev.Type()) },
	Final: func(ev events.Event) bool { _, ok := ev.(*events.RunFinishedEvent); return ok },
}

// writeAGUI writes AG-UI events outside a run (a refusal, a hydration).
func writeAGUI(out *ssestream.Stream, evs []events.Event, log *zerolog.Logger) {
	out.Commit(aguiWriter.Append(out.Buffer(), evs, log, nil))
}
