package translate

import (
	"strings"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/internal/jsonenc"
)

// A tool call's arguments as they stream, under the AG-UI extension of
// AAP (aap.ExtensionAGUI). AAP's tool_call carries a call whole, once the
// agent has ended it; an AG-UI page shows the arguments as they stream
// (predictive state updates fill the document from them). Granted the
// extension, aap2agui's translator (AGUIToAAP, PreviewCalls) also sends
// each new call's TOOL_CALL_START and TOOL_CALL_ARGS as agui events, the
// call's preview, and agui2aap's (AAPToAGUI) makes of them the page's
// TOOL_CALL_START and TOOL_CALL_ARGS, under its own message ids; the
// tool_call that follows then only ends the call on the page. The
// tool_call stays what the call is (the history's, and a plain client's):
// a preview is never more than the view of it as it streams.

// previewStart sends the preview of a call's start: one of the run's own
// calls (not one of history streamed again, which toolCall leaves out),
// in delta mode.
func (t *AGUIToAAP) previewStart(e *events.ToolCallStartEvent) {
	if !t.previews || t.mode != aap.StreamDelta || (t.inHistory(e.ToolCallID) && !t.called[e.ToolCallID]) {
		return
	}
	t.previewing = setKey(t.previewing, e.ToolCallID, true)
	t.emit(&aap.AGUIEvent{Data: previewEvent(events.EventTypeToolCallStart, e.ToolCallID, "toolCallName", e.ToolCallName)})
}

// previewArgs sends the preview of a delta of a previewed call's
// arguments.
func (t *AGUIToAAP) previewArgs(id, delta string) {
	if t.previewing[id] && delta != "" {
		t.emit(&aap.AGUIEvent{Data: previewEvent(events.EventTypeToolCallArgs, id, "delta", delta)})
	}
}

// previewEvent is the JSON of a preview event of type typ for call id,
// with one more string member key: value.
func previewEvent(typ events.EventType, id, key, value string) []byte {
	b := make([]byte, 0, 48+len(id)+len(key)+len(value))
	b = append(b, `{"type":"`...)
	b = append(b, typ...)
	b = append(b, `","toolCallId":`...)
	b = jsonenc.AppendString(b, id)
	b = append(b, ',', '"')
	b = append(b, key...)
	b = append(b, '"', ':')
	b = jsonenc.AppendString(b, value)
	return append(b, '}')
}

// callPreview is the call whose preview the page is being sent.
type callPreview struct {
	id        string
	msg, call int // where the call is in the run's messages: msgs[msg].msg.ToolCalls[call]
	args      strings.Builder
}

// previewStart opens a call on the page from its preview: the call goes
// into the current assistant message, as toolCall puts it, its arguments
// to come.
func (t *AAPToAGUI) previewStart(e *events.ToolCallStartEvent) error {
	if e.ToolCallID == "" || e.ToolCallName == "" {
		return &StreamError{Event: string(aap.EventAGUI), Reason: "TOOL_CALL_START needs toolCallId and toolCallName"}
	}
	if _, seen := t.previewed[e.ToolCallID]; seen {
		return &StreamError{Event: string(aap.EventAGUI), Reason: "tool call " + e.ToolCallID + " was started already"}
	}
	t.closeAll()
	if t.assistantIdx < 0 {
		t.assistantIdx = t.addMessage(types.Message{ID: t.newID(), Role: types.RoleAssistant})
	}
	item := &t.msgs[t.assistantIdx]
	parent := item.msg.ID
	s, sb := boxEvent[events.ToolCallStartEvent](events.EventTypeToolCallStart, t.opts.Now)
	s.BaseEvent, s.ToolCallID, s.ToolCallName, s.ParentMessageID = sb, e.ToolCallID, e.ToolCallName, &parent
	t.out = append(t.out, s)
	item.msg.ToolCalls = append(item.msg.ToolCalls, types.ToolCall{ID: e.ToolCallID, Type: types.ToolCallTypeFunction,
		Function: types.FunctionCall{Name: e.ToolCallName}})
	if t.previewed == nil {
		t.previewed = make(map[string]*callPreview)
	}
	t.preview = &callPreview{id: e.ToolCallID, msg: t.assistantIdx, call: len(item.msg.ToolCalls) - 1}
	t.previewed[e.ToolCallID] = t.preview
	return nil
}

// previewArgs passes on a delta of the open call's arguments. A delta of
// a call whose preview was closed (something else came between) is not
// sent: the page has ended that call, and its tool_call gives the
// arguments whole to the run's messages.
func (t *AAPToAGUI) previewArgs(e *events.ToolCallArgsEvent) error {
	if _, seen := t.previewed[e.ToolCallID]; !seen {
		return &StreamError{Event: string(aap.EventAGUI), Reason: "TOOL_CALL_ARGS of tool call " + e.ToolCallID + ", which was not started"}
	}
	if t.preview == nil || t.preview.id != e.ToolCallID || e.Delta == "" {
		return nil
	}
	a, ab := boxEvent[events.ToolCallArgsEvent](events.EventTypeToolCallArgs, t.opts.Now)
	a.BaseEvent, a.ToolCallID, a.Delta = ab, e.ToolCallID, e.Delta
	t.out = append(t.out, a)
	t.preview.args.WriteString(e.Delta)
	return nil
}

// closePreview ends the open call on the page, its arguments what its
// preview gave so far, until its tool_call (if one comes) gives them
// whole: the page's client takes no other message's event while a call
// is open. A call whose preview sent no arguments gets {}.
func (t *AAPToAGUI) closePreview() {
	p := t.preview
	if p == nil {
		return
	}
	t.preview = nil
	if p.args.Len() == 0 { // AG-UI clients parse a call's arguments: none are {}
		a, ab := boxEvent[events.ToolCallArgsEvent](events.EventTypeToolCallArgs, t.opts.Now)
		a.BaseEvent, a.ToolCallID, a.Delta = ab, p.id, emptyObject
		t.out = append(t.out, a)
		p.args.WriteString(emptyObject)
	}
	t.msgs[p.msg].msg.ToolCalls[p.call].Function.Arguments = p.args.String()
	e, eb := boxEvent[events.ToolCallEndEvent](events.EventTypeToolCallEnd, t.opts.Now)
	e.BaseEvent, e.ToolCallID = eb, p.id
	t.out = append(t.out, withMetadata(e, takeMetadata(t.meta.calls, p.id)))
}

// previewedCall is toolCall for a call the page was sent the preview of
// (false: it was not): the call's arguments (args) become the run's
// message's; the page gets what its preview had not sent of them, when
// the preview's are their start, and the call's end, when its preview is
// still open.
func (t *AAPToAGUI) previewedCall(c *aap.ToolCall, args string) bool {
	p, ok := t.previewed[c.ToolCallID]
	if !ok {
		return false
	}
	delete(t.previewed, c.ToolCallID)
	if p == t.preview {
		if sent := p.args.String(); len(args) > len(sent) && strings.HasPrefix(args, sent) {
			a, ab := boxEvent[events.ToolCallArgsEvent](events.EventTypeToolCallArgs, t.opts.Now)
			a.BaseEvent, a.ToolCallID, a.Delta = ab, c.ToolCallID, args[len(sent):]
			t.out = append(t.out, a)
			p.args.WriteString(args[len(sent):])
		}
		t.closePreview()
	}
	t.msgs[p.msg].msg.ToolCalls[p.call].Function.Arguments = args
	t.calls = append(t.calls, c)
	return true
}
