package translate

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/internal/slab"
)

// AGUIToAAPOptions configures an AGUIToAAP translator.
type AGUIToAAPOptions struct {
	// Mode is the AAP stream mode to produce. StreamDelta emits text_delta
	// and thinking_delta; StreamMessage emits one text or thinking event per
	// message; StreamNone emits nothing from Feed: read Response at the end.
	// The zero value means StreamDelta.
	Mode aap.StreamMode
	// Prior are the tool calls made before the run (see PriorCallsOf).
	// With it, a TOOL_CALL_RESULT for a call the stream never showed gets
	// its tool_use from the interrupt that named the call, and one that
	// would still have no tool_use before it (nothing named the call, or
	// the call has a result already) is left out of the stream and the
	// history, reported as a *DroppedResultError. A call whose tool_use is
	// in history already, which the agent streams again (@ag-ui/langgraph
	// does on resume), is neither streamed nor added to history again.
	// nil: only the run's own calls are known, and every result is kept.
	Prior *PriorCalls
	// Spill, in StreamDelta mode, holds the texts apart as they stream
	// (TextSpill): the text and thinking of Messages and Draft then hold
	// the marker of their parts. The other modes send the texts whole,
	// and hold them.
	Spill TextSpill
	// IsAgentTool reports a tool whose calls are the agent's own business
	// (ToolOwners.Agents: neither the client's nor a declared server
	// tool): a call of it that the run leaves without a result does not
	// stop the turn for tool_use. nil: every call waits on the client.
	IsAgentTool func(name string) bool
	// PreviewCalls, in StreamDelta mode, also sends the run's new tool
	// calls as they stream, as the agui events of their TOOL_CALL_START
	// and TOOL_CALL_ARGS (previews.go): for a client granted the AG-UI
	// extension of AAP (aap.ExtensionAGUI), never for another.
	PreviewCalls bool
}

// AGUIToAAP translates the AG-UI events of one run into the AAP events of
// one turn, and builds the turn's AAP history messages as it goes (in every
// mode, so that a caller can store what was said even if the run fails
// halfway).
//
// The AAP stream it produces always starts with turn_start and ends with
// exactly one turn_stop, whatever it is fed.
type AGUIToAAP struct {
	enc   *encryptedRun // the run's encrypted reasoning values (encrypted_run.go), from its first reasoning event
	mode  aap.StreamMode
	prior *PriorCalls
	isOwn func(name string) bool // IsAgentTool
	out   []aap.Event
	// previews: PreviewCalls; previewing are the calls being previewed
	// (previews.go).
	previews   bool
	previewing map[string]bool
	meta       *runMetadata // what the run's events said in metadata (metadata.go), from the first that did
	// Slabs of the per-token events (internal/slab); each event is still
	// its own value, never reused.
	textSlab     []aap.TextDelta
	thinkingSlab []aap.ThinkingDelta
	started      bool
	done         bool
	chunking     bool // a TOOL_CALL_CHUNK call may be open
	incomplete   bool
	stop         aap.StopReason

	texts     openTexts // open text messages (usually at most one)
	thoughts  openTexts // open reasoning messages
	chunkText string    // id of the text message opened by TEXT_MESSAGE_CHUNK
	chunkRsn  string    // id of the reasoning message opened by REASONING_MESSAGE_CHUNK
	args      ArgsAccumulator

	called     map[string]bool // tool calls completed in this run
	again      map[string]bool // calls of earlier turns streamed again in this run
	answered   map[string]bool // tool calls of this run with a TOOL_CALL_RESULT in it
	resulted   map[string]bool // every call with a TOOL_CALL_RESULT in this run
	agents     map[string]bool // completed calls of the agent's own tools (IsAgentTool)
	unanswered int             // completed calls without a result, the agent's own aside

	history    []aap.Message
	ids        []string           // the AG-UI id of each history message
	blocks     []aap.ContentBlock // the assistant message being built
	blocksID   string             // the AG-UI id of that message
	interrupts []types.Interrupt
	// reported are the interrupts of on_interrupt CUSTOM events, which
	// stand for a RUN_FINISHED without an interrupt outcome.
	reported []types.Interrupt
	// rawInterrupts are the JSON of the interrupts of the RUN_FINISHED
	// being fed, as the agent sent them (see FeedJSON); nil when unknown.
	rawInterrupts []json.RawMessage
	runError      *events.RunErrorEvent
	spill         TextSpill // Spill, in StreamDelta mode
	agui10
}

