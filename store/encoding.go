package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/internal/jsonenc"
)

// The stored forms of sessions, history entries and threads: JSON text,
// the same in every store, so that a copy from one store to another moves
// it byte for byte. The drivers (store/sqlite, store/postgres) keep their
// rows in these forms; Memory keeps its values in them too, so that its
// callers never share memory with it.

// entryJSON is how an Entry is serialized.
type entryJSON struct {
	ID      string          `json:"id"`
	Message json.RawMessage `json:"message"`
	AGUI    json.RawMessage `json:"agui,omitempty"`
}

func decodeMessage(b []byte) (aap.Message, error) { return aap.DecodeMessage(b) }

// sessionJSON is how the mutable parts of a session are serialized.
type sessionJSON struct {
	Agent      aap.AgentConfig   `json:"agent"`
	Tools      []aap.ToolSpec    `json:"tools,omitzero"`
	State      json.RawMessage   `json:"state,omitempty"`
	Activities json.RawMessage   `json:"activities,omitempty"`
	Interrupts []types.Interrupt `json:"interrupts,omitempty"`
}

// EncodeSession is the stored form of s's mutable parts (Agent, Tools,
// State, Activities and Interrupts); the other fields are columns of their own.
func EncodeSession(s *Session) ([]byte, error) {
	return jsonenc.Marshal(sessionJSON{Agent: s.Agent, Tools: s.Tools, State: s.State, Activities: s.Activities, Interrupts: s.Interrupts})
}

// DecodeSession sets into's mutable parts from their stored form b.
func DecodeSession(into *Session, b []byte) error {
	var j sessionJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return fmt.Errorf("store: session %s: %w", into.ID, err)
	}
	into.Agent, into.Tools, into.State, into.Activities, into.Interrupts = j.Agent, j.Tools, j.State, j.Activities, j.Interrupts
	return nil
}

// EncodeSessionEntries is EncodeSession of s and EncodeEntries of
// entries: what a driver writes when it creates a session with its seed
// or saves one with the entries it appends.
func EncodeSessionEntries(s *Session, entries []Entry) (data []byte, rows [][]byte, err error) {
	if data, err = EncodeSession(s); err != nil {
		return nil, nil, err
	}
	if rows, err = EncodeEntries(entries); err != nil {
		return nil, nil, err
	}
	return data, rows, nil
}

// copySession deep-copies a session through its serialized form.
func copySession(s *Session) (*Session, error) {
	b, err := EncodeSession(s)
	if err != nil {
		return nil, err
	}
	c := &Session{ID: s.ID, Owner: s.Owner, CreatedAt: s.CreatedAt, Seq: s.Seq}
	return c, DecodeSession(c, b)
}

// EncodeEntries is the stored form of each entry, one row each. An entry
// without a message is an error.
func EncodeEntries(entries []Entry) ([][]byte, error) {
	out := make([][]byte, len(entries))
	for i, e := range entries {
		// A nil message would be stored as null and make the whole
		// history unreadable.
		if v := reflect.ValueOf(e.Message); !v.IsValid() || v.Kind() == reflect.Pointer && v.IsNil() {
			return nil, fmt.Errorf("store: history entry %d: no message", i)
		}
		row, err := appendEntry(make([]byte, 0, entrySize(e)), e)
		if err != nil {
			return nil, fmt.Errorf("store: history entry %d: %w", i, err)
		}
		out[i] = MarkRow(row)
	}
	return out, nil
}

// appendEntry appends e's row to dst: what jsonenc.Marshal writes of its
// entryJSON, in one pass over the message (encoding/json would check and
// copy what the message's encoder wrote twice, the message and then the
// entry around it: three passes over a long answer, at each checkpoint).
func appendEntry(dst []byte, e Entry) ([]byte, error) {
	dst = append(dst, `{"id":`...)
	dst = jsonenc.AppendString(dst, e.AGUIID)
	dst = append(dst, `,"message":`...)
	dst, err := aap.AppendMessage(dst, e.Message)
	if err != nil {
		return nil, err
	}
	if len(e.AGUI) > 0 {
		// As encoding/json writes a json.RawMessage: checked and compacted.
		b := bytes.NewBuffer(append(dst, `,"agui":`...))
		if err := json.Compact(b, e.AGUI); err != nil {
			return nil, fmt.Errorf("agui: %w", err)
		}
		dst = b.Bytes()
	}
	return append(dst, '}'), nil
}

// entrySize is about the size of e's row: its text and what surrounds it,
// so that a long message's row is written into a buffer of its size, not
// one grown and copied on the way.
func entrySize(e Entry) int {
	size, blocks := aap.MessageSize(e.Message)
	n := 64 + len(e.AGUIID) + len(e.AGUI) + size + 32*blocks
	return n + n/64 // a few escapes
}

// DecodeEntries reads entries from their stored form, one row each.
func DecodeEntries(rows [][]byte) ([]Entry, error) {
	out := make([]Entry, len(rows))
	for i, row := range rows {
		if e, ok := decodeTextEntry(row); ok {
			out[i] = e
			continue
		}
		var e entryJSON
		if err := json.Unmarshal(row, &e); err != nil {
			return nil, fmt.Errorf("store: history entry %d: %w", i, err)
		}
		m, err := decodeMessage(e.Message)
		if err != nil {
			return nil, fmt.Errorf("store: history entry %d: %w", i, err)
		}
		out[i] = Entry{Message: m, AGUIID: e.ID, AGUI: e.AGUI}
	}
	return out, nil
}

