package aap2agui

import (
	"context"
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
	base, ok := r.base(ctx)
	if !ok {
		return
	}
	entries := append(append(base[:len(base):len(base)], r.entries...), store.Entry{Message: msg, AGUIID: id})
	if err := r.s.cfg.Store.ReplaceHistory(ctx, r.sess.ID, entries); err != nil {
		r.log.Error().Err(err).Str("session", r.sess.ID).Msg("storing a checkpoint of the streamed answer")
		return
	}
	r.draft, r.draftID = true, id
}

// base is the history before the run's own entries: read once, at the
// first checkpoint.
func (r *turnRun) base(ctx context.Context) ([]store.Entry, bool) {
	if r.baseHist != nil {
		return r.baseHist, true
	}
	hist, err := r.s.cfg.Store.History(ctx, r.sess.ID)
	if err != nil || len(hist) < len(r.entries) {
		r.log.Error().Err(err).Str("session", r.sess.ID).Msg("reading history for a checkpoint")
		return nil, false
	}
	r.baseHist = hist[: len(hist)-len(r.entries) : len(hist)-len(r.entries)]
	return r.baseHist, true
}

// replaceDraft stores the run's entries in place of a stored draft.
func (r *turnRun) replaceDraft(ctx context.Context) error {
	entries := append(r.baseHist[:len(r.baseHist):len(r.baseHist)], r.entries...)
	if err := r.s.cfg.Store.ReplaceHistory(ctx, r.sess.ID, entries); err != nil {
		return err
	}
	r.draft = false
	return nil
}

func newDraftID() string { return "msg-draft-" + time.Now().UTC().Format("150405.000000000") }
