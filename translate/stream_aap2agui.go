package translate

import (
	"encoding/json"
	"time"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/internal/ident"
)

// AAPToAGUIOptions configures an AAPToAGUI translator.
type AAPToAGUIOptions struct {
	// ThreadID and RunID are stamped on RUN_STARTED and RUN_FINISHED.
	ThreadID, RunID string
	// NewID makes the ids of AG-UI messages; nil means random ids.
	NewID func() string
	// Now stamps each event's timestamp; nil means no timestamps.
	Now func() time.Time
	// IsClientTool reports whether a tool name is one of the application's
	// own (client-side) tools. When a turn stops with tool_use, calls to
	// client tools end the run with a plain RUN_FINISHED (the client runs
	// them and starts a new run), and unanswered calls to any other tool are
	// untrusted server tools waiting for permission: the run finishes with
	// an interrupt outcome, one interrupt per call. nil means every tool is a
	// client tool.
	IsClientTool func(name string) bool
	// IsServerTool reports whether a tool name is a server tool the agent
	// declares (GET /meta). An unanswered call of a tool that is neither a
	// client tool nor a server tool is the agent's own (ToolOwners): it
	// raises no interrupt, and a run that waits for nothing else ends with
	// a plain RUN_FINISHED. nil means every tool that is not a client tool.
	IsServerTool func(name string) bool
	// Spill holds the assistant messages' texts apart as they stream
	// (TextSpill): the content of Messages then holds the marker of their
	// parts. A caller that sends Messages whole (a MESSAGES_SNAPSHOT)
	// gives none. Reasoning is held whole: agui2aap stores none of it, so
	// its parts would have nothing to read them.
	Spill TextSpill
}

// Error codes of the RUN_ERROR events this translator emits.
const (
	// CodeAgentError: the AAP turn stopped with stopReason "error".
	CodeAgentError = "AGENT_ERROR"
	// CodeIncomplete: the AAP stream ended without turn_stop.
	CodeIncomplete = "UPSTREAM_INCOMPLETE"
)

// AAPToAGUI translates the AAP events of one turn into the AG-UI events of
// one run. What it emits satisfies the AG-UI client's verifier: RUN_STARTED
// first; every text message, reasoning message and tool call it opens is
// closed before the single terminal RUN_FINISHED or RUN_ERROR; no empty
// deltas; a tool call with no arguments gets "{}".
type AAPToAGUI struct {
	opts  AAPToAGUIOptions
	newID func() string
	out   []events.Event
	// Slabs of the per-token events (see slabEvent).
	textSlab      []eventBox[events.TextMessageContentEvent]
	reasoningSlab []eventBox[events.ReasoningMessageContentEvent]

	started bool
	done    bool

	textID       string // open text message
	reasoningID  string // open reasoning message
	reasoningIdx int    // its index in msgs
	assistantIdx int    // index in msgs of the current assistant message, -1 if none

	calls    []*aap.ToolCall // tool calls of the turn, in order
	resulted map[string]bool

	msgs []aguiItem // the AG-UI messages of the run, for Messages

	result json.RawMessage // the agent's run result the AG-UI extension carried (carried.go)

	meta      pageMetadata            // what MetadataNotes gave, waiting for its event (metadata.go)
	preview   *callPreview            // the call whose preview is open (previews.go)
	previewed map[string]*callPreview // the previewed calls still without their tool_call
}

// aguiItem is one AG-UI message being built.
type aguiItem struct {
	msg  types.Message
	text streamedText
}

// NewAAPToAGUI returns a translator for one turn.
func NewAAPToAGUI(opts AAPToAGUIOptions) *AAPToAGUI {
	return &AAPToAGUI{opts: opts, newID: orRandom(opts.NewID, "msg-"), assistantIdx: -1}
}

