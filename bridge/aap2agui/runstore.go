package aap2agui

import (
	"context"
	"time"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/internal/ident"
	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/translate"
)

// saveSettled stores the run's messages that have become final.
func (r *turnRun) saveSettled(ctx context.Context) {
	settled := r.tr.Settled()
	if len(settled) <= r.saved {
		return
	}
	r.append(ctx, settled, r.tr.MessageIDs())
}

// unsaved are the history entries of msgs not saved yet, with their
// AG-UI ids (ids[i] is msgs[i]'s; a message without one gets a new id).
func (r *turnRun) unsaved(msgs []aap.Message, ids []string) []store.Entry {
	entries := make([]store.Entry, 0, len(msgs)-r.saved)
	for i := r.saved; i < len(msgs); i++ {
		id := ""
		if i < len(ids) {
			id = ids[i]
		}
		if id != "" && r.snapIDs[id] {
			// The snapshot holds it already, but for the interrupt calls
			// the run's end added to it.
			if calls := translate.InterruptCalls(msgs[i]); calls != nil {
				entries = append(entries, store.Entry{Message: calls, AGUIID: id + "-interrupts"})
			}
			continue
		}
		agui := r.enc.extras(msgs, i, id)
		if id == "" {
			id = ident.Random("msg-")
		}
		entries = append(entries, store.Entry{Message: msgs[i], AGUIID: id, AGUI: agui})
	}
	return entries
}

func (r *turnRun) append(ctx context.Context, msgs []aap.Message, ids []string) {
	entries := r.unsaved(msgs, ids)
	if r.draft {
		r.entries = append(r.entries, entries...)
		if err := r.replaceDraft(ctx); err != nil {
			r.entries = r.entries[:len(r.entries)-len(entries)]
			r.uncertain = true
			r.log.Error().Err(err).Str("session", r.sess.ID).Msg("storing history")
			return
		}
		r.saved = len(msgs)
		return
	}
	if err := r.s.cfg.Store.AppendHistory(ctx, r.sess.ID, entries); err != nil {
		// Left for the turn's end, which writes the whole history: this
		// append may have been stored all the same.
		r.uncertain = true
		r.log.Error().Err(err).Str("session", r.sess.ID).Msg("storing history")
		return
	}
	r.entries = append(r.entries, entries...)
	r.saved = len(msgs)
}

// finish stores the rest of the run: the last messages, the open
// interrupts and the state; the same write frees the turn's lock. It uses
// a context of its own, not cancelled with the request's (ctx lends it
// only its values: the trace), so that what was received is saved even
// when the client has gone. A write that fails is tried again while the
// lease holds (Lease.ReleaseWith); the error it returns means the run is
// not stored, and the turn must not be acknowledged.
func (r *turnRun) finish(ctx context.Context) error {
	ctx = context.WithoutCancel(ctx)
	msgs := r.tr.Messages()
	ids := r.tr.MessageIDs()
	// The agent refused the run outright (e.g. it did not accept the
	// resume): what it was waiting for is still open.
	refused := r.tr.StopReason() == aap.StopError && len(msgs) == 0
	r.sess.Interrupts = r.tr.Interrupts()
	if refused {
		r.sess.Interrupts = r.prevInterrupts
	}
	if r.stateChanged {
		r.sess.State = r.state
	}
	st := r.s.cfg.Store
	if r.refreshEncrypted(msgs, ids) {
		// Values that came after their messages were stored: the run's
		// entries are written again.
		r.uncertain = true
	}
	if !r.draft && !r.uncertain && len(r.perms) == 0 {
		// The usual end: the last messages and the session in one write.
		// A try whose outcome is unknown may have stored them: a retry
		// first looks.
		entries := r.unsaved(msgs, ids)
		tries := 0
		err := r.life.Lease.ReleaseWith(func(holder string) error {
			wctx, cancel := context.WithTimeout(ctx, writeTimeout)
			defer cancel()
			if tries++; tries > 1 {
				if done, err := r.stored(wctx, entries); err != nil || done {
					return err
				}
			}
			return st.SaveSessionUnlock(wctx, r.sess, entries, holder)
		})
		if err == nil {
			r.entries = append(r.entries, entries...)
			r.saved = len(msgs)
		}
		return err
	}
	// A draft to take out, answered permissions to record, or a write of
	// unknown outcome: the run's entries written as they must be (the
	// whole history when answered permissions go before later messages),
	// then the session, both safe to repeat.
	return r.life.Lease.ReleaseWith(func(holder string) error {
		wctx, cancel := context.WithTimeout(ctx, writeTimeout)
		defer cancel()
		run := append(r.entries[:len(r.entries):len(r.entries)], r.unsaved(msgs, ids)...)
		if err := r.storeRun(wctx, run, refused); err != nil {
			return err
		}
		return st.SaveSessionUnlock(wctx, r.sess, nil, holder)
	})
}