// thinkingID keys the deprecated THINKING_TEXT_MESSAGE_* events, which have
// no message id.
const thinkingID = "\x00thinking"

// NewAGUIToAAP returns a translator for one run.
func NewAGUIToAAP(opts AGUIToAAPOptions) *AGUIToAAP {
	mode := opts.Mode
	if mode == "" {
		mode = aap.StreamDelta
	}
	t := &AGUIToAAP{mode: mode, prior: opts.Prior, isOwn: opts.IsAgentTool, previews: opts.PreviewCalls}
	if mode == aap.StreamDelta {
		t.spill = opts.Spill
	}
	return t
}

// Feed translates one AG-UI event. The returned slice is reused by the next
// call to Feed or Finish; the events in it are not. Events with no AAP
// meaning (steps, state, snapshots, activity, raw, custom, unknown types)
// produce nothing; the caller may act on them itself.
func (t *AGUIToAAP) Feed(ev events.Event) ([]aap.Event, error) {
	t.out = t.out[:0]
	if t.done {
		return t.out, ErrTerminated
	}
	t.begin()
	if err := agui.CheckEvent(ev); err != nil {
		return t.out, &StreamError{Event: "(nil)", Reason: err.Error()}
	}
	typ := ev.Type()
	if endsChunks(ev) {
		t.endChunked()
	}
	var err error
	switch e := ev.(type) {
	case *events.TextMessageContentEvent: // the per-token events first
		if !t.isForeign(e.MessageID, false) {
			t.textDelta(e.MessageID, e.Delta)
		}
	case *events.ReasoningMessageContentEvent:
		t.thinkingDelta(e.MessageID, e.Delta)
	case *events.ToolCallArgsEvent:
		if err = t.args.Append(e.ToolCallID, e.Delta); err != nil {
			err = &StreamError{Event: string(typ), Reason: err.Error()}
		} else {
			t.previewArgs(e.ToolCallID, e.Delta)
		}
	case *events.RunStartedEvent:
		// turn_start was emitted by begin.
	case *agui.SubagentStartedEvent, *agui.SubagentFinishedEvent, *agui.SubagentErrorEvent:
		err = t.feed10(ev)
	case *events.CustomEvent:
		if in, ok := InterruptFromOnInterrupt(e); ok {
			t.reported = append(t.reported, in)
		}
	case *events.RunFinishedEvent:
		t.finish(e)
	case *events.RunErrorEvent:
		t.runError = e
		t.end(aap.StopError)
	default:
		if !t.feedMessage(ev) {
			err = t.feedTool(ev, typ)
		}
	}
	return t.out, err
}

