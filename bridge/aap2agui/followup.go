package aap2agui

import (
	"bytes"
	"context"
	"strings"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/bridge/internal/upstream"
	"github.com/aapagui/aapagui/internal/ident"
	"github.com/aapagui/aapagui/translate"
)

// followUp is what a turn run keeps of a run that carries a new user
// message with cancelled resume entries (CancelRunAuto): when the run
// finishes without the agent having read the message (firstRun.unread),
// or the agent refuses it with RUN_ERROR before any output
// (firstRun.silent), its RUN_FINISHED or RUN_ERROR is withheld, the run
// is read to its end, and a second run carries the message alone (the
// whole history, the calls the cancelled entries answered closed in it,
// no resume entries, a run id of its own); its events follow, its
// RUN_STARTED left out, so that the turn reads one run: what the agent
// said of the cancellation, then its answer to the message. Should the
// second run fail to start, the first run's RUN_FINISHED or RUN_ERROR
// ends the turn as it came. turnRun.read does the reading; followUp
// decides.
type followUp struct {
	run       *types.RunAgentInput // the turn's first run
	calls     *runExtras           // what its messages hold that the SDK's types cannot carry (agent.post)
	movedOn   []string             // the calls left to their cancelled interrupts (admission.movedOn)
	msgID     string               // the AG-UI id of the new user message
	first     firstRun             // what the first run did
	finished  []byte               // the first run's RUN_FINISHED or RUN_ERROR, withheld while the run is read to its end
	finishedE events.Event         // that event, decoded
	refused   bool                 // it is a RUN_ERROR before any output
	usage     []agui.TokenUsage    // what that RUN_FINISHED reported, counted with the second run's
	second    bool                 // the run being read is the run of the message
	skipStart bool                 // that run's RUN_STARTED is still to be left out
}

// newFollowUp returns the followUp of a turn whose run is in, or nil when
// the turn reads one run as it comes: the agent's CancelRun is not auto,
// or the run does not carry a new message with cancelled resume entries.
func newFollowUp(mode CancelRun, in *types.RunAgentInput, calls *runExtras, movedOn []string) *followUp {
	if mode != CancelRunAuto || !cancelsWithMessage(in) {
		return nil
	}
	return &followUp{run: in, calls: calls, movedOn: movedOn, msgID: in.Messages[len(in.Messages)-1].ID}
}

// pass reports whether an event of the run being read (data: its JSON,
// as the agent sent it) goes on to the translator: not the RUN_STARTED of
// the message's run, nor the first run's RUN_FINISHED when the agent did
// not read the message (withheld, see withholding).
func (f *followUp) pass(ev events.Event, data []byte) bool {
	if f.second {
		if f.skipStart {
			f.skipStart = false
			return ev.Type() != events.EventTypeRunStarted
		}
		return true
	}
	f.first.note(ev, f.msgID)
	switch e := ev.(type) {
	case *events.RunFinishedEvent:
		if f.first.unread(e, f.msgID) {
			f.finished, f.finishedE = bytes.Clone(data), e
			return false
		}
	case *events.RunErrorEvent:
		if f.first.silent() {
			// The agent refused the run before saying anything: how the
			// bridge closed the open calls, most likely (Microsoft Agent
			// Framework refuses every cancelled resume entry,
			// APPROVAL_RESUME_CANCELLED). The message goes in a run of its
			// own, the calls closed in its history.
			f.finished, f.finishedE, f.refused = bytes.Clone(data), e, true
			return false
		}
	}
	return true
}

// withholding reports whether the first run's RUN_FINISHED is withheld: its
// stream is to be read to its end and the message's run sent
// (turnRun.sendFollowUp).
func (f *followUp) withholding() bool { return f != nil && f.finished != nil }

// firstRun is what the run that cancelled the interrupts did of the new
// user message.
type firstRun struct {
	answered    bool            // text, a tool call or result, or reasoning
	interrupted bool            // a new interrupt (CUSTOM on_interrupt)
	snapshot    bool            // a MESSAGES_SNAPSHOT came
	hasMessage  bool            // the last one holds the message (by id)
	results     map[string]bool // the calls it wrote a result for (TOOL_CALL_RESULT)
}

