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

// runner carries one run through its AAP turns. It holds what the run
// needs of its request (the response writer, the request's start, the
// request's logger); the run's context is passed to its steps.
type runner struct {
	s       *Server
	rw      http.ResponseWriter
	start   time.Time // the request's (metrics.RequestStart)
	cl      *aap.Client
	version int // the AAP server's protocol version
	// openSession starts the thread's new AAP session as that version
	// does (openerFor), chosen once.
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

	a2g      *translate.AAPToAGUI
	clients  map[string]bool // client tool names
	results  map[string]bool // toolCallIds with a tool_result in this run
	answered answers         // the permissions the current turn answers
	followUp int
	// msgBytes counts what the agent streamed of the message it is
	// building (Serving.MaxMessageSize).
	msgBytes int

	openBefore int // interrupts open when the run started
	// recordable are the client's messages the thread's record will get
	// at the save (keepForRecord).
	recordable []types.Message
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

// execute runs the plan: it opens the turn (on a new session when the AAP
// server lost the thread's), streams it to the client and saves the
// thread. An error is returned only before the stream began.
func (r *runner) execute(ctx context.Context) error {
	r.life.Count(r.s.base.Metrics, r.start, r.info.Name, string(r.mode()))
	defer r.life.End()
	tracing.Agent(ctx, r.info.Name)
	r.openBefore = len(r.th.Interrupts)
	req, err := r.begin(ctx)
	if err != nil {
		return err
	}
	r.prepareStream(ctx)
	defer r.life.Out.Done()
	evs, err := r.openFirst(ctx, req)
	if err != nil {
		return err
	}
	r.travelLight()
	r.life.Out.Start()
	r.pump(ctx, evs, req)
	if r.th.SessionID == "" {
		r.log.Warn().Str("thread", r.in.ThreadID).Msg("the AAP server's PUT /session answer named no session (no session_start): the next run starts a new session")
	}
	r.finish(ctx)
	return nil
}

// prepareStream sets up the translator and the client's stream.
func (r *runner) prepareStream(ctx context.Context) {
	r.clients = map[string]bool{}
	for _, t := range r.in.Tools {
		r.clients[t.Name] = true
	}
	interrupting := r.s.cfg.Policy == PolicyInterrupt
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
	if !r.s.cfg.SnapshotAfterRuns {
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
		if r.followUp++; r.followUp > r.s.cfg.MaxFollowUps {
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
		r.countIn(ev)
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
		r.msgBytes = 0
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
	if !r.fits(n) {
		return &fault.MessageTooLargeError{Limit: r.s.cfg.MaxMessageSize}
	}
	r.msgBytes += n
	return nil
}

// fits reports whether n more bytes fit the message being built.
func (r *runner) fits(n int) bool {
	max := r.s.cfg.MaxMessageSize
	return max <= 0 || r.msgBytes+n <= max
}

// textDelta takes a text_delta that the translator adds to its text
// message as one TEXT_MESSAGE_CONTENT (AAPToAGUI.AddTextDelta): it is
// counted, sized and written as stream would, without an event made of
// it. false: nothing was done (the delta is not the usual case, or does
// not fit the message, which grow then says), and stream takes the event.
func (r *runner) textDelta(delta string) bool {
	if !r.fits(len(delta)) {
		return false
	}
	id, ok := r.a2g.AddTextDelta(delta)
	if !ok {
		return false
	}
	r.msgBytes += len(delta)
	r.life.Met.In(string(aap.EventTextDelta))
	r.w.WriteFrame(r.life, string(events.EventTypeTextMessageContent), func(b []byte) ([]byte, error) { return agui.AppendTextContentFrame(b, id, delta), nil }, nil)
	return true
}

// countIn counts an event from the upstream, by name (bounded: an unknown
// event's name is whatever the server sent).
func (r *runner) countIn(ev aap.Event) {
	if _, unknown := ev.(*aap.UnknownEvent); unknown {
		r.life.Met.In("unknown")
	} else {
		r.life.Met.In(string(ev.EventName()))
	}
}

// policyTurn returns the permissions of a follow-up turn when ev ends the
// turn for tool calls the grant or deny policy answers; else nil.
func (r *runner) policyTurn(ev aap.Event) []aap.Message {
	if e, ok := ev.(*aap.TurnStop); ok && e.StopReason == aap.StopToolUse && r.s.cfg.Policy != PolicyInterrupt {
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
		out = append(out, translate.PolicyPermission(c.ToolCallID, r.s.cfg.Policy))
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
	if r.s.cfg.SnapshotAfterRuns {
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
	r.s.base.Metrics.Upstream("turn", r.info.Name, result)
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