// Feed translates one AAP event. The returned slice is reused by the next
// call to Feed or Finish; the events in it are not. Unknown AAP events
// produce nothing.
func (t *AAPToAGUI) Feed(ev aap.Event) ([]events.Event, error) {
	t.out = t.out[:0]
	if t.done {
		return t.out, ErrTerminated
	}
	t.begin()
	switch ev.(type) {
	case *aap.ToolCall, *aap.AGUIEvent:
	default:
		t.closePreview() // (previews.go)
	}
	switch e := ev.(type) {
	case *aap.TurnStart:
	case *aap.TextDelta:
		t.text(e.Delta)
	case *aap.Text:
		t.text(e.Text)
		t.closeText()
	case *aap.ThinkingDelta:
		t.thinking(e.Delta)
	case *aap.Thinking:
		t.thinking(e.Thinking)
		t.closeReasoning()
	case *aap.ToolCall:
		return t.out, t.toolCall(e)
	case *aap.ToolResult:
		t.toolResult(e)
	case *aap.TurnStop:
		t.stop(e.StopReason)
	case *aap.AGUIEvent:
		return t.out, t.carried(e)
	}
	return t.out, nil
}

// Finish ends the run if the turn did not: whatever is open is closed and
// the run ends with RUN_ERROR (code CodeIncomplete), because an AAP stream
// that ends without turn_stop has failed.
func (t *AAPToAGUI) Finish() []events.Event {
	t.out = t.out[:0]
	if t.done {
		return t.out
	}
	t.begin()
	t.runError("The agent's stream ended before the turn was complete.", CodeIncomplete)
	return t.out
}

// Fail ends the run with RUN_ERROR (after closing whatever is open) for a
// failure the AAP stream itself cannot express, such as a follow-up turn
// the server refused. It returns nothing if the run has already ended.
func (t *AAPToAGUI) Fail(message, code string) []events.Event {
	t.out = t.out[:0]
	if t.done {
		return t.out
	}
	t.begin()
	t.runError(message, code)
	return t.out
}

// Done reports whether the terminal event has been emitted.
func (t *AAPToAGUI) Done() bool { return t.done }

// Messages returns the AG-UI messages the run has produced so far, with the
// ids its events used: reasoning, assistant (text and tool calls) and tool
// result messages. A message's text is made into a string once: a later
// call gives the same string while nothing was added to it.
func (t *AAPToAGUI) Messages() []types.Message {
	out := make([]types.Message, len(t.msgs))
	for i := range t.msgs {
		m := t.msgs[i].msg
		if t.msgs[i].text.Len() > 0 {
			m.Content = t.msgs[i].text.String()
		}
		out[i] = m
	}
	return out
}

// PendingCalls returns the tool calls of the turn that have no result yet.
func (t *AAPToAGUI) PendingCalls() []*aap.ToolCall {
	var out []*aap.ToolCall
	for _, c := range t.calls {
		if !t.resulted[c.ToolCallID] {
			out = append(out, c)
		}
	}
	return out
}

func (t *AAPToAGUI) begin() {
	if t.started {
		return
	}
	t.started = true
	ev, base := boxEvent[events.RunStartedEvent](events.EventTypeRunStarted, t.opts.Now)
	ev.BaseEvent, ev.ThreadIDValue, ev.RunIDValue = base, t.opts.ThreadID, t.opts.RunID
	t.out = append(t.out, ev)
}

// addMessage records a new AG-UI message and returns its index.
func (t *AAPToAGUI) addMessage(m types.Message) int {
	item := aguiItem{msg: m}
	if m.Role == types.RoleAssistant {
		item.text.spill = t.opts.Spill
	}
	t.msgs = append(t.msgs, item)
	return len(t.msgs) - 1
}

func (t *AAPToAGUI) text(delta string) {
	if delta == "" {
		return
	}
	t.closeReasoning()
	if t.textID == "" {
		t.textID = t.newID()
		ev, base := boxEvent[events.TextMessageStartEvent](events.EventTypeTextMessageStart, t.opts.Now)
		ev.BaseEvent, ev.MessageID, ev.Role = base, t.textID, &roleAssistant
		t.out = append(t.out, ev)
		t.assistantIdx = t.addMessage(types.Message{ID: t.textID, Role: types.RoleAssistant})
	}
	ev, base := slabEvent(&t.textSlab, events.EventTypeTextMessageContent, t.opts.Now)
	ev.BaseEvent, ev.MessageID, ev.Delta = base, t.textID, delta
	t.out = append(t.out, ev)
	t.msgs[t.assistantIdx].text.Add(delta)
}

