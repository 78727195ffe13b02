package aap2agui

import (
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"

	"github.com/aapagui/aapagui/translate"
)

// The session's activity messages as a run changes them
// (translate.Activities): an ACTIVITY_SNAPSHOT makes or replaces one, at
// its place after what the history holds then; an ACTIVITY_DELTA patches
// one; a MESSAGES_SNAPSHOT's activity messages are all of them. They are
// stored with the session when the run is (prepareStore) and given back
// in the agent's later runs (runInput) and, under the AG-UI extension, in
// GET /sessions/:id.

// activities are the session's activity messages, read from the session
// the first time the run changes them.
func (r *observer) activities() *translate.Activities {
	if r.acts == nil {
		acts, err := translate.ParseActivities(r.sess.Activities)
		if err != nil {
			r.log.Warn().Err(err).Str("session", r.sess.ID).Msg("the session's activity messages could not be read; the run starts them anew")
			acts = &translate.Activities{}
		}
		r.acts = acts
	}
	return r.acts
}

// snapshotActivity takes an ACTIVITY_SNAPSHOT (data: its JSON); false for
// one that is not what AG-UI says (no id, content not an object), which
// changes nothing.
func (r *observer) snapshotActivity(e *events.ActivitySnapshotEvent, data []byte) bool {
	content, err := member(data, "content", e.Content)
	if err == nil {
		replace := e.Replace == nil || *e.Replace
		err = r.activities().Snapshot(e.MessageID, e.ActivityType, content, replace, r.history.baseLen+r.tr.MessageCount())
	}
	if err != nil {
		r.log.Warn().Err(err).Str("session", r.sess.ID).Str("message_id", e.MessageID).Msg("ACTIVITY_SNAPSHOT left out")
		return false
	}
	r.actsChanged = true
	return true
}

// applyActivityDelta takes an ACTIVITY_DELTA (data: its JSON); false for
// one that does not apply (an activity the session does not hold, a patch
// that fails), which changes nothing and is not passed on: the page's
// client would refuse it.
func (r *observer) applyActivityDelta(e *events.ActivityDeltaEvent, data []byte) bool {
	patch, err := member(data, "patch", e.Patch)
	if err == nil {
		err = r.activities().Delta(e.MessageID, patch)
	}
	if err != nil {
		r.log.Warn().Err(err).Str("session", r.sess.ID).Str("message_id", e.MessageID).Msg("ACTIVITY_DELTA could not be applied; left out")
		return false
	}
	r.actsChanged = true
	return true
}