// silent reports that the run has said nothing yet: no text, call,
// result, reasoning, interrupt or snapshot.
func (r *firstRun) silent() bool { return !r.answered && !r.interrupted && !r.snapshot }

// unresulted are those of calls the run wrote no result for.
func (r *firstRun) unresulted(calls []string) []string {
	var out []string
	for _, id := range calls {
		if !r.results[id] {
			out = append(out, id)
		}
	}
	return out
}

// note records what ev says of the run (msgID: the new message's id).
func (r *firstRun) note(ev events.Event, msgID string) {
	switch e := ev.(type) {
	case *events.MessagesSnapshotEvent:
		r.snapshot, r.hasMessage = true, false
		for _, m := range e.Messages {
			if m.ID != "" && m.ID == msgID {
				r.hasMessage = true
			}
		}
	case *events.CustomEvent:
		if e.Name == translate.OnInterruptEvent {
			r.interrupted = true
		}
	case *events.ToolCallResultEvent:
		r.answered = true
		if r.results == nil {
			r.results = map[string]bool{}
		}
		r.results[e.ToolCallID] = true
	default:
		if t := string(ev.Type()); strings.HasPrefix(t, "TEXT_MESSAGE_") || strings.HasPrefix(t, "TOOL_CALL_") ||
			strings.HasPrefix(t, "REASONING_") || strings.HasPrefix(t, "THINKING_") {
			r.answered = true
		}
	}
}

// unread reports, at the run's RUN_FINISHED e, that the agent did not read
// the message: the run finished without an outcome or with success, raised
// no interrupt, and either its last MESSAGES_SNAPSHOT does not hold the
// message (@ag-ui/langgraph: it answers the cancellation, and its snapshot
// shows the message was never read), or, without a snapshot, it streamed
// nothing at all (@ag-ui/mastra). A run that answered in text, a tool call
// or reasoning without a snapshot read the message (the demo agent,
// agui2aap, CopilotKit's BuiltInAgent).
func (r *firstRun) unread(e *events.RunFinishedEvent, msgID string) bool {
	if r.interrupted || (e.Outcome != nil && e.Outcome.Type != events.RunFinishedOutcomeTypeSuccess) {
		return false
	}
	if r.snapshot && msgID != "" {
		return !r.hasMessage
	}
	return !r.answered
}

// sendFollowUp sends the run of the new message, once the first run was
// read to its end (a framework may hold the thread until its stream ends,
// as the LangGraph API server does). It returns that run's body, or nil
// and the first run's RUN_FINISHED or RUN_ERROR (the event and its JSON)
// when it could not be sent, which then ends the turn.
func (r *turnRun) sendFollowUp(ctx context.Context) (*upstream.IdleBody, events.Event, []byte) {
	f := r.followUp
	run := messageRun(f.run, f.first.unresulted(f.movedOn))
	run.RunID = ident.Random("run-")
	log := r.log.With().Str("thread_id", run.ThreadID).Str("run_id", run.RunID).Logger()
	body, err := r.agent.post(ctx, run, f.calls)
	if err != nil {
		log.Warn().Err(err).Msg("the run carrying the user message could not be sent: the turn ends with the run that cancelled the interrupts")
		ev, finished := f.finishedE, f.finished
		f.finished, f.finishedE, f.second = nil, nil, true
		return nil, ev, finished
	}
	if e, ok := f.finishedE.(*events.RunErrorEvent); ok && f.refused {
		code := ""
		if e.Code != nil {
			code = *e.Code
		}
		log.Warn().Str("session", r.sess.ID).Str("agent_code", code).Str("agent_message", e.Message).
			Msg("the agent refused, before any output, the run that cancelled its interrupts beside the user message: the message follows in a run of its own, the calls it held closed in its history")
	} else {
		log.Info().Msg("the agent ended the run that cancelled the interrupts without reading the user message: a run carrying the message follows in the same turn")
	}
	f.usage = agui.Usage(f.finished)
	f.finished, f.finishedE, f.second, f.skipStart = nil, nil, true, true
	return body, nil, nil
}