// AddTextDelta is Feed of a text_delta with a non-empty delta in the case
// that makes it one TEXT_MESSAGE_CONTENT of the same text, the stream's
// usual event: a text message is open, no reasoning is, and events carry
// no timestamp (AAPToAGUIOptions.Now is nil). It then adds the delta to
// the message and returns the message's id: the caller writes the event
// itself (agui.AppendTextContentFrame), without one made of it. ok is
// false when nothing was done: the caller feeds the event.
func (t *AAPToAGUI) AddTextDelta(delta string) (messageID string, ok bool) {
	if t.done || t.textID == "" || t.reasoningID != "" || t.preview != nil || t.opts.Now != nil || delta == "" {
		return "", false
	}
	t.msgs[t.assistantIdx].text.Add(delta)
	return t.textID, true
}

var roleAssistant = string(types.RoleAssistant)

func (t *AAPToAGUI) closeText() {
	if t.textID == "" {
		return
	}
	ev, base := boxEvent[events.TextMessageEndEvent](events.EventTypeTextMessageEnd, t.opts.Now)
	ev.BaseEvent, ev.MessageID = base, t.textID
	t.out = append(t.out, withMetadata(ev, t.meta.text.JSON()))
	t.textID, t.meta.text = "", nil
}

func (t *AAPToAGUI) thinking(delta string) {
	if delta == "" {
		return
	}
	t.closeText()
	if t.reasoningID == "" {
		t.reasoningID = t.newID()
		s, sb := boxEvent[events.ReasoningStartEvent](events.EventTypeReasoningStart, t.opts.Now)
		s.BaseEvent, s.MessageID = sb, t.reasoningID
		m, mb := boxEvent[events.ReasoningMessageStartEvent](events.EventTypeReasoningMessageStart, t.opts.Now)
		m.BaseEvent, m.MessageID, m.Role = mb, t.reasoningID, string(types.RoleReasoning)
		t.out = append(t.out, s, m)
		t.reasoningIdx = t.addMessage(types.Message{ID: t.reasoningID, Role: types.RoleReasoning})
	}
	ev, base := slabEvent(&t.reasoningSlab, events.EventTypeReasoningMessageContent, t.opts.Now)
	ev.BaseEvent, ev.MessageID, ev.Delta = base, t.reasoningID, delta
	t.out = append(t.out, ev)
	t.msgs[t.reasoningIdx].text.Add(delta)
}

func (t *AAPToAGUI) closeReasoning() {
	if t.reasoningID == "" {
		return
	}
	m, mb := boxEvent[events.ReasoningMessageEndEvent](events.EventTypeReasoningMessageEnd, t.opts.Now)
	m.BaseEvent, m.MessageID = mb, t.reasoningID
	e, eb := boxEvent[events.ReasoningEndEvent](events.EventTypeReasoningEnd, t.opts.Now)
	e.BaseEvent, e.MessageID = eb, t.reasoningID
	t.out = append(t.out, m, e)
	t.reasoningID = ""
}

func (t *AAPToAGUI) toolCall(c *aap.ToolCall) error {
	args, err := ArgumentsFromInput(c.Input)
	if err != nil {
		t.closeAll()
		return &StreamError{Event: string(aap.EventToolCall), Reason: "tool call " + c.ToolCallID + ": " + err.Error()}
	}
	if t.previewedCall(c, args) {
		return nil
	}
	t.closeAll()
	if t.assistantIdx < 0 {
		t.assistantIdx = t.addMessage(types.Message{ID: t.newID(), Role: types.RoleAssistant})
	}
	parent := t.msgs[t.assistantIdx].msg.ID
	s, sb := boxEvent[events.ToolCallStartEvent](events.EventTypeToolCallStart, t.opts.Now)
	s.BaseEvent, s.ToolCallID, s.ToolCallName, s.ParentMessageID = sb, c.ToolCallID, c.Name, &parent
	a, ab := boxEvent[events.ToolCallArgsEvent](events.EventTypeToolCallArgs, t.opts.Now)
	a.BaseEvent, a.ToolCallID, a.Delta = ab, c.ToolCallID, args
	e, eb := boxEvent[events.ToolCallEndEvent](events.EventTypeToolCallEnd, t.opts.Now)
	e.BaseEvent, e.ToolCallID = eb, c.ToolCallID
	t.out = append(t.out, s, a, withMetadata(e, takeMetadata(t.meta.calls, c.ToolCallID)))
	item := &t.msgs[t.assistantIdx]
	item.msg.ToolCalls = append(item.msg.ToolCalls, types.ToolCall{
		ID: c.ToolCallID, Type: types.ToolCallTypeFunction,
		Function: types.FunctionCall{Name: c.Name, Arguments: args},
	})
	t.calls = append(t.calls, c)
	return nil
}

