package translate

import (
	"encoding/json"
	"slices"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"

	"github.com/aapagui/aapagui/aap"
)

// encryptedRun collects the encrypted reasoning values of one run
// (REASONING_ENCRYPTED_VALUE events) and where the run's AAP messages hold
// what they belong to, so that each message is stored with its own
// (AGUIToAAP.Encrypted; docs/MAPPING.md, "AG-UI 1.0"). The translator
// keeps it beside the messages it builds.
type encryptedRun struct {
	calls map[string]string // toolCallId → value (subtype tool-call)
	msgs  map[string]string // message id → value (subtype message)
	// reasoning are the run's reasoning messages (the parent agent's), in
	// the order they began.
	reasoning []*reasoningMsg
	byID      map[string]*reasoningMsg
	chunkID   string // the reasoning message REASONING_MESSAGE_CHUNK continues
}

type reasoningMsg struct {
	id     string
	text   bool // it had text: a thinking block is it
	placed bool
	alone  bool // placed with no text: it goes before thinking block block of message msg
	msg    int  // index of the run's message (AGUIToAAP.Messages) that holds it
	block  int
}

func (e *encryptedRun) note(id string) *reasoningMsg {
	if r, ok := e.byID[id]; ok && id != "" {
		return r
	}
	r := &reasoningMsg{id: id}
	e.reasoning = append(e.reasoning, r)
	if id != "" {
		if e.byID == nil {
			e.byID = map[string]*reasoningMsg{}
		}
		e.byID[id] = r
	}
	return r
}

// after notes what an event the translator has been fed says of encrypted
// reasoning, and places the reasoning messages it has ended (FeedJSON
// calls it for every event but a subagent's, which the translator keeps
// out of the run's messages).
func (e *encryptedRun) after(tr *AGUIToAAP, ev events.Event) {
	switch ev.(type) {
	case *events.TextMessageContentEvent, *events.ToolCallArgsEvent:
		return // a delta ends nothing (first: most events are these)
	}
	switch ev := ev.(type) {
	case *events.ReasoningMessageStartEvent:
		e.note(ev.MessageID)
	case *events.ReasoningMessageContentEvent:
		if ev.Delta != "" {
			e.note(ev.MessageID).text = true
		}
		return
	case *events.ReasoningMessageEndEvent:
		if r, ok := e.byID[ev.MessageID]; ok && !r.text && !r.placed {
			e.placeAlone(tr, r)
		}
	case *events.ReasoningMessageChunkEvent:
		if ev.MessageID != nil {
			e.chunkID = *ev.MessageID
		}
		r := e.note(e.chunkID)
		if ev.Delta != nil && *ev.Delta != "" {
			r.text = true
		}
		return
	case *events.ThinkingTextMessageStartEvent:
		e.note("")
	case *events.ThinkingTextMessageContentEvent:
		if ev.Delta != "" && len(e.reasoning) > 0 {
			e.reasoning[len(e.reasoning)-1].text = true
		}
		return
	case *events.ReasoningEncryptedValueEvent:
		if ev.EncryptedValue == "" || ev.EntityID == "" {
			return
		}
		if ev.Subtype == events.ReasoningEncryptedValueSubtypeToolCall {
			if e.calls == nil {
				e.calls = map[string]string{}
			}
			e.calls[ev.EntityID] = ev.EncryptedValue
			return
		}
		if e.msgs == nil {
			e.msgs = map[string]string{}
		}
		e.msgs[ev.EntityID] = ev.EncryptedValue
		if r, ok := e.byID[ev.EntityID]; ok && !r.text && !r.placed {
			e.placeAlone(tr, r)
		}
		return
	}
	e.place(tr)
}

// place gives each reasoning message with text that the translator has
// made a thinking block its block: the k-th such message the k-th thinking
// block of the run. The run's messages are looked at (tr.Messages copies
// them) only while some such message is unplaced.
func (e *encryptedRun) place(tr *AGUIToAAP) {
	if !slices.ContainsFunc(e.reasoning, func(r *reasoningMsg) bool { return r.text && !r.placed }) {
		return
	}
	pos := ThinkingPositions(tr.Messages())
	k := 0
	for _, r := range e.reasoning {
		if !r.text {
			continue
		}
		if k >= len(pos) {
			return
		}
		if !r.placed {
			r.placed, r.msg, r.block = true, pos[k][0], pos[k][1]
		}
		k++
	}
}