// feedMessage is Feed for the events of text and reasoning messages but
// their content; false for any other event.
func (t *AGUIToAAP) feedMessage(ev events.Event) bool {
	switch e := ev.(type) {
	case *events.TextMessageStartEvent:
		if foreignRole(e.Role) {
			t.markForeign(e.MessageID)
			break
		}
		t.openText(&t.texts, e.MessageID)
	case *events.TextMessageEndEvent:
		if !t.isForeign(e.MessageID, true) {
			t.endText(e.MessageID)
		}
	case *events.TextMessageChunkEvent:
		t.endChunkedTool()
		t.endChunkedReasoning()
		if foreignRole(e.Role) && e.MessageID != nil {
			t.endChunkedText()
			t.markForeign(*e.MessageID)
			break
		}
		if e.MessageID != nil && t.isForeign(*e.MessageID, false) {
			break
		}
		t.chunkTextEvent(e)
	case *events.ReasoningMessageStartEvent:
		t.openText(&t.thoughts, e.MessageID)
	case *events.ReasoningMessageEndEvent:
		t.endThinking(e.MessageID)
	case *events.ReasoningMessageChunkEvent:
		t.endChunkedTool()
		t.endChunkedText()
		t.chunkReasoningEvent(e)
	case *events.ThinkingTextMessageStartEvent:
		t.openText(&t.thoughts, thinkingID)
	case *events.ThinkingTextMessageContentEvent:
		t.thinkingDelta(thinkingID, e.Delta)
	case *events.ThinkingTextMessageEndEvent:
		t.endThinking(thinkingID)
	default:
		return false
	}
	return true
}

// feedTool is Feed for the events of tool calls but their arguments (typ
// is the event's type); any other event is skipped.
func (t *AGUIToAAP) feedTool(ev events.Event, typ events.EventType) error {
	var err error
	switch e := ev.(type) {
	case *events.ToolCallStartEvent:
		parent := ""
		if e.ParentMessageID != nil {
			parent = *e.ParentMessageID
		}
		if err = t.args.Start(e.ToolCallID, e.ToolCallName, parent); err != nil {
			err = &StreamError{Event: string(typ), Reason: err.Error()}
		} else {
			t.previewStart(e)
		}
	case *events.ToolCallEndEvent:
		var c CompletedCall
		if c, err = t.args.End(e.ToolCallID); err != nil {
			err = &StreamError{Event: string(typ), Reason: err.Error()}
		} else {
			t.toolCall(c)
		}
	case *events.ToolCallChunkEvent:
		t.endChunkedText()
		t.endChunkedReasoning()
		var ended []CompletedCall
		ended, _, err = t.args.Chunk(e.ToolCallID, e.ToolCallName, e.ParentMessageID, e.Delta)
		for _, c := range ended {
			t.toolCall(c)
		}
		if err != nil {
			err = &StreamError{Event: string(typ), Reason: err.Error()}
		} else {
			t.chunking = true
		}
	case *events.ToolCallResultEvent:
		err = t.resultEvent(typ, e.ToolCallID, e.MessageID, aap.TextContent(e.Content))
	case *agui.ToolCallResultPartsEvent: // @ag-ui/core 1.0: content parts
		err = t.resultEvent(typ, e.ToolCallID, e.MessageID, toolPartsToAAP(e.Content))
	}
	return err
}

// resultEvent is a TOOL_CALL_RESULT (typ) of a call; one without its
// call's id is skipped with an error.
func (t *AGUIToAAP) resultEvent(typ events.EventType, toolCallID, messageID string, content aap.Content) error {
	if toolCallID == "" {
		return &StreamError{Event: string(typ), Reason: "a tool call result without toolCallId cannot be matched to a call; skipped"}
	}
	return t.toolResult(toolCallID, messageID, content)
}

// FeedJSON is Feed for an event decoded from data, its JSON as received.
// What the translator passes on from the event unchanged then keeps the
// agent's bytes: the interrupts of a RUN_FINISHED presented as calls of
// InterruptToolName have the interrupt's JSON as input, keys in the agent's
// order, numbers as spelt, fields the AG-UI SDK does not know included (only
// insignificant whitespace is removed), as tool arguments do. data is not
// retained. data may be nil for an event whose JSON holds nothing beyond
// ev's own fields (agui.Decoder.Plain): nothing is looked for in it then.
func (t *AGUIToAAP) FeedJSON(ev events.Event, data []byte) ([]aap.Event, error) {
	em := metadataOf(ev, data) // (metadata.go)
	t.noteMetadata(em)
	switch ev.(type) {
	case *events.RunFinishedEvent, *events.RunErrorEvent:
		t.usage = agui.Usage(data)
	}
	var sa string
	if data != nil {
		sa = agui.SubagentRunID(data)
	}
	if sa != "" && !t.done {
		t.out = t.out[:0]
		t.begin()
		if t.feedSubagent(sa, ev) {
			return t.out, nil
		}
	}
	if e, ok := ev.(*events.RunFinishedEvent); ok && e.Outcome != nil && len(e.Outcome.Interrupts) > 0 {
		t.rawInterrupts = rawInterrupts(data, len(e.Outcome.Interrupts))
	}
	out, err := t.Feed(ev)
	if sa == "" {
		t.encAfter(ev)
	}
	return t.withNote(out, em), err
}

