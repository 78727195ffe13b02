package agui2aap

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/rs/zerolog"

	"github.com/aapagui/aapagui/bridge/internal/turns"
	"github.com/aapagui/aapagui/internal/jsonenc"
	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/translate"
)

// agui2aap's own record of a thread's conversation (store.RecordTail):
// the AG-UI message of each id the thread counts as delivered, one for
// one and in the same order, written with the thread's save. A hydration
// answers from it when the AAP server no longer has the session (it
// expired, or restarted without a store). A run adds what it delivered
// and produced; a thread moved to a new session rewrites the record from
// where the two part.

// recordable is one of the client's messages copied for the record: its id
// and its JSON (recordJSON; nil when it could not be written), not the
// message, whose content may be a piece of the request's body and would
// keep the body, with every message and tool schema in it, for as long
// as the run streams.
type recordable struct {
	id   string
	json []byte
}

// copyForRecord copies, of the client's messages, those the save will add
// to the record: the ones this run delivers, and those delivered before
// that the record lacks (a thread saved before threads had records),
// each written as the record stores it (recordJSON). Called before the
// run lets go of the client's messages (dropConversation).
func (r *runner) copyForRecord() {
	need := make(map[string]bool, len(r.p.Delivered))
	for _, id := range r.p.Delivered {
		need[id] = true
	}
	if r.th.RecordLen < len(r.th.Delivered) {
		for _, id := range r.th.Delivered[r.th.RecordLen:] {
			need[id] = true
		}
	}
	for i := range r.in.Messages {
		m := &r.in.Messages[i]
		if !need[m.ID] {
			continue
		}
		r.recordable = append(r.recordable, recordable{id: m.ID, json: r.messageJSON(m)})
	}
}

// messageJSON is recordJSON(m), or nil, said in the log, when m could not
// be written.
func (r *runner) messageJSON(m *types.Message) []byte {
	data, err := recordJSON(m)
	if err != nil {
		r.log.Warn().Err(err).Str("thread", r.th.ID).Msg("a message could not be added to the thread's record")
	}
	return data
}

// runInputJSON is the run's input for its log (runInput): from, and the
// recordable messages; false when one of them could not be written.
func runInputJSON(from int, msgs []recordable) ([]byte, bool) {
	in := struct {
		From     int               `json:"from"`
		Messages []json.RawMessage `json:"messages"`
	}{From: from, Messages: make([]json.RawMessage, len(msgs))}
	for i, m := range msgs {
		if m.json == nil {
			return nil, false
		}
		in.Messages[i] = m.json
	}
	data, err := json.Marshal(in)
	return data, err == nil
}

// recordTail is what the save writes of the record: the messages of the
// delivered ids from the first the record lacks (before, the ids
// delivered before this run, of which the record holds the first
// RecordLen). produced are the run's own messages. It stops at an id it
// has no message for: the record is then shorter than the ids, and a
// later run starts again from there.
func (r *runner) recordTail(before int, produced []types.Message) *store.RecordTail {
	from := min(before, r.th.RecordLen)
	copied := make(map[string][]byte, len(r.recordable))
	for _, m := range r.recordable {
		copied[m.id] = m.json
	}
	own := make(map[string]*types.Message, len(produced))
	for i := range produced {
		own[produced[i].ID] = &produced[i]
	}
	tail := &store.RecordTail{From: from}
	for _, id := range r.th.Delivered[from:] {
		data := copied[id]
		if m, ok := own[id]; ok {
			data = r.messageJSON(m)
		}
		if data == nil {
			break // no message, or one that could not be written (and was said so)
		}
		tail.Messages = append(tail.Messages, data)
	}
	return tail
}

// recordOf is a whole record of msgs (reasoning and activity messages
// aside, as the delivered ids are): a hydration that renumbered the
// thread's ids rewrites it, so that the record stays one message per
// delivered id.
func recordOf(msgs []types.Message, log *zerolog.Logger) *store.RecordTail {
	tail := &store.RecordTail{Messages: make([]json.RawMessage, 0, len(msgs))}
	for i := range msgs {
		if msgs[i].Role == types.RoleReasoning || msgs[i].Role == types.RoleActivity {
			continue // (as deliveredIDs: the session keeps its activity messages)
		}
		data, err := recordJSON(&msgs[i])
		if err != nil {
			log.Warn().Err(err).Msg("a message could not be added to the thread's record")
			break
		}
		tail.Messages = append(tail.Messages, data)
	}
	return tail
}

// recordJSON is a message as the record keeps it, json.Marshal's bytes.
// A message of text whose strings json.Marshal writes as they are (most
// of them: no escape, no HTML character) is written into one buffer of
// its size: a long answer is copied once, not built in the encoder's
// buffer and copied out of it.
func recordJSON(m *types.Message) ([]byte, error) {
	text, isText := m.Content.(string)
	fields := [...]struct{ key, value string }{
		{`{"id":"`, m.ID}, {`","role":"`, string(m.Role)}, {`","content":"`, text},
		{`","name":"`, m.Name}, {`","encryptedContent":"`, m.EncryptedContent}, {`","encryptedValue":"`, m.EncryptedValue},
		{`","toolCallId":"`, m.ToolCallID}, {`","error":"`, m.Error}, {`","activityType":"`, m.ActivityType},
	}
	size := 2
	for _, f := range fields {
		if !verbatim(f.value) {
			return json.Marshal(m)
		}
		size += len(f.key) + len(f.value)
	}
	if !isText && m.Content != nil || len(m.ToolCalls) > 0 {
		return json.Marshal(m)
	}
	b := make([]byte, 0, size)
	for i, f := range fields {
		// id and role always; content when there is one (an empty
		// string included); the rest when not empty (omitempty).
		if i < 2 || i == 2 && isText || i > 2 && f.value != "" {
			b = append(append(b, f.key...), f.value...)
		}
	}
	return append(b, `"}`...), nil
}

// verbatim reports whether json.Marshal writes s inside its quotes as it
// is: a plain JSON string (jsonenc.Plain) without the HTML characters it
// escapes ('<', '>', '&').
func verbatim(s string) bool { return !strings.ContainsAny(s, "<>&") && jsonenc.PlainString(s) }

// spill is the translator's TextSpill of the run: the parts of its long
// texts written to its thread's record (AddRecordPart). None with
// SnapshotAfterRuns, whose MESSAGES_SNAPSHOT sends the texts whole.
func (r *runner) spill(ctx context.Context) translate.TextSpill {
	if r.env.cfg.SnapshotAfterRuns {
		return nil
	}
	owner, id := r.th.Owner, r.th.ID
	return turns.SpillTo(ctx, r.log, "thread", id, func(ctx context.Context, p store.TextPart) error {
		return r.env.cfg.Store.AddRecordPart(ctx, owner, id, p)
	})
}
