package aap2agui

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"iter"
	"strings"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/aapagui/aapagui/bridge/internal/web"
	"github.com/aapagui/aapagui/internal/ident"
	"github.com/aapagui/aapagui/internal/jsonenc"
	"github.com/aapagui/aapagui/internal/sse"
	"github.com/aapagui/aapagui/translate"
)

// postFollowed sends in, a run that carries a new user message with
// cancelled resume entries (CancelRunAuto), and returns a body that reads
// its events. When the run finishes without the agent having read the
// message (firstRun.unread), its RUN_FINISHED is held back, the run is read
// to its end, and a second run carries the message alone (the whole
// history, no resume entries, a run id of its own); its events follow,
// its RUN_STARTED left out, so that the turn reads one run: what the agent
// said of the cancellation, then its answer to the message. Should the
// second run fail to start, the first run's RUN_FINISHED ends the turn as
// it came.
func (a *agent) postFollowed(ctx context.Context, in *types.RunAgentInput, calls map[string]string) (*upstreamBody, error) {
	body, err := a.post(ctx, in, calls)
	if err != nil {
		return nil, err
	}
	f := &followUp{a: a, in: in, msgID: in.Messages[len(in.Messages)-1].ID,
		post: func(run *types.RunAgentInput) (*upstreamBody, error) { return a.post(ctx, run, calls) }}
	f.open(body)
	// The runs' own bodies keep their idle timers (fill touches them): the
	// wrapper has none.
	return &upstreamBody{IdleBody: web.IdleTimeout(f, 0, nil), cancel: func() {}}, nil
}

// followUp reads a run's events and, when the agent did not read the new
// user message, those of the run that carries it (postFollowed).
type followUp struct {
	a     *agent
	in    *types.RunAgentInput
	post  func(*types.RunAgentInput) (*upstreamBody, error) // sends the follow-up run, in the turn's context
	msgID string                                            // the AG-UI id of the new user message

	body      *upstreamBody // the run being read
	next      func() (sse.Event, error, bool)
	stop      func()
	second    bool              // body is the run of the message
	skipStart bool              // that run's RUN_STARTED is still to be left out
	first     firstRun          // what the first run did
	buf, out  []byte            // out: what is left of the event in buf for Read
	usage     []json.RawMessage // the usage the first run's RUN_FINISHED reported, counted with the second's
}

// open makes body the run being read.
func (f *followUp) open(body *upstreamBody) {
	f.body = body
	f.next, f.stop = iter.Pull2(sse.Read(body, sse.ReadOptions{MaxEventSize: f.a.s.cfg.MaxEventSize}))
}

// Read gives the events of the turn's run (or runs), one SSE frame at a
// time; the errors of the agent's stream come as they are.
func (f *followUp) Read(p []byte) (int, error) {
	for len(f.out) == 0 {
		if err := f.fill(); err != nil {
			return 0, err
		}
	}
	n := copy(p, f.out)
	f.out = f.out[n:]
	return n, nil
}

// Close ends the run being read.
func (f *followUp) Close() error {
	f.stop()
	return f.body.Close()
}

// fill reads the next event of the run and queues it unless it is left
// out.
func (f *followUp) fill() error {
	ev, err, ok := f.next()
	if !ok {
		return io.EOF
	}
	if err != nil {
		return err
	}
	f.body.Touch()
	if f.second {
		if f.skipStart {
			f.skipStart = false
			var e runEvent
			if json.Unmarshal(ev.Data, &e) == nil && e.Type == string(events.EventTypeRunStarted) {
				return nil
			}
		}
		if len(f.usage) > 0 && bytes.Contains(ev.Data, []byte(events.EventTypeRunFinished)) {
			ev.Data = withUsage(ev.Data, f.usage)
		}
		f.queue(ev.Data)
		return nil
	}
	var e runEvent
	if json.Unmarshal(ev.Data, &e) != nil {
		f.first.interrupted = true // an event not understood: no second run
	}
	f.first.note(&e, f.msgID)
	if e.Type == string(events.EventTypeRunFinished) && f.first.unread(&e, f.msgID) {
		finished := bytes.Clone(ev.Data)
		if f.follow() {
			f.usage = usageOf(finished)
			return nil
		}
		f.queue(finished)
		return nil
	}
	f.queue(ev.Data)
	return nil
}