// rawInterrupts returns the compacted JSON of each of the n interrupts of
// a RUN_FINISHED event's outcome, read from data the way encoding/json
// (which decoded the event) reads it; nil when they cannot be matched.
func rawInterrupts(data []byte, n int) []json.RawMessage {
	var w struct {
		Outcome *struct {
			Interrupts []json.RawMessage `json:"interrupts"`
		} `json:"outcome"`
	}
	if json.Unmarshal(data, &w) != nil || w.Outcome == nil || len(w.Outcome.Interrupts) != n {
		return nil
	}
	out := make([]json.RawMessage, n)
	for i, raw := range w.Outcome.Interrupts {
		var b bytes.Buffer
		if json.Compact(&b, raw) != nil || b.Len() == 0 || b.Bytes()[0] != '{' {
			continue
		}
		out[i] = b.Bytes()
	}
	return out
}

// Finish ends the turn if the run did not: open messages and tool calls are
// closed and the turn stops with "error" (an AG-UI stream that ends without
// RUN_FINISHED has failed). It returns the events still to emit, if any.
func (t *AGUIToAAP) Finish() []aap.Event {
	t.out = t.out[:0]
	if t.done {
		return t.out
	}
	t.begin()
	t.incomplete = true
	t.end(aap.StopError)
	return t.out
}

// EndMessage ends the assistant message being built, for a caller that
// strings two runs of the agent into one turn: what the next run says is a
// message of its own in history (Messages), as in the agent's. Messages
// and tool calls still open are closed first; it returns the events that
// closing emits, if any (the stream is otherwise unchanged: its events are
// per block).
func (t *AGUIToAAP) EndMessage() []aap.Event {
	t.out = t.out[:0]
	if t.done {
		return t.out
	}
	t.closeOpen()
	t.flushAssistant()
	return t.out
}

// Done reports whether the turn has stopped.
func (t *AGUIToAAP) Done() bool { return t.done }

// StopReason is the turn's stop reason, once Done.
func (t *AGUIToAAP) StopReason() aap.StopReason { return t.stop }

// Incomplete reports whether the run ended without a terminal event.
func (t *AGUIToAAP) Incomplete() bool { return t.incomplete }

// RunError is the RUN_ERROR that ended the run, if one did.
func (t *AGUIToAAP) RunError() *events.RunErrorEvent { return t.runError }

// Interrupts are the interrupts the run finished with, if any.
func (t *AGUIToAAP) Interrupts() []types.Interrupt { return t.interrupts }

// Messages returns the AAP history messages of the turn so far: assistant
// messages (thinking, text and tool_use blocks, in the order they
// completed) and tool messages for results. An assistant message holding a
// single text block is given as string content.
func (t *AGUIToAAP) Messages() []aap.Message {
	if len(t.blocks) == 0 {
		return t.history
	}
	out := make([]aap.Message, len(t.history), len(t.history)+1)
	copy(out, t.history)
	return append(out, assistantMessage(t.blocks))
}

