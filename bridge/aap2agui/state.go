package aap2agui

import (
	"bytes"
	"encoding/json"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"

	"github.com/aapagui/aapagui/internal/jsonpatch"
	"github.com/aapagui/aapagui/internal/sse"
)

// The session's AG-UI state as a run changes it: a STATE_SNAPSHOT sets
// it as the agent wrote it; the STATE_DELTAs after it are applied to it
// decoded, kept so for the run's next ones, and it is written once, when
// the run is stored (stateJSON). Each delta then costs what it touches,
// not the state again: 2,000 deltas of one key each were 97 times the
// CPU of 200, each decoding and writing the whole state.

// maxStateCopies bounds what the "copy" operations of a run's
// STATE_DELTAs may add to the state: the most one upstream event may
// carry, which no STATE_SNAPSHOT passes either. Without it a few copies
// of the whole state into itself, each doubling it, would fill the
// memory.
const maxStateCopies = sse.DefaultMaxEventSize

// patchedState is the state decoded for the run's STATE_DELTAs, or why it
// could not be (every delta then fails with it).
type patchedState struct {
	doc *jsonpatch.Doc
	err error
}

// snapshotState makes a STATE_SNAPSHOT's snapshot the state, as the
// event's JSON (data) holds it: its keys in their order, its numbers as
// written.
func (r *observer) snapshotState(e *events.StateSnapshotEvent, data []byte) {
	raw, err := member(data, "snapshot", e.Snapshot)
	var b bytes.Buffer
	if err == nil {
		err = json.Compact(&b, raw)
	}
	if err != nil {
		r.log.Warn().Err(err).Msg("STATE_SNAPSHOT")
		return
	}
	var out bytes.Buffer
	json.HTMLEscape(&out, b.Bytes()) // as encoding/json writes it, and the state always was
	r.state, r.stateChanged, r.patched = out.Bytes(), true, nil
}

// member is the member name of the event's JSON data, or, where data
// holds none (an event made in a test), decoded, encoded again.
func member(data []byte, name string, decoded any) (json.RawMessage, error) {
	if len(data) > 0 {
		var members map[string]json.RawMessage
		if err := json.Unmarshal(data, &members); err != nil {
			return nil, err
		}
		if raw, ok := members[name]; ok {
			return raw, nil
		}
	}
	return json.Marshal(decoded)
}

// applyDelta applies a STATE_DELTA's JSON Patch, as the event's JSON
// (data) holds it, to the state; a patch that does not apply changes
// nothing.
func (r *observer) applyDelta(e *events.StateDeltaEvent, data []byte) {
	ops, err := member(data, "delta", e.Delta)
	if err == nil && r.patched == nil {
		doc := r.state
		if len(doc) == 0 {
			doc = json.RawMessage(`{}`)
		}
		r.patched = &patchedState{}
		r.patched.doc, r.patched.err = jsonpatch.Parse(doc, maxStateCopies)
	}
	if err == nil {
		if err = r.patched.err; err == nil {
			err = r.patched.doc.Apply(ops)
		}
	}
	if err != nil {
		r.log.Warn().Err(err).Msg("STATE_DELTA could not be applied; state unchanged")
		return
	}
	r.stateChanged = true
}

// stateJSON is the state as the run leaves it.
func (r *observer) stateJSON() json.RawMessage {
	if r.patched != nil && r.patched.doc != nil {
		r.state = r.patched.doc.AppendJSON(nil)
		r.patched = nil
	}
	return r.state
}
