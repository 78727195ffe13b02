package translate

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/aapagui/aapagui/aap"
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
	var d metaDoc
	d.merge(old)
	d.merge(add)
	if d.keys == nil {
		return old
	}
	return d.JSON()
}

// metaDoc is metadata being merged, kept by key, so that a merge costs
// what it adds: merging into the whole object written out each time
// would cost a message's metadata again for each of its events.
type metaDoc struct {
	keys []string
	vals []json.RawMessage
	at   map[string]int
}

// merge sets add's members (a JSON object; anything else is left out)
// over d's.
func (d *metaDoc) merge(add json.RawMessage) {
	if len(add) == 0 || firstNonSpace(add) != '{' {
		return
	}
	keys, vals, ok := members(add)
	if !ok {
		return
	}
	if d.at == nil {
		d.at = make(map[string]int, len(keys))
	}
	for i, k := range keys {
		if j, seen := d.at[k]; seen {
			d.vals[j] = vals[i]
			continue
		}
		d.at[k] = len(d.keys)
		d.keys, d.vals = append(d.keys, k), append(d.vals, vals[i])
	}
	if d.keys == nil {
		d.keys = []string{} // an empty object is one
	}
}

// JSON is d as a compact object; nil for a d that holds none (nil d
// too).
func (d *metaDoc) JSON() json.RawMessage {
	if d == nil || d.keys == nil {
		return nil
	}
	b := []byte{'{'}
	for i, k := range d.keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonenc.AppendString(b, k)
		b = append(b, ':')
		b = append(b, compactJSON(d.vals[i])...)
	}
	return append(b, '}')
}