// MessageCount is how many history messages the run has made so far, the
// one being built (settled or streaming) counted.
func (t *AGUIToAAP) MessageCount() int {
	if len(t.blocks) > 0 || t.texts.live+t.thoughts.live > 0 {
		return len(t.history) + 1
	}
	return len(t.history)
}

// Draft returns, without closing anything, the assistant message being
// built with the text and thinking still streaming in it, as Finish would
// close them, and its AG-UI id; ok is false when nothing is open. A caller
// checkpoints it so that a crash loses only what came after.
func (t *AGUIToAAP) Draft() (msg aap.Message, id string, ok bool) {
	blocks := slices.Clone(t.blocks)
	id = t.blocksID
	t.thoughts.each(func(o *openText) {
		if o.text.Len() > 0 {
			blocks = append(blocks, &aap.ThinkingBlock{Thinking: o.text.String()})
		}
	})
	t.texts.each(func(o *openText) {
		if o.text.Len() > 0 {
			blocks = append(blocks, &aap.TextBlock{Text: o.text.String()})
			if id == "" && o.id != "" && o.id[0] != 0 {
				id = o.id
			}
		}
	})
	if t.texts.live+t.thoughts.live == 0 || len(blocks) == 0 {
		return nil, "", false
	}
	return assistantMessage(blocks), id, true
}

// Settled returns the history messages that are final: everything but the
// assistant message still being built. A caller that saves history as a
// run goes on saves Settled()[n:] after each event, then the rest of
// Messages() at the end.
func (t *AGUIToAAP) Settled() []aap.Message { return t.history }

// MessageIDs returns, for each message of Messages,
// the AG-UI id it had upstream: the text message's id (or the tool calls'
// parentMessageId) for an assistant message, the TOOL_CALL_RESULT's
// messageId for a tool message; "" when the upstream gave none.
func (t *AGUIToAAP) MessageIDs() []string {
	if len(t.blocks) == 0 {
		return t.ids
	}
	out := make([]string, len(t.ids), len(t.ids)+1)
	copy(out, t.ids)
	return append(out, t.blocksID)
}

// Response returns the StreamNone response body: the stop reason and the
// turn's messages. Call it once Done.
func (t *AGUIToAAP) Response() *aap.PostSessionTurnResponse {
	msgs := t.Messages()
	if msgs == nil {
		msgs = []aap.Message{}
	}
	return &aap.PostSessionTurnResponse{StopReason: t.stop, Messages: msgs}
}

func (t *AGUIToAAP) begin() {
	if !t.started {
		t.started = true
		t.emit(&aap.TurnStart{})
	}
}

func (t *AGUIToAAP) emit(ev aap.Event) {
	if t.mode != aap.StreamNone {
		t.out = append(t.out, ev)
	}
}

func (t *AGUIToAAP) openText(list *openTexts, id string) *openText { return list.open(id, t.spill) }

func (t *AGUIToAAP) textDelta(id, delta string) {
	o := t.openText(&t.texts, id)
	if delta == "" {
		return
	}
	if o.text.Len() == 0 && t.mode == aap.StreamDelta && t.joinsText() {
		// A second text message right after another: its own text
		// block in history; the stream puts a blank line between the two,
		// as several text blocks read (docs/MAPPING.md).
		t.out = append(t.out, &aap.TextDelta{Delta: textSeparator})
	}
	o.text.Add(delta)
	if t.mode == aap.StreamDelta {
		t.out = append(t.out, slabDelta(&t.textSlab, delta))
	}
}

// AddTextDelta is Feed of a TEXT_MESSAGE_CONTENT of message id with a
// non-empty delta, given as bytes (copied), in the case that makes it one
// text_delta of the same text, the stream's usual event: a delta mode
// stream's text message that has text already, with nothing of the
// event's own to settle first (chunked messages or calls, another role's
// message, the run's start or end). It then adds the delta to the message
// and reports true: the caller writes the text_delta itself
// (aap.AppendTextDeltaFrame), without an event made of either. false:
// nothing was done, and the caller feeds the event.
func (t *AGUIToAAP) AddTextDelta(id string, delta []byte) bool {
	if !t.started || t.done || t.mode != aap.StreamDelta || len(delta) == 0 ||
		t.chunkText != "" || t.chunkRsn != "" || t.chunking || t.foreign[id] {
		return false
	}
	o := t.texts.find(id)
	if o == nil || o.text.Len() == 0 {
		return false // not open, or its first text, which may follow another (textDelta)
	}
	o.text.AddBytes(delta)
	return true
}