// placeAlone places a reasoning message without text where the next block
// goes: the message being built (before its next thinking block).
func (e *encryptedRun) placeAlone(tr *AGUIToAAP, r *reasoningMsg) {
	msgs := tr.Messages()
	i := len(tr.Settled())
	n := 0
	if i < len(msgs) {
		n = len(ThinkingPositions(msgs[i : i+1]))
	}
	r.placed, r.alone, r.msg, r.block = true, true, i, n
}

// extras is the EncryptedValues JSON of the run's message msgs[i], whose
// AG-UI id upstream is id ("" when none).
func (e *encryptedRun) extras(msgs []aap.Message, i int, id string) json.RawMessage {
	if e == nil || len(e.calls)+len(e.msgs) == 0 {
		return nil
	}
	v := &EncryptedValues{}
	if id != "" {
		v.Value = e.msgs[id]
	}
	am, assistant := msgs[i].(*aap.AssistantMessage)
	if assistant && am.Content.IsBlocks() {
		for _, b := range am.Content.Blocks {
			if tu, ok := b.(*aap.ToolUseBlock); ok {
				if val, ok := e.calls[tu.ToolCallID]; ok {
					if v.ToolCalls == nil {
						v.ToolCalls = map[string]string{}
					}
					v.ToolCalls[tu.ToolCallID] = val
				}
			}
		}
	}
	for _, r := range e.reasoning {
		val := e.msgs[r.id]
		if !r.placed || r.id == "" || val == "" {
			continue
		}
		at, block := r.msg, r.block
		if r.alone {
			// Held by the next assistant message from where it was.
			for at < len(msgs) {
				if _, ok := msgs[at].(*aap.AssistantMessage); ok {
					break
				}
				at, block = at+1, 0
			}
		}
		if at == i && assistant {
			v.Reasoning = append(v.Reasoning, EncryptedReasoning{ID: r.id, Block: block, Alone: r.alone, Value: val})
		}
	}
	return v.JSON()
}

// Encrypted is what the agent's encrypted reasoning values and metadata
// say of the run's message msgs[i] (Messages(), whose AG-UI id is id, ""
// when none), as EncryptedValues JSON for the message's history entry;
// nil when the run had none for it.
func (t *AGUIToAAP) Encrypted(msgs []aap.Message, i int, id string) json.RawMessage {
	raw := t.enc.extras(msgs, i, id)
	if t.meta == nil {
		return raw
	}
	v := ParseEncryptedValues(raw)
	if v == nil {
		v = &EncryptedValues{}
	}
	t.meta.add(v, id, toolUseIDs(msgs[i]))
	return v.JSON()
}

// HasEncrypted reports whether the run carried any encrypted value or
// metadata.
func (t *AGUIToAAP) HasEncrypted() bool {
	return t.enc != nil && len(t.enc.calls)+len(t.enc.msgs) > 0 || t.meta != nil
}

// toolUseIDs are the ids of the tool_use blocks of m.
func toolUseIDs(m aap.Message) []string {
	am, ok := m.(*aap.AssistantMessage)
	if !ok || !am.Content.IsBlocks() {
		return nil
	}
	var out []string
	for _, b := range am.Content.Blocks {
		if tu, ok := b.(*aap.ToolUseBlock); ok {
			out = append(out, tu.ToolCallID)
		}
	}
	return out
}

// encAfter is encryptedRun.after, the state made with the run's first
// event of reasoning: a run without any (most) holds none.
func (t *AGUIToAAP) encAfter(ev events.Event) {
	if t.enc == nil {
		switch ev.(type) {
		case *events.ReasoningMessageStartEvent, *events.ReasoningMessageContentEvent, *events.ReasoningMessageChunkEvent,
			*events.ThinkingTextMessageStartEvent, *events.ReasoningEncryptedValueEvent:
			t.enc = &encryptedRun{}
		default:
			return // nothing of reasoning noted: nothing to place
		}
	}
	t.enc.after(t, ev)
}