// mergeAt merges add into m's doc of key, made when it is the first.
func mergeAt(m map[string]*metaDoc, key string, add json.RawMessage) map[string]*metaDoc {
	if m == nil {
		m = map[string]*metaDoc{}
	}
	d := m[key]
	if d == nil {
		d = &metaDoc{}
		m[key] = d
	}
	d.merge(add)
	return m
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

// compactJSON is raw, valid JSON (decoded already), without its
// whitespace (appendCompact).
func compactJSON(raw json.RawMessage) json.RawMessage {
	return appendCompact(make([]byte, 0, len(raw)), raw)
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
	msgs  map[string]*metaDoc
	calls map[string]*metaDoc
}

// eventMeta is what an event says in metadata and what it builds: the
// text message or the tool message of id msg, or the tool call of id call
// (a tool result names both); meta is nil when it says nothing.
type eventMeta struct {
	msg, call string
	meta      json.RawMessage
}

// metadataOf is the metadata of ev (data: its JSON, nil for a plain
// event) and what it builds, read once for all that uses it.
func metadataOf(ev events.Event, data []byte) eventMeta {
	meta := eventMetadata(data)
	if meta == nil {
		return eventMeta{}
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
		msg, call = e.MessageID, e.ToolCallID
	case *agui.ToolCallResultPartsEvent:
		msg, call = e.MessageID, e.ToolCallID
	default:
		return eventMeta{}
	}
	return eventMeta{msg: msg, call: call, meta: meta}
}

// note merges what an event says in metadata into what it builds: a
// tool result's into its tool message.
func (m *runMetadata) note(em eventMeta) {
	switch {
	case em.msg != "":
		m.msgs = mergeAt(m.msgs, em.msg, em.meta)
	case em.call != "":
		m.calls = mergeAt(m.calls, em.call, em.meta)
	}
}

// noteMetadata is runMetadata.note, made with the run's first event that
// holds metadata: a run without any (most) holds none.
func (t *AGUIToAAP) noteMetadata(em eventMeta) {
	if em.meta == nil {
		return
	}
	if t.meta == nil {
		t.meta = &runMetadata{}
	}
	t.meta.note(em)
}

// add adds to v the metadata the run's events gave the message of id and
// the tool calls named (calls).
func (m *runMetadata) add(v *EncryptedValues, id string, calls []string) {
	if m == nil {
		return
	}
	if id != "" {
		if d, ok := m.msgs[id]; ok {
			v.Metadata = MergeMetadata(v.Metadata, d.JSON())
		}
	}
	for _, c := range calls {
		if d, ok := m.calls[c]; ok {
			v.ToolCallMetadata = setKey(v.ToolCallMetadata, c, MergeMetadata(v.ToolCallMetadata[c], d.JSON()))
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

// MetadataNote is the name of the CUSTOM event by which the AG-UI
// extension of AAP carries metadata to a page (aap2agui's AGUIToAAP with
// PreviewCalls, to agui2aap's AAPToAGUI): what an agent's event said in
// metadata of the text message, tool call or tool result it builds,
// which agui2aap sets on that message's, call's or result's event of its
// own. It is the extension's, never an agent's: an agent's CUSTOM of this
// name is not carried (CarriedEvent).
const MetadataNote = "agui/1.metadata"

// The kinds of what a MetadataNote's metadata belongs to.
const (
	noteMessage    = "message"    // the text message being streamed (or the next)
	noteToolCall   = "toolCall"   // the tool call id
	noteToolResult = "toolResult" // the result of the tool call id
)

// metadataNote is a MetadataNote's value.
type metadataNote struct {
	Of       string          `json:"of"`
	ID       string          `json:"id"`
	Metadata json.RawMessage `json:"metadata"`
}

// noteFor is the agui event of the MetadataNote of what an event says in
// metadata (em.meta not nil).
func noteFor(em eventMeta) *aap.AGUIEvent {
	msg, call, meta := em.msg, em.call, em.meta
	n := metadataNote{Of: noteMessage, ID: msg, Metadata: meta}
	switch {
	case msg != "" && call != "":
		n.Of, n.ID = noteToolResult, call
	case call != "":
		n.Of, n.ID = noteToolCall, call
	}
	b, err := json.Marshal(struct {
		Type  events.EventType `json:"type"`
		Name  string           `json:"name"`
		Value metadataNote     `json:"value"`
	}{events.EventTypeCustom, MetadataNote, n})
	if err != nil {
		return nil
	}
	return &aap.AGUIEvent{Data: b}
}

// withNote puts the MetadataNote of what an event said in metadata (em)
// first in out (after a turn's start), so that agui2aap has it before
// what it makes of the event; out is returned as it is when the run sends
// no previews (not a client granted the extension, or not delta mode) or
// the event said nothing.
func (t *AGUIToAAP) withNote(out []aap.Event, em eventMeta) []aap.Event {
	if !t.previews || t.mode != aap.StreamDelta || em.meta == nil {
		return out
	}
	note := noteFor(em)
	if note == nil {
		return out
	}
	at := 0
	if len(out) > 0 {
		if _, ok := out[0].(*aap.TurnStart); ok {
			at = 1
		}
	}
	out = slices.Insert(out, at, aap.Event(note))
	t.out = out
	return out
}

// pageMetadata is what MetadataNotes gave agui2aap's run, waiting for the
// event it goes on.
type pageMetadata struct {
	text    *metaDoc            // the open text message's (or the next one's)
	calls   map[string]*metaDoc // by toolCallId, for the call's TOOL_CALL_END
	results map[string]*metaDoc // by toolCallId, for its TOOL_CALL_RESULT
}

// takeNote takes a MetadataNote's value (raw).
func (t *AAPToAGUI) takeNote(raw json.RawMessage) error {
	var n metadataNote
	if err := json.Unmarshal(raw, &n); err != nil || firstNonSpace(n.Metadata) != '{' {
		return &StreamError{Event: string(aap.EventAGUI), Reason: MetadataNote + ": needs an object value with of, id and an object metadata"}
	}
	p := &t.meta
	switch n.Of {
	case noteMessage:
		if p.text == nil {
			p.text = &metaDoc{}
		}
		p.text.merge(n.Metadata)
	case noteToolCall:
		p.calls = mergeAt(p.calls, n.ID, n.Metadata)
	case noteToolResult:
		p.results = mergeAt(p.results, n.ID, n.Metadata)
	default:
		return &StreamError{Event: string(aap.EventAGUI), Reason: MetadataNote + ": of must be message, toolCall or toolResult"}
	}
	return nil
}

// withMetadata is ev with metadata (nil: ev itself), written as its JSON
// (agui.PassOn: the SDK's events have no field for it).
func withMetadata(ev events.Event, meta json.RawMessage) events.Event {
	if meta == nil {
		return ev
	}
	data, err := json.Marshal(ev)
	if err != nil || len(data) < 2 {
		return ev
	}
	data = append(append(append(data[:len(data)-1:len(data)-1], `,"metadata":`...), meta...), '}')
	return agui.PassOn(ev.Type(), data)
}

// takeMetadata is the metadata waiting in m under key, taken.
func takeMetadata(m map[string]*metaDoc, key string) json.RawMessage {
	d, ok := m[key]
	if !ok {
		return nil
	}
	delete(m, key)
	return d.JSON()
}

// HistoryMetadata is the metadata of one history message and its tool
// calls, at its place in the history.
type HistoryMetadata struct {
	At        int                        `json:"at"`
	Metadata  json.RawMessage            `json:"metadata,omitempty"`
	ToolCalls map[string]json.RawMessage `json:"toolCalls,omitempty"`
}

// HistoryMetadataOf gives, of the extras of a history's entries
// (store.Entry.AGUI, in order), the metadata each holds, as JSON; nil
// when none does.
func HistoryMetadataOf(extras []json.RawMessage) json.RawMessage {
	var list []HistoryMetadata
	for i, raw := range extras {
		v := ParseEncryptedValues(raw)
		if v == nil || len(v.Metadata)+len(v.ToolCallMetadata) == 0 {
			continue
		}
		list = append(list, HistoryMetadata{At: i, Metadata: v.Metadata, ToolCalls: v.ToolCallMetadata})
	}
	if list == nil {
		return nil
	}
	b, err := json.Marshal(list)
	if err != nil {
		return nil
	}
	return b
}

// WithMetadata is the extras raw (EncryptedValues JSON, nil for none)
// with m's metadata set over them: a client's message's, as it sent it.
func WithMetadata(raw json.RawMessage, m HistoryMetadata) json.RawMessage {
	v := ParseEncryptedValues(raw)
	if v == nil {
		v = &EncryptedValues{}
	}
	if m.Metadata != nil {
		v.Metadata = compactJSON(m.Metadata)
	}
	for id, meta := range m.ToolCalls {
		v.ToolCallMetadata = setKey(v.ToolCallMetadata, id, compactJSON(meta))
	}
	return v.JSON()
}

// ParseHistoryMetadata reads a list of HistoryMetadata (the "agui"
// member's metadata); nil for none.
func ParseHistoryMetadata(raw json.RawMessage) ([]HistoryMetadata, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var list []HistoryMetadata
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, err
	}
	return list, nil
}

// PageMetadata reads, from a RunAgentInput's JSON (body), the metadata of
// its messages (by id) and their tool calls (by toolCallId): what the
// AG-UI SDK's types have no field for. Empty when none has any.
func PageMetadata(body []byte) agui.Metadata {
	var out agui.Metadata
	if !bytes.Contains(body, metadataKey) {
		return out
	}
	var w struct {
		Messages []struct {
			ID        string          `json:"id"`
			Metadata  json.RawMessage `json:"metadata"`
			ToolCalls []struct {
				ID       string          `json:"id"`
				Metadata json.RawMessage `json:"metadata"`
			} `json:"toolCalls"`
		} `json:"messages"`
	}
	if json.Unmarshal(body, &w) != nil {
		return out
	}
	for _, m := range w.Messages {
		if firstNonSpace(m.Metadata) == '{' && m.ID != "" {
			out.Messages = setKey(out.Messages, m.ID, compactJSON(m.Metadata))
		}
		for _, c := range m.ToolCalls {
			if firstNonSpace(c.Metadata) == '{' && c.ID != "" {
				out.ToolCalls = setKey(out.ToolCalls, c.ID, compactJSON(c.Metadata))
			}
		}
	}
	return out
}

// RequestMetadata is the metadata of an AAP request's messages (msgs,
// made of the last of the page's messages page, in order: what is new of
// them) that page's metadata (meta: PageMetadata) gives, as the "agui"
// member's list, split at seed: the metadata of msgs[:seed] (a new
// session's seed), then of the rest, each placed in its own part; nils
// when none. The messages are matched from the end:
// each AAP message to the last page message before the previous match it
// can have been made of (a user message to a user message, a tool result
// to the tool message of its call, and so on); a permission is made of
// none.
func RequestMetadata(msgs []aap.Message, seed int, page []types.Message, meta agui.Metadata) (ofSeed, ofRest json.RawMessage) {
	if len(meta.Messages)+len(meta.ToolCalls) == 0 {
		return nil, nil
	}
	list := make([]HistoryMetadata, 0, len(msgs))
	before := len(page)
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		hm := HistoryMetadata{At: i}
		switch j := sourceOf(m, page, before); {
		case j >= 0:
			before = j
			hm.Metadata = meta.Messages[page[j].ID]
		case j == noSource:
			before = 0 // no page message left it can be made of: the scan is not made again
		}
		for _, id := range toolUseIDs(m) {
			if c, ok := meta.ToolCalls[id]; ok {
				hm.ToolCalls = setKey(hm.ToolCalls, id, c)
			}
		}
		if hm.Metadata != nil || hm.ToolCalls != nil {
			list = append(list, hm)
		}
	}
	slices.Reverse(list)
	cut := 0
	for cut < len(list) && list[cut].At < seed {
		cut++
	}
	rest := list[cut:]
	for i := range rest {
		rest[i].At -= seed
	}
	return metadataJSON(list[:cut]), metadataJSON(rest)
}

// metadataJSON is list as JSON; nil for an empty one.
func metadataJSON(list []HistoryMetadata) json.RawMessage {
	if len(list) == 0 {
		return nil
	}
	b, err := json.Marshal(list)
	if err != nil {
		return nil
	}
	return b
}

// noSource is sourceOf's for a message no page message before before
// can have made; -1 is its for a message made of none (a permission).
const noSource = -2

// sourceOf is the index of the last page message before before that m
// can have been made of; noSource for none, -1 for a message of a kind no
// page message makes.
func sourceOf(m aap.Message, page []types.Message, before int) int {
	var role types.Role
	call := ""
	switch m := m.(type) {
	case *aap.UserMessage:
		role = types.RoleUser
	case *aap.AssistantMessage:
		role = types.RoleAssistant
	case *aap.SystemMessage:
		role = types.RoleSystem
	case *aap.ToolMessage:
		role, call = types.RoleTool, m.ToolCallID
	default:
		return -1
	}
	for j := before - 1; j >= 0; j-- {
		p := &page[j]
		if p.Role == role && (call == "" || p.ToolCallID == call) || role == types.RoleSystem && p.Role == types.RoleDeveloper {
			return j
		}
	}
	return noSource
}