func (t *AGUIToAAP) thinkingDelta(id, delta string) {
	o := t.openText(&t.thoughts, id)
	if delta == "" {
		return
	}
	o.text.Add(delta)
	if t.mode == aap.StreamDelta {
		t.out = append(t.out, slabDelta(&t.thinkingSlab, delta))
	}
}

func (t *AGUIToAAP) endText(id string) {
	s, ok := t.texts.take(id)
	if !ok || s == "" {
		return
	}
	if t.mode == aap.StreamMessage {
		t.out = append(t.out, &aap.Text{Text: s})
	}
	t.addBlock(&aap.TextBlock{Text: s}, id)
}

func (t *AGUIToAAP) endThinking(id string) {
	s, ok := t.thoughts.take(id)
	if !ok || s == "" {
		return
	}
	if t.mode == aap.StreamMessage {
		t.out = append(t.out, &aap.Thinking{Thinking: s})
	}
	t.addBlock(&aap.ThinkingBlock{Thinking: s}, "")
}

func (t *AGUIToAAP) chunkTextEvent(e *events.TextMessageChunkEvent) {
	if e.MessageID != nil && *e.MessageID != t.chunkText {
		t.endChunkedText()
		t.chunkText = *e.MessageID
	}
	if t.chunkText == "" { // a chunk with no id and none open: give it one
		t.chunkText = "\x00chunk"
	}
	if e.Delta != nil {
		t.textDelta(t.chunkText, *e.Delta)
	} else {
		t.openText(&t.texts, t.chunkText)
	}
}

func (t *AGUIToAAP) chunkReasoningEvent(e *events.ReasoningMessageChunkEvent) {
	if e.MessageID != nil && *e.MessageID != t.chunkRsn {
		t.endChunkedReasoning()
		t.chunkRsn = *e.MessageID
	}
	if t.chunkRsn == "" {
		t.chunkRsn = "\x00chunk"
	}
	if e.Delta != nil {
		t.thinkingDelta(t.chunkRsn, *e.Delta)
	} else {
		t.openText(&t.thoughts, t.chunkRsn)
	}
}

func (t *AGUIToAAP) endChunked() {
	t.endChunkedText()
	t.endChunkedReasoning()
	t.endChunkedTool()
}

func (t *AGUIToAAP) endChunkedText() {
	if t.chunkText != "" {
		t.endText(t.chunkText)
		t.chunkText = ""
	}
}

func (t *AGUIToAAP) endChunkedReasoning() {
	if t.chunkRsn != "" {
		t.endThinking(t.chunkRsn)
		t.chunkRsn = ""
	}
}

func (t *AGUIToAAP) endChunkedTool() {
	if !t.chunking {
		return
	}
	t.chunking = false
	if c, ok := t.args.EndChunked(); ok {
		t.toolCall(c)
	}
}

// toolCall emits a completed call. Arguments that are not a JSON object are
// kept under RawArgumentsKey rather than dropped. A call that history
// holds already (Prior), streamed again, is left out.
func (t *AGUIToAAP) toolCall(c CompletedCall) {
	delete(t.previewing, c.ToolCallID)
	if t.inHistory(c.ToolCallID) && !t.called[c.ToolCallID] {
		if t.again == nil {
			t.again = make(map[string]bool)
		}
		t.again[c.ToolCallID] = true
		return
	}
	in, _ := RecoverInput(c.Arguments)
	t.emit(&aap.ToolCall{ToolCallID: c.ToolCallID, Name: c.Name, Input: in})
	t.addBlock(&aap.ToolUseBlock{ToolCallID: c.ToolCallID, Name: c.Name, Input: in}, c.ParentMessageID)
	t.madeCall(c.ToolCallID, c.Name)
}