// storeRun makes run the history after the turn's base, with the results
// of the calls this turn answered with a tool_permission and the agent did
// not report placed after their calls: when one goes before a later
// message, the whole history is written.
func (r *turnRun) storeRun(ctx context.Context, run []store.Entry, refused bool) error {
	var results []store.Entry
	if !refused {
		results = r.permissionResults()
	}
	if len(results) == 0 {
		return r.s.cfg.Store.ReplaceTail(ctx, r.sess.ID, r.baseLen, run)
	}
	base, err := r.base(ctx)
	if err != nil {
		return err
	}
	hist := append(base[:len(base):len(base)], run...)
	hist, _ = placeResults(hist, missingResults(hist, results))
	return r.s.cfg.Store.ReplaceHistory(ctx, r.sess.ID, hist)
}

// writeTimeout bounds one try of a turn's last write.
const writeTimeout = 5 * time.Second

// stored reports whether entries (the run's last, each with an AG-UI id
// of its own) are in the session's history: a write whose outcome was
// unknown went through.
func (r *turnRun) stored(ctx context.Context, entries []store.Entry) (bool, error) {
	if len(entries) == 0 {
		return false, nil // writing the session again changes nothing
	}
	hist, err := r.s.cfg.Store.History(ctx, r.sess.ID)
	if err != nil {
		return false, err
	}
	// The turn holds the session's lock: nothing is written after its
	// entries, so they end the history when they were stored.
	return len(hist) > 0 && hist[len(hist)-1].AGUIID == entries[len(entries)-1].AGUIID, nil
}

// permissionResults gives each call this turn answered with a
// tool_permission, and the agent reported no result for, a tool message,
// so that the history stays valid and no later turn takes the call for an
// open one: for a denial the message AAP prescribes ("Tool call denied:
// <reason>"), for a grant grantedText. finish places them right after
// their calls.
func (r *turnRun) permissionResults() []store.Entry {
	if len(r.perms) == 0 {
		return nil
	}
	got := map[string]bool{}
	for _, m := range r.tr.Messages() {
		if tm, ok := m.(*aap.ToolMessage); ok {
			got[tm.ToolCallID] = true
		}
	}
	var missing []store.Entry
	for _, pm := range r.perms {
		if got[pm.ToolCallID] {
			continue
		}
		text := grantedText
		if !pm.Granted {
			text = aap.DeniedResult(pm.Reason)
		}
		missing = append(missing, store.Entry{
			Message: &aap.ToolMessage{ToolCallID: pm.ToolCallID, Content: aap.TextContent(text)},
			AGUIID:  ident.ToolResultMessage(pm.ToolCallID),
		})
	}
	return missing
}

// grantedText is stored for a granted call whose result the agent never
// reported, in a run that went on past it: the call was answered, so it is
// not open, and the history stays valid (every call has a result) without
// claiming a result the agent did not give.
const grantedText = "Tool call granted; the agent did not report its result."
