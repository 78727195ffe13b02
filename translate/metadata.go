package translate

import (
	"bytes"
	"encoding/json"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"

	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/internal/jsonenc"
)

// AG-UI metadata (@ag-ui/core 1.0): an open object on events, messages and
// tool calls. A consumer merges an event's metadata into the message the
// event builds, key by key, the last write winning; a tool call's events
// merge into the call, a TOOL_CALL_RESULT's into its tool message. AAP
// has no field for it: aap2agui keeps it with the history entry of the
// message (EncryptedValues.Metadata, ToolCallMetadata) and sends it back
// to the agent with the message; the AG-UI extension of AAP carries it to
// and from a page.

var metadataKey = []byte(`"metadata"`)

// MergeMetadata is old with the members of add set over it, in old's
// order, new keys last (both JSON objects; one that is not is left out).
func MergeMetadata(old, add json.RawMessage) json.RawMessage {
	if len(add) == 0 || firstNonSpace(add) != '{' {
		return old
	}
	if len(old) == 0 || firstNonSpace(old) != '{' {
		return compactJSON(add)
	}
	keys, vals, ok := members(old)
	addKeys, addVals, ok2 := members(add)
	if !ok || !ok2 {
		return compactJSON(add)
	}
	at := make(map[string]int, len(keys))
	for i, k := range keys {
		at[k] = i
	}
	for i, k := range addKeys {
		if j, seen := at[k]; seen {
			vals[j] = addVals[i]
			continue
		}
		at[k] = len(keys)
		keys, vals = append(keys, k), append(vals, addVals[i])
	}
	b := []byte{'{'}
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonenc.AppendString(b, k)
		b = append(b, ':')
		b = append(b, compactJSON(vals[i])...)
	}
	return append(b, '}')
}

// members are an object's keys and values in their order.
func members(obj json.RawMessage) (keys []string, vals []json.RawMessage, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, nil, false
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, nil, false
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, false
		}
		keys, vals = append(keys, k), append(vals, v)
	}
	return keys, vals, true
}

func compactJSON(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

// eventMetadata is the metadata member of an event's JSON, nil when it
// has none (or it is not an object).
func eventMetadata(data []byte) json.RawMessage {
	if !bytes.Contains(data, metadataKey) {
		return nil
	}
	var w struct {
		Metadata json.RawMessage `json:"metadata"`
	}
	if json.Unmarshal(data, &w) != nil || firstNonSpace(w.Metadata) != '{' {
		return nil
	}
	return w.Metadata
}

// runMetadata is what a run's events said in metadata, merged into the
// messages (by AG-UI message id) and the tool calls (by toolCallId) they
// build.
type runMetadata struct {
	msgs  map[string]json.RawMessage
	calls map[string]json.RawMessage
}

// note merges the metadata of ev (data: its JSON) into what it builds.
func (m *runMetadata) note(ev events.Event, data []byte) {
	meta := eventMetadata(data)
	if meta == nil {
		return
	}
	var msg, call string
	switch e := ev.(type) {
	case *events.TextMessageStartEvent:
		msg = e.MessageID
	case *events.TextMessageContentEvent:
		msg = e.MessageID
	case *events.TextMessageEndEvent:
		msg = e.MessageID
	case *events.TextMessageChunkEvent:
		if e.MessageID != nil {
			msg = *e.MessageID
		}
	case *events.ToolCallStartEvent:
		call = e.ToolCallID
	case *events.ToolCallArgsEvent:
		call = e.ToolCallID
	case *events.ToolCallEndEvent:
		call = e.ToolCallID
	case *events.ToolCallChunkEvent:
		if e.ToolCallID != nil {
			call = *e.ToolCallID
		}
	case *events.ToolCallResultEvent:
		msg = e.MessageID
	case *agui.ToolCallResultPartsEvent:
		msg = e.MessageID
	}
	switch {
	case msg != "":
		m.msgs = setKey(m.msgs, msg, MergeMetadata(m.msgs[msg], meta))
	case call != "":
		m.calls = setKey(m.calls, call, MergeMetadata(m.calls[call], meta))
	}
}

// noteMetadata is runMetadata.note, made with the run's first event that
// holds metadata: a run without any (most) holds none.
func (t *AGUIToAAP) noteMetadata(ev events.Event, data []byte) {
	if data == nil || !bytes.Contains(data, metadataKey) {
		return
	}
	if t.meta == nil {
		t.meta = &runMetadata{}
	}
	t.meta.note(ev, data)
}

// add adds to v the metadata the run's events gave the message of id and
// the tool calls named (calls).
func (m *runMetadata) add(v *EncryptedValues, id string, calls []string) {
	if m == nil {
		return
	}
	if id != "" {
		if meta, ok := m.msgs[id]; ok {
			v.Metadata = MergeMetadata(v.Metadata, meta)
		}
	}
	for _, c := range calls {
		if meta, ok := m.calls[c]; ok {
			v.ToolCallMetadata = setKey(v.ToolCallMetadata, c, MergeMetadata(v.ToolCallMetadata[c], meta))
		}
	}
}

// snapshotMetadata reads, from a MESSAGES_SNAPSHOT's JSON (data) of n
// messages, each message's metadata and its tool calls' (toolCallId →
// metadata); nils when none.
func snapshotMetadata(data []byte, n int) (msgs []json.RawMessage, calls []map[string]json.RawMessage) {
	if !bytes.Contains(data, metadataKey) {
		return nil, nil
	}
	var w struct {
		Messages []struct {
			Metadata  json.RawMessage `json:"metadata"`
			ToolCalls []struct {
				ID       string          `json:"id"`
				Metadata json.RawMessage `json:"metadata"`
			} `json:"toolCalls"`
		} `json:"messages"`
	}
	if json.Unmarshal(data, &w) != nil || len(w.Messages) != n {
		return nil, nil
	}
	msgs, calls = make([]json.RawMessage, n), make([]map[string]json.RawMessage, n)
	for i, m := range w.Messages {
		if firstNonSpace(m.Metadata) == '{' {
			msgs[i] = compactJSON(m.Metadata)
		}
		for _, c := range m.ToolCalls {
			if firstNonSpace(c.Metadata) == '{' {
				calls[i] = setKey(calls[i], c.ID, compactJSON(c.Metadata))
			}
		}
	}
	return msgs, calls
}