func (t *AAPToAGUI) toolResult(r *aap.ToolResult) {
	t.closeText()
	t.closeReasoning()
	content := ToolContentString(r.Content)
	if content == "" {
		// AG-UI clients reject an empty result; say that it was empty.
		content = "(empty result)"
	}
	ev, base := boxEvent[events.ToolCallResultEvent](events.EventTypeToolCallResult, t.opts.Now)
	ev.BaseEvent, ev.MessageID, ev.ToolCallID, ev.Content, ev.Role = base, ident.ToolResultMessage(r.ToolCallID), r.ToolCallID, content, &roleTool
	t.out = append(t.out, withMetadata(ev, takeMetadata(t.meta.results, r.ToolCallID)))
	t.addMessage(types.Message{ID: ev.MessageID, Role: types.RoleTool, ToolCallID: r.ToolCallID, Content: content})
	if t.resulted == nil {
		t.resulted = make(map[string]bool)
	}
	t.resulted[r.ToolCallID] = true
	t.assistantIdx = -1 // text after a result is a new assistant message
}

var roleTool = string(types.RoleTool)

func (t *AAPToAGUI) closeAll() {
	t.closeText()
	t.closeReasoning()
	t.closePreview()
}

func (t *AAPToAGUI) stop(r aap.StopReason) {
	switch r {
	case aap.StopError:
		t.runError("The agent stopped with an error.", CodeAgentError)
		return
	case aap.StopToolUse:
		var interrupts []types.Interrupt
		_, server := t.owners().Waiting(t.PendingCalls())
		for _, c := range server {
			interrupts = append(interrupts, PermissionInterrupt(c))
		}
		if len(interrupts) > 0 {
			t.runFinished(&events.RunFinishedOutcome{Type: events.RunFinishedOutcomeTypeInterrupt, Interrupts: interrupts}, nil)
			return
		}
		// Client tools: no outcome, the client runs them and starts a new run.
		t.runFinished(nil, nil)
	case aap.StopMaxTokens, aap.StopRefusal:
		t.runFinished(&events.RunFinishedOutcome{Type: events.RunFinishedOutcomeTypeSuccess}, StopResult{StopReason: r})
	default:
		t.runFinished(&events.RunFinishedOutcome{Type: events.RunFinishedOutcomeTypeSuccess}, nil)
	}
}

// owners is whose each tool is, as the options say (ToolOwners).
func (t *AAPToAGUI) owners() ToolOwners {
	o := ToolOwners{Client: t.opts.IsClientTool, Server: t.opts.IsServerTool}
	if o.Client == nil {
		o.Client = anyTool
	} else if o.Server == nil {
		o.Server = anyTool
	}
	return o
}

func anyTool(string) bool { return true }

func (t *AAPToAGUI) runFinished(outcome *events.RunFinishedOutcome, result any) {
	t.closeAll()
	ev, base := boxEvent[events.RunFinishedEvent](events.EventTypeRunFinished, t.opts.Now)
	ev.BaseEvent, ev.ThreadIDValue, ev.RunIDValue, ev.Outcome = base, t.opts.ThreadID, t.opts.RunID, outcome
	if result != nil {
		ev.Result = result
	} else if t.result != nil {
		ev.Result = t.result
	}
	t.out = append(t.out, ev)
	t.done = true
}

func (t *AAPToAGUI) runError(msg, code string) {
	t.closeAll()
	ev, base := boxEvent[events.RunErrorEvent](events.EventTypeRunError, t.opts.Now)
	// No runId: RUN_ERROR has none in AG-UI's schema (the TS client strips
	// it with a warning).
	ev.BaseEvent, ev.Message, ev.Code = base, msg, &code
	t.out = append(t.out, ev)
	t.done = true
}
