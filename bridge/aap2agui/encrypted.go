package aap2agui

import (
	"encoding/json"
	"maps"
	"slices"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/translate"
)

// encryptedRun collects the encrypted reasoning values of one run
// (REASONING_ENCRYPTED_VALUE events) and where the run's AAP messages hold
// what they belong to, so that each history entry is stored with its own
// (store.Entry.AGUI; docs/MAPPING.md, "AG-UI 1.0").
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
// reasoning, and places the reasoning messages it has ended. Events of
// subagents are skipped, as the translator skips them.
func (e *encryptedRun) after(tr *translate.AGUIToAAP, ev events.Event, data []byte) {
	switch ev.(type) {
	case *events.TextMessageContentEvent, *events.ToolCallArgsEvent:
		return // a delta ends nothing (first: most events are these)
	}
	if agui.SubagentRunID(data) != "" {
		return
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
func (e *encryptedRun) place(tr *translate.AGUIToAAP) {
	if !slices.ContainsFunc(e.reasoning, func(r *reasoningMsg) bool { return r.text && !r.placed }) {
		return
	}
	pos := translate.ThinkingPositions(tr.Messages())
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
func (e *encryptedRun) placeAlone(tr *translate.AGUIToAAP, r *reasoningMsg) {
	msgs := tr.Messages()
	i := len(tr.Settled())
	n := 0
	if i < len(msgs) {
		n = len(translate.ThinkingPositions(msgs[i : i+1]))
	}
	r.placed, r.alone, r.msg, r.block = true, true, i, n
}

// extras is the store.Entry.AGUI of the run's message msgs[i], whose
// AG-UI id upstream is id ("" when none).
func (e *encryptedRun) extras(msgs []aap.Message, i int, id string) json.RawMessage {
	if e == nil || len(e.calls)+len(e.msgs) == 0 {
		return nil
	}
	v := &translate.EncryptedValues{}
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
			v.Reasoning = append(v.Reasoning, translate.EncryptedReasoning{ID: r.id, Block: block, Alone: r.alone, Value: val})
		}
	}
	return v.JSON()
}

// storedToolCallValues gives the encrypted values stored with the tool
// calls of the entries of each list (toolCallId → value).
func storedToolCallValues(lists ...[]store.Entry) map[string]string {
	out := map[string]string{}
	for _, entries := range lists {
		for _, e := range entries {
			if v := translate.ParseEncryptedValues(e.AGUI); v != nil {
				maps.Copy(out, v.ToolCalls)
			}
		}
	}
	return out
}