// queue makes data the frame Read gives next (fill runs once out is
// empty).
func (f *followUp) queue(data []byte) {
	f.buf = sse.AppendEvent(f.buf[:0], "", data)
	f.out = f.buf
}

// follow reads the first run to its end and sends the run of the message;
// false: it could not be sent.
func (f *followUp) follow() bool {
	// A framework may hold the thread until its stream ends (the
	// LangGraph API server): the first run ends before the next begins.
	for _, err, ok := f.next(); ok && err == nil; _, err, ok = f.next() {
	}
	f.stop()
	f.body.Close()
	f.next = func() (sse.Event, error, bool) { return sse.Event{}, nil, false }
	run := messageRun(f.in)
	run.RunID = ident.Random("run-")
	log := f.a.s.cfg.Logger.With().Str("thread_id", f.in.ThreadID).Str("run_id", run.RunID).Logger()
	body, err := f.post(run)
	if err != nil {
		log.Warn().Err(err).Msg("the run carrying the user message the agent did not read could not be sent: the turn ends with the run that cancelled the interrupts")
		return false
	}
	log.Info().Msg("the agent ended the run that cancelled the interrupts without reading the user message: a run carrying the message follows in the same turn")
	f.open(body)
	f.second, f.skipStart = true, true
	return true
}

// runEvent is what followUp reads of an AG-UI event.
type runEvent struct {
	Type    string `json:"type"`
	Name    string `json:"name"`
	Outcome *struct {
		Type string `json:"type"`
	} `json:"outcome"`
	Messages []struct {
		ID string `json:"id"`
	} `json:"messages"`
}

// firstRun is what the run that cancelled the interrupts did of the new
// user message.
type firstRun struct {
	answered    bool // text, a tool call or result, or reasoning
	interrupted bool // a new interrupt (CUSTOM on_interrupt), or an event not understood
	snapshot    bool // a MESSAGES_SNAPSHOT came
	holds       bool // the last one holds the message (by id)
}

// note records what e says of the run.
func (r *firstRun) note(e *runEvent, msgID string) {
	switch t := events.EventType(e.Type); {
	case t == events.EventTypeMessagesSnapshot:
		r.snapshot, r.holds = true, false
		for _, m := range e.Messages {
			if m.ID != "" && m.ID == msgID {
				r.holds = true
			}
		}
	case t == events.EventTypeCustom && e.Name == translate.OnInterruptEvent:
		r.interrupted = true
	case strings.HasPrefix(e.Type, "TEXT_MESSAGE_"), strings.HasPrefix(e.Type, "TOOL_CALL_"),
		strings.HasPrefix(e.Type, "REASONING_"), strings.HasPrefix(e.Type, "THINKING_"):
		r.answered = true
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
func (r *firstRun) unread(e *runEvent, msgID string) bool {
	if r.interrupted || (e.Outcome != nil && e.Outcome.Type != "success") {
		return false
	}
	if r.snapshot && msgID != "" {
		return !r.holds
	}
	return !r.answered
}

// usageOf returns the usage entries of a RUN_FINISHED event's JSON, as
// they came.
func usageOf(data []byte) []json.RawMessage {
	var w struct {
		Usage []json.RawMessage `json:"usage"`
	}
	if json.Unmarshal(data, &w) != nil {
		return nil
	}
	return w.Usage
}

// withUsage adds usage entries to those of a RUN_FINISHED event's JSON
// (the data as it was when it is something else, or cannot be read).
func withUsage(data []byte, usage []json.RawMessage) []byte {
	var ev map[string]json.RawMessage
	if json.Unmarshal(data, &ev) != nil || string(ev["type"]) != `"RUN_FINISHED"` {
		return data
	}
	all := append(usageOf(data), usage...)
	var err error
	if ev["usage"], err = jsonenc.Marshal(all); err != nil {
		return data
	}
	out, err := jsonenc.Marshal(ev)
	if err != nil {
		return data
	}
	return out
}