// madeCall notes a call of tool name the run made, streamed or in a
// snapshot: one the turn waits on, unless it is the agent's own
// (IsAgentTool).
func (t *AGUIToAAP) madeCall(id, name string) {
	t.called = setKey(t.called, id, true)
	if t.isOwn != nil && t.isOwn(name) {
		t.agents = setKey(t.agents, id, true)
		return
	}
	t.unanswered++
}

// inHistory reports whether a tool_use in history before the run shows
// the call.
func (t *AGUIToAAP) inHistory(id string) bool {
	return t.prior != nil && (t.prior.Open[id] || t.prior.Answered[id])
}

// CallOfRun reports whether the run itself made the call with the given
// id: it streamed the call (completed or not), and no tool_use in history
// shows it. A call of an earlier turn that the agent streams again is not
// one.
func (t *AGUIToAAP) CallOfRun(id string) bool {
	if t.called[id] {
		return true
	}
	if t.inHistory(id) {
		return false
	}
	for _, open := range t.args.Open() {
		if open == id {
			return true
		}
	}
	return false
}

func (t *AGUIToAAP) toolResult(toolCallID, messageID string, content aap.Content) error {
	// A result for a call still streaming closes it first, so that the AAP
	// stream never shows a result before its call.
	for _, id := range t.args.Open() {
		if id == toolCallID {
			if c, err := t.args.End(id); err == nil {
				t.toolCall(c)
			}
		}
	}
	if err := t.checkResult(toolCallID); err != nil {
		return err
	}
	if t.resulted == nil {
		t.resulted = make(map[string]bool)
	}
	t.resulted[toolCallID] = true
	t.emit(&aap.ToolResult{ToolCallID: toolCallID, Content: content})
	t.flushAssistant()
	t.history = append(t.history, &aap.ToolMessage{ToolCallID: toolCallID, Content: content})
	t.ids = append(t.ids, messageID)
	if t.called[toolCallID] && !t.answered[toolCallID] {
		if t.answered == nil {
			t.answered = make(map[string]bool)
		}
		t.answered[toolCallID] = true
		if !t.agents[toolCallID] {
			t.unanswered--
		}
	}
	return nil
}

// checkResult makes sure a tool_use goes before the result for id (see
// AGUIToAAPOptions.Prior): the run's own call, an earlier one, or one an
// interrupt named, which it adds now; otherwise the result is dropped.
func (t *AGUIToAAP) checkResult(id string) error {
	p := t.prior
	switch {
	case p == nil:
		return nil
	case t.resulted[id] || (p.Answered[id] && !t.called[id]):
		return &DroppedResultError{ToolCallID: id, Reason: "the call has a result already"}
	case t.called[id] || p.Open[id]:
		return nil
	}
	if call, ok := p.Interrupted[id]; ok {
		// A call the framework never streamed (it paused it for
		// approval): its tool_use comes from the interrupt.
		t.toolCall(CompletedCall{ToolCallID: id, Name: call.Name, Arguments: string(call.Input)})
		return nil
	}
	return &DroppedResultError{ToolCallID: id, Reason: "no tool_use shows the call and no interrupt named it with its tool"}
}

// assistantMessage makes the assistant message of blocks: string content
// when it is a single text block.
func assistantMessage(blocks []aap.ContentBlock) *aap.AssistantMessage {
	if tb, ok := blocks[0].(*aap.TextBlock); ok && len(blocks) == 1 {
		return &aap.AssistantMessage{Content: aap.TextContent(tb.Text)}
	}
	return &aap.AssistantMessage{Content: aap.BlockContent(slices.Clone(blocks)...)}
}

