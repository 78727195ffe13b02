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
//
// With more turns streaming than Config.MaxCheckpoints, the interval
// grows so that all of them together stay under that many a second.
//
// A checkpoint rewrites only the run's own entries and the draft
// (Store.ReplaceTail), and only when the draft has changed; once the draft
// is past checkpointSmall, only when it has grown by half since the last:
// over a whole message, checkpoints write a few times its size at most,
// however long it is, and a stream that makes no progress writes nothing.
func (r *turnRun) checkpoint(ctx context.Context) {
	every := r.s.cfg.CheckpointInterval
	if every < 0 || r.replaced {
		return
	}
	if n := r.s.streaming.Load(); n > int64(r.s.cfg.MaxCheckpoints) && r.s.cfg.MaxCheckpoints > 0 {
		every = max(every, time.Duration(n)*time.Second/time.Duration(r.s.cfg.MaxCheckpoints))
	}
	now := r.s.cfg.Clock()
	if r.lastCheckpoint.IsZero() {
		r.lastCheckpoint = now // the first draft waits one interval
		return
	}
	if now.Sub(r.lastCheckpoint) < every {
		return
	}
	r.lastCheckpoint = now
	size, settled := r.msgBytes, len(r.tr.Settled())
	if r.draft && settled == r.ckSettled &&
		(size == r.ckBytes || size > checkpointSmall && size-r.ckBytes < r.ckBytes/2) {
		return
	}
	msg, id, ok := r.tr.Draft()
	if !ok {
		return
	}
	if id == "" {
		id = r.draftID
	}
	if id == "" {
		id = newDraftID(now)
	}
	entries := append(r.entries[:len(r.entries):len(r.entries)], store.Entry{Message: msg, AGUIID: id})
	r.draftID = id
	// Stored or not, a failed write leaves the turn's end to take the
	// draft out, as for a stored one.
	r.draft, r.ckBytes, r.ckSettled = true, size, settled
	if err := r.s.cfg.Store.ReplaceTail(ctx, r.sess.ID, r.baseLen, entries); err != nil && ctx.Err() == nil {
		// (A turn that ended meanwhile stores its answer at its end.)
		r.log.Error().Err(err).Str("session", r.sess.ID).Msg("storing a checkpoint of the streamed answer")
	}
}

// checkpointSmall is the size under which a draft is checkpointed whenever
// it changed.
const checkpointSmall = 16 << 10

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
	if err := r.s.cfg.Store.ReplaceTail(ctx, r.sess.ID, r.baseLen, r.entries); err != nil {
		return err
	}
	r.draft = false
	return nil
}

func newDraftID(now time.Time) string { return "msg-draft-" + now.UTC().Format("150405.000000000") }
