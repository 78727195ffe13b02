package agui2aap

import (
	"context"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/bridge/internal/fault"
	"github.com/aapagui/aapagui/bridge/internal/metrics"
	"github.com/aapagui/aapagui/bridge/internal/pump"
	"github.com/aapagui/aapagui/bridge/internal/turns"
	"github.com/aapagui/aapagui/internal/aside"
	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/translate"
)

// Call opens the run's first turn (on a new session when the AAP server
// lost the thread's), with the translator and the client's stream ready
// for its events.
func (r *runner) Call(ctx context.Context, _ *turns.Turn) error {
	r.openBefore = int32(len(r.th.Interrupts))
	if r.storedAgent != "" && r.storedAgent != r.agentName {
		// The thread is now this agent's: another's runs are no longer
		// its own to join (and the legacy key's would become this one's).
		r.env.cfg.dropRunLogs(ctx, r.log, r.th.Owner, r.storedAgent, r.in.ThreadID)
	}
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
	r.dropConversation()
	r.turn.Out.Start()
	r.pump(ctx, r.evs, r.req)
	if r.th.SessionID == "" {
		r.log.Warn().Str("thread", r.in.ThreadID).Msg("the AAP server's PUT /session answer named no session (no session_start): the next run starts a new session")
	}
	r.prepareSave()
	return nil
}

// prepareStream sets up the translator and the client's stream.
func (r *runner) prepareStream(ctx context.Context) {
	if len(r.in.Tools) > 0 {
		r.clients = make(map[string]bool, len(r.in.Tools))
	}
	for _, t := range r.in.Tools {
		r.clients[t.Name] = true
	}
	interrupting := r.env.cfg.Policy == PolicyInterrupt
	r.a2g = translate.NewAAPToAGUI(translate.AAPToAGUIOptions{
		ThreadID: r.in.ThreadID, RunID: r.in.RunID,
		// Under a grant or deny policy nothing is ever interrupted.
		IsClientTool: func(name string) bool { return r.clients[name] || !interrupting },
		IsServerTool: r.toolOwners().Server,
		Spill:        r.spill(ctx),
	})
}

// dropConversation lets go of what grows with the conversation once the turn
// is under way, so that an open stream's memory does not: the client's
// messages (the thread's title is taken from them first), the plan's
// seed, and what only the turn's start read of the input (its tools, their
// schemas with them, its context, state and forwarded props). With
// SnapshotAfterRuns the messages stay, for the snapshot at the end.
func (r *runner) dropConversation() {
	if r.th.Title == "" {
		r.th.Title = threadTitle(r.in.Messages)
	}
	r.p.Seed = nil
	r.in.Tools, r.in.Context, r.in.State, r.in.ForwardedProps, r.clientTools = nil, nil, nil, nil, nil
	if !r.env.cfg.SnapshotAfterRuns {
		r.in.Messages = nil
	}
}

