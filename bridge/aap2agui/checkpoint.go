package aap2agui

import (
	"context"
	"fmt"
	"time"

	"github.com/aapagui/aapagui/store"
)

// checkpoint stores the message the agent is still streaming, at most once
// per CheckpointInterval, so that a crash of the bridge mid-answer loses
// at most that interval of text. The draft is stored as the last history
// entry and replaced by the next save of the run (a later draft, settled
// messages, or the end of the turn). Not after a MESSAGES_SNAPSHOT, whose
// history the run no longer extends entry by entry.
func (r *turnRun) checkpoint(ctx context.Context) {
	every := r.s.cfg.CheckpointInterval
	if every < 0 || r.replaced {
		return
	}
	now := time.Now()
	if r.lastCheckpoint.IsZero() {
		r.lastCheckpoint = now // the first draft waits one interval
		return
	}
	if now.Sub(r.lastCheckpoint) < every {
		return
	}
	r.lastCheckpoint = now
	msg, id, ok := r.tr.Draft()
	if !ok {
		return
	}
	if id == "" {
		id = r.draftID
	}
	if id == "" {
		id = newDraftID()
	}
	base, err := r.base(ctx)
	if err != nil {
		r.log.Error().Err(err).Str("session", r.sess.ID).Msg("reading history for a checkpoint")
		return
	}
	entries := append(append(base[:len(base):len(base)], r.entries...), store.Entry{Message: msg, AGUIID: id})
	r.draftID = id
	if err := r.s.cfg.Store.ReplaceHistory(ctx, r.sess.ID, entries); err != nil {
		// It may have been stored all the same: the turn's end takes the
		// draft out, as for a stored one.
		r.draft = true
		r.log.Error().Err(err).Str("session", r.sess.ID).Msg("storing a checkpoint of the streamed answer")
		return
	}
	r.draft = true
}

// base is the history before the run's own entries (its first baseLen
// entries: the run's writes only ever come after them, until a
// MESSAGES_SNAPSHOT, which becomes the base): read once, when first
// needed.
func (r *turnRun) base(ctx context.Context) ([]store.Entry, error) {
	if r.baseHist != nil {
		return r.baseHist, nil
	}
	hist, err := r.s.cfg.Store.History(ctx, r.sess.ID)
	if err != nil {
		return nil, err
	}
	if len(hist) < r.baseLen {
		return nil, fmt.Errorf("the history has %d entries, fewer than the %d the turn began with", len(hist), r.baseLen)
	}
	r.baseHist = hist[:r.baseLen:r.baseLen]
	return r.baseHist, nil
}

// replaceDraft stores the run's entries in place of a stored draft.
func (r *turnRun) replaceDraft(ctx context.Context) error {
	base, err := r.base(ctx)
	if err != nil {
		return err
	}
	entries := append(base[:len(base):len(base)], r.entries...)
	if err := r.s.cfg.Store.ReplaceHistory(ctx, r.sess.ID, entries); err != nil {
		return err
	}
	r.draft = false
	return nil
}

func newDraftID() string { return "msg-draft-" + time.Now().UTC().Format("150405.000000000") }