func (t *AGUIToAAP) flushAssistant() {
	if len(t.blocks) == 0 {
		return
	}
	t.history = append(t.history, assistantMessage(t.blocks))
	t.ids = append(t.ids, t.blocksID)
	t.blocks, t.blocksID = nil, ""
}

// addBlock adds a block to the assistant message being built; id is the
// AG-UI message it came from, if known ("" or an internal key otherwise).
func (t *AGUIToAAP) addBlock(b aap.ContentBlock, id string) {
	if t.blocksID == "" && id != "" && id[0] != 0 {
		t.blocksID = id
	}
	t.blocks = append(t.blocks, b)
}

// closeOpen ends every message and tool call still open, in the order they
// were opened.
func (t *AGUIToAAP) closeOpen() {
	t.endChunked()
	for _, id := range t.thoughts.ids() {
		t.endThinking(id)
	}
	for _, id := range t.texts.ids() {
		t.endText(id)
	}
	for _, id := range t.args.Open() {
		if c, err := t.args.End(id); err == nil {
			t.toolCall(c)
		}
	}
}

func (t *AGUIToAAP) finish(e *events.RunFinishedEvent) {
	t.closeOpen()
	if e.Outcome != nil && e.Outcome.Type == agui.RunFinishedOutcomeCancelled {
		// Stopped by whoever ran it: not a completed turn (docs/MAPPING.md).
		t.cancelled = true
		t.end(aap.StopError)
		return
	}
	t.closeSubagents()
	stop := aap.StopEndTurn
	var interrupts []types.Interrupt
	var raws []json.RawMessage
	if e.Outcome != nil && e.Outcome.Type == events.RunFinishedOutcomeTypeInterrupt {
		for i, in := range e.Outcome.Interrupts {
			if in.ID != "" { // an interrupt without an id cannot be resumed
				interrupts = append(interrupts, in)
				var raw json.RawMessage
				if i < len(t.rawInterrupts) {
					raw = t.rawInterrupts[i]
				}
				raws = append(raws, raw)
			}
		}
	}
	t.rawInterrupts = nil
	if len(interrupts) == 0 && (e.Outcome == nil || e.Outcome.Type != events.RunFinishedOutcomeTypeSuccess) {
		// @ag-ui/langgraph's default: the interrupts came as on_interrupt
		// events, the run finishes without an outcome.
		interrupts = t.reported
		raws = make([]json.RawMessage, len(interrupts))
	}
	if len(interrupts) > 0 {
		t.interrupts = interrupts
		for i, in := range interrupts {
			if in.Reason == InterruptReasonToolCall && (t.called[in.ToolCallID] || t.again[in.ToolCallID]) {
				continue
			}
			// Not bound to a call the AAP side has seen: present it as a
			// call of the reserved interrupt tool, the interrupt as input.
			input := raws[i]
			if input == nil {
				input = interruptInput(in)
			}
			t.toolCall(CompletedCall{ToolCallID: in.ID, Name: InterruptToolName, Arguments: string(input)})
		}
		stop = aap.StopToolUse
	} else if r, ok := StopReasonFromResult(e.Result); ok {
		stop = r
	} else if t.unanswered > 0 {
		stop = aap.StopToolUse
	}
	t.end(stop)
}

func (t *AGUIToAAP) end(stop aap.StopReason) {
	t.closeOpen()
	t.closeSubagents()
	t.flushAssistant()
	t.stop = stop
	t.done = true
	t.emit(&aap.TurnStop{StopReason: stop})
}

// slabDelta returns a new delta event holding delta, taken from *slab.
func slabDelta[E aap.TextDelta | aap.ThinkingDelta, P interface {
	*E
	aap.Event
}](s *[]E, delta string) P {
	e := slab.Next(s)
	*e = E{Delta: delta}
	return e
}