// decodeTextEntry decodes, without the general decoder, the row of the
// commonest entry, a user's or the assistant's text as EncodeEntries
// writes it: {"id":"…","message":{"role":"user","content":"…"}}, each
// string free of escapes and control characters and valid UTF-8, which
// then means what its bytes say. ok is false for any other row, which the
// general decoder reads (the general decoder scans a message's text three
// times: the entry, the message, the content; this is one pass, with the
// standard library's vectorised searches).
func decodeTextEntry(row []byte) (e Entry, ok bool) {
	rest, ok := bytes.CutPrefix(row, []byte(`{"id":"`))
	if !ok {
		return e, false
	}
	id, rest, ok := jsonenc.CutPlain(rest)
	if !ok {
		return e, false
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"message":{"role":"`)); !ok {
		return e, false
	}
	role, rest, ok := jsonenc.CutPlain(rest)
	if !ok || (role != string(aap.RoleUser) && role != string(aap.RoleAssistant)) {
		return e, false
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"content":"`)); !ok {
		return e, false
	}
	text, rest, ok := jsonenc.CutPlain(rest)
	if !ok || string(rest) != "}}" {
		return e, false
	}
	e.AGUIID = id
	if role == string(aap.RoleUser) {
		e.Message = &aap.UserMessage{Content: aap.TextContent(text)}
	} else {
		e.Message = &aap.AssistantMessage{Content: aap.TextContent(text)}
	}
	return e, true
}

// threadJSON is how a thread is serialized.
type threadJSON struct {
	Agent         string            `json:"agent"`
	SessionID     string            `json:"sessionId"`
	Delivered     json.RawMessage   `json:"delivered,omitempty"` // an array of the ids, or deliveredApart
	ToolsDigest   string            `json:"toolsDigest,omitempty"`
	ContextDigest string            `json:"contextDigest,omitempty"`
	ClientCalls   []string          `json:"clientCalls,omitempty"`
	Interrupts    []types.Interrupt `json:"interrupts,omitempty"`
	RunID         string            `json:"runId,omitempty"`
	Title         string            `json:"title,omitempty"`
	CreatedAt     *time.Time        `json:"createdAt,omitempty"`
}

// EncodeThread is the stored form of t (all but Owner, ID and UpdatedAt,
// which are columns of their own). A zero CreatedAt is set to now.
func EncodeThread(t *Thread) ([]byte, error) {
	var ids json.RawMessage
	if len(t.Delivered) > 0 {
		var err error
		if ids, err = jsonenc.Marshal(t.Delivered); err != nil {
			return nil, err
		}
	}
	return encodeThread(t, ids)
}

// EncodeThreadApart is EncodeThread without the delivered ids, for a
// store that keeps them in rows of their own, written a run's at a time
// (Thread.DeliveredFrom); DecodeThread reads it as a thread without ids.
func EncodeThreadApart(t *Thread) ([]byte, error) { return encodeThread(t, deliveredApart) }

// deliveredApart stands for the ids of a thread whose store keeps them in
// rows of their own (EncodeThreadApart): a string where an earlier build,
// which knows only the array, refuses the thread rather than take it for
// one without ids.
var deliveredApart = json.RawMessage(`"apart"`)

func encodeThread(t *Thread, delivered json.RawMessage) ([]byte, error) {
	j := threadJSON{Agent: t.Agent, SessionID: t.SessionID, Delivered: delivered, ToolsDigest: t.ToolsDigest,
		ContextDigest: t.ContextDigest, ClientCalls: t.ClientCalls, Interrupts: t.Interrupts, RunID: t.RunID, Title: t.Title}
	if t.CreatedAt.IsZero() {
		t.CreatedAt = time.Now().UTC().Truncate(time.Millisecond)
	}
	created := t.CreatedAt.UTC()
	j.CreatedAt = &created
	return jsonenc.Marshal(j)
}

// DecodeThread reads owner's thread id, last active at updated, from its
// stored form b.
func DecodeThread(owner, id string, updated time.Time, b []byte) (*Thread, error) {
	var j threadJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return nil, err
	}
	t := &Thread{Owner: owner, ID: id, Agent: j.Agent, SessionID: j.SessionID,
		ToolsDigest: j.ToolsDigest, ContextDigest: j.ContextDigest, ClientCalls: j.ClientCalls,
		Interrupts: j.Interrupts, RunID: j.RunID, Title: j.Title, UpdatedAt: updated, CreatedAt: updated}
	if len(j.Delivered) > 0 && !bytes.Equal(j.Delivered, deliveredApart) {
		if err := json.Unmarshal(j.Delivered, &t.Delivered); err != nil {
			return nil, err
		}
	}
	if j.CreatedAt != nil {
		t.CreatedAt = j.CreatedAt.UTC()
	}
	return t, nil
}