// pump translates the turn's events to the client, running follow-up turns
// when the permission policy answers for the client. A run stopped on
// request (turns.Stopped) ends with RUN_FINISHED.
func (r *runner) pump(ctx context.Context, evs *turnEvents, req *aap.PostSessionTurnRequest) {
	r.answered = answersOf(req.Messages)
	for {
		next := r.stream(ctx, evs)
		if next == nil {
			break
		}
		if r.followUp++; int(r.followUp) > r.env.cfg.MaxFollowUps {
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
// yet by then (it saves the turn at its end) makes the bridge withhold the
// answer until the turn ends and read the history again.
func (r *runner) stream(ctx context.Context, evs *turnEvents) []aap.Message {
	t := turnRead{first: r.followUp == 0, answer: withheldAnswer{missing: r.missingResults()}}
	r.turn.Line.Stop = ""
	defer func() { r.turnDone(t.result) }()
	defer evs.close()
	if r.read(ctx, &t, evs) {
		return t.next
	}
	if t.answer.withholding {
		t.answer.send(ctx, r)
	}
	return nil
}

// read takes the turn's events (event) until the turn's reading is over
// (true) or its events end: a list, or the turn's stream, which the pump
// reads (turnTaker).
func (r *runner) read(ctx context.Context, t *turnRead, evs *turnEvents) (over bool) {
	if evs.body == nil {
		for _, ev := range evs.list {
			if r.eventAside(ctx, t, ev, nil) {
				return true
			}
		}
		return false
	}
	src := pump.Source{Body: evs.body, Out: r.turn.Out, MaxEventSize: r.env.cfg.MaxEventSize, SmallBuffer: true}
	if err := pump.Run(ctx, src, &turnTaker{r: r, t: t}); err != nil {
		return r.eventAside(ctx, t, nil, err) // the stream's failure
	}
	return t.over
}

// turnRead is where the reading of one turn's events (runner.stream)
// stands.
type turnRead struct {
	first  bool           // the run's first turn
	answer withheldAnswer // the answer withheld while results are missing
	result string         // set by a failure; else worked out from the stop reason
	next   []aap.Message  // the permissions of a follow-up turn the policy answers
	over   bool           // the turn's reading is over (event)
}

// turnTaker is the run's side of the pump for one turn's stream
// (pump.FastTaker): a text delta is taken on the stream's goroutine,
// written as one frame when the translator adds it to its message
// (textDelta), and a thinking delta there too; every other event is
// decoded and taken aside.
type turnTaker struct {
	r      *runner
	t      *turnRead
	deltas aap.Deltas
}

// Take decodes one event of the turn's stream and takes it (event).
func (k *turnTaker) Take(ctx context.Context, name string, data []byte) (bool, error) {
	if name == "" {
		name = "message" // SSE's default event name
	}
	ev, err := aap.DecodeEvent(name, data)
	k.t.over = k.r.event(ctx, k.t, ev, err)
	return k.t.over, nil
}

// TakeFast takes a delta of the turn's stream (aap.Deltas), without
// decoding it aside: no goroutine is started for it, and no allocation
// made.
func (k *turnTaker) TakeFast(ctx context.Context, name string, data []byte) (ok, done bool, err error) {
	ev := k.deltas.Decode(name, data)
	switch d := ev.(type) {
	case *aap.TextDelta:
		if !k.t.answer.withholding && len(k.t.answer.missing) == 0 && k.r.textDelta(d.Delta) {
			return true, false, nil
		}
	case *aap.ThinkingDelta:
	default:
		return false, false, nil
	}
	k.t.over = k.r.event(ctx, k.t, ev, nil)
	return true, k.t.over, nil
}

// eventAside is event on a goroutine of its own (internal/aside), for an
// event of a turn answered in one body, or the failure of a turn's
// stream. (A function of its own: a closure in read would move its
// variables to the heap.)
func (r *runner) eventAside(ctx context.Context, t *turnRead, ev aap.Event, err error) (over bool) {
	_ = aside.Do(func() error {
		over = r.event(ctx, t, ev, err)
		r.turn.Out.FlushFirst()
		return nil
	})
	return over
}

// event takes one event of the turn (or the error that ended its
// stream), translating and writing it (feed); it reports whether the
// turn's reading is over, with t.next set when a follow-up turn is to run.
func (r *runner) event(ctx context.Context, t *turnRead, ev aap.Event, err error) (over bool) {
	if err == nil {
		_, unknown := ev.(*aap.UnknownEvent)
		r.turn.CountIn(string(ev.EventName()), !unknown)
		err = r.grow(ev)
	}
	if err != nil {
		if t.answer.withholding {
			t.answer.send(ctx, r)
		}
		t.result = r.failed(ctx, err)
		return true
	}
	switch e := ev.(type) {
	case *aap.TurnStart:
		if !t.first {
			return false // one run, several turns
		}
	case *aap.ToolResult:
		if t.answer.lateResult(ctx, r, e) {
			return false
		}
	case *aap.SessionStart:
		r.started(e.SessionID)
		return false
	case *aap.UnknownEvent:
		r.log.Debug().Str("event", string(e.Name)).Msg("unknown AAP event skipped")
		return false
	case *aap.AGUIEvent:
		if !r.carry { // an AG-UI event from a server that did not grant the extension
			r.log.Debug().Msg("agui event of a server that does not grant the AG-UI extension skipped")
			return false
		}
	case *aap.TurnStop:
		r.turn.Line.Stop = string(e.StopReason)
	}
	if t.answer.withhold(ctx, r, ev) {
		return false
	}
	if t.next = r.policyTurn(ev); t.next != nil {
		return true
	}
	r.feed(ev)
	return r.a2g.Done()
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
	r.turn.CountIn(string(aap.EventTextDelta), true)
	r.w.WriteFrame(r.turn, string(events.EventTypeTextMessageContent), func(b []byte) ([]byte, error) { return agui.AppendTextContentFrame(b, id, delta), nil }, nil)
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
	result, told := r.turn.Cut(ctx, err)
	if told != nil {
		r.write(r.a2g.Fail(inBand(told)))
	}
	return result
}

// policyAnswers returns the permissions the policy gives when the pending
// calls that wait on the client are all untrusted server tools; nil
// otherwise (client tools pending: the run ends and the policy answers
// with the client's results; or nothing waits: the agent's own calls
// alone, translate.ToolOwners).
func (r *runner) policyAnswers() []aap.Message {
	client, server := r.toolOwners().Waiting(r.a2g.PendingCalls())
	if len(client) > 0 {
		return nil
	}
	var out []aap.Message
	for _, c := range server {
		out = append(out, translate.PolicyPermission(c.ToolCallID, r.env.cfg.Policy))
	}
	return out
}

// toolOwners is whose each tool of the run is (translate.ToolOwners): the
// client's tools, the server tools the agent declares in GET /meta. A
// call of any other tool is the agent's own: no interrupt, no policy's
// answer, nothing the thread waits on.
func (r *runner) toolOwners() translate.ToolOwners {
	return translate.ToolOwners{
		Client: func(name string) bool { return r.clients[name] },
		Server: translate.ToolNamed(r.info.Tools),
	}
}

// turnDone counts an upstream turn that streamed: its result is the
// failure's, or worked out from how it stopped (an agent error, no stop at
// all, or ok).
func (r *runner) turnDone(result string) {
	switch {
	case result != "":
	case r.turn.Line.Stop == "":
		result, _ = fault.StreamFailure(nil)
	case r.turn.Line.Stop == string(aap.StopError):
		result = fault.AgentError
	default:
		result = metrics.OutcomeOK
	}
	r.env.met.Upstream("turn", r.info.Name, result)
	r.turn.Line.Upstream = result
}

// runLog is the run log the run's stream is kept in, with what it was
// asked.
func (r *runner) runLog() *turns.RunLog {
	from := min(len(r.th.Delivered), r.th.RecordLen)
	if r.p.Fresh {
		from = 0
	}
	data, ok := runInputJSON(from, r.recordable)
	if !ok {
		r.log.Warn().Str("thread", r.in.ThreadID).Msg("the run's input could not be kept with its log: one of its messages could not be written")
	}
	return &turns.RunLog{Store: r.env.cfg.Store,
		Log: store.RunLog{Owner: r.th.Owner, Key: runKey(r.agentName, r.in.ThreadID), RunID: r.in.RunID, Form: "agui", Input: data}}
}
