package aap2agui

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/internal/ident"
	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/translate"
)

// What a run stores of itself as it goes: the messages that settle, a
// draft of the one still streaming, a snapshot that replaces the history,
// and the turn's last write (storeEnd).

// historyWriter is what a turn's run stores of itself as it goes and at its
// end: the entries it has stored after the history it began with (a
// draft of the message still streaming among them), and what it needs to
// write them again. It holds what it writes with (the store, the
// session's id, the logger) and reads the run's translator; it never
// looks back at the turn.
type historyWriter struct {
	st     *historyCopy // the store, as the turn writes to it
	sessID string
	log    *zerolog.Logger
	tr     *translate.AGUIToAAP
	own    []string                     // the AG-UI ids of the turn's own entries (its messages, the results it closed)
	perms  []*aap.ToolPermissionMessage // the permissions this turn answers
	// movedOn are the calls this turn's user message left to their
	// interrupts' cancelled resume entries (admission.movedOn).
	movedOn []string

	nStored  int             // history messages of the run already stored
	entries  []store.Entry   // the run's entries stored so far
	baseLen  int             // how many entries the history had before them
	baseHist []store.Entry   // those entries, once read (or a snapshot's)
	snapIDs  map[string]bool // the AG-UI ids of the snapshot's messages (replaced, below)
	draftID  string          // the id of the draft (draft, below)
	ck       checkpointMark  // the checkpoint last stored
	end      endWrite        // the run's last write (storeEnd)

	replaced bool // a MESSAGES_SNAPSHOT replaced the history
	draft    bool // a draft is stored after entries
	// uncertain: a write of the run failed, and may or may not have been
	// stored (a connection that broke at the commit): the run's end
	// writes the whole history, which is the same whether it was or not.
	uncertain bool
}

// A checkpointMark is the checkpoint a run last stored: when, the draft's
// size and the settled messages then.
type checkpointMark struct {
	at             time.Time
	bytes, settled int
}

// An endWrite is a run's last write (storeEnd): whole when it is the whole
// of the run's entries (a draft to take out, answered permissions to
// record, or a write of unknown outcome), else the entries it adds;
// tries counts its tries.
type endWrite struct {
	entries []store.Entry
	tries   int
	whole   bool
}

// prepareEnd works out the run's last write, once the run has ended
// (msgs, ids: its messages and their AG-UI ids).
func (r *historyWriter) prepareEnd(msgs []aap.Message, ids []string) {
	if r.refreshEncrypted(msgs, ids) {
		// Values that came after their messages were stored: the run's
		// entries are written again.
		r.uncertain = true
	}
	r.end.whole = r.draft || r.uncertain || len(r.perms) > 0 || len(r.movedOn) > 0
	if !r.end.whole {
		r.end.entries = r.unstored(msgs, ids)
	}
}

// storeEnd is one try of the run's last write: the last messages and the
// session (its open interrupts and state, sess) in one write that frees
// holder's lock. refused: the agent refused the run outright.
func (r *historyWriter) storeEnd(ctx context.Context, sess *store.Session, holder string, refused bool) error {
	if !r.end.whole {
		// The usual end: the last messages and the session in one write.
		// A try whose outcome is unknown may have stored them: a retry
		// first looks.
		if r.end.tries++; r.end.tries > 1 {
			if done, err := r.stored(ctx, r.end.entries); err != nil || done {
				return err
			}
		}
		if err := r.st.SaveSession(ctx, sess, r.end.entries, holder); err != nil {
			return err
		}
		r.entries = append(r.entries, r.end.entries...)
		r.nStored = len(r.tr.Messages())
		return nil
	}
	// A draft to take out, answered permissions to record, or a write of
	// unknown outcome: the run's entries written as they must be (the
	// whole history when answered permissions go before later messages),
	// then the session, both safe to repeat.
	run := append(r.entries[:len(r.entries):len(r.entries)], r.unstored(r.tr.Messages(), r.tr.MessageIDs())...)
	if err := r.storeRun(ctx, run, refused); err != nil {
		return err
	}
	return r.st.SaveSession(ctx, sess, nil, holder)
}

// storeSettled stores the run's messages that have become final.
func (r *historyWriter) storeSettled(ctx context.Context) {
	settled := r.tr.Settled()
	if len(settled) <= r.nStored {
		return
	}
	r.append(ctx, settled, r.tr.MessageIDs())
}

// unstored are the history entries of msgs not stored yet, with their
// AG-UI ids (ids[i] is msgs[i]'s; a message without one gets a new id).
func (r *historyWriter) unstored(msgs []aap.Message, ids []string) []store.Entry {
	entries := make([]store.Entry, 0, len(msgs)-r.nStored)
	for i := r.nStored; i < len(msgs); i++ {
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
		agui := r.tr.Encrypted(msgs, i, id)
		if id == "" {
			id = ident.Random("msg-")
		}
		entries = append(entries, store.Entry{Message: msgs[i], AGUIID: id, AGUI: agui})
	}
	return entries
}

// append stores the run's messages that settled mid-turn: the turn's
// progress (store.Progress), which its end writes again if need be.
func (r *historyWriter) append(ctx context.Context, msgs []aap.Message, ids []string) {
	ctx = store.Progress(ctx)
	entries := r.unstored(msgs, ids)
	if r.draft {
		r.entries = append(r.entries, entries...)
		if err := r.replaceDraft(ctx); err != nil {
			r.entries = r.entries[:len(r.entries)-len(entries)]
			r.uncertain = true
			r.log.Error().Err(err).Str("session", r.sessID).Msg("storing history")
			return
		}
		r.nStored = len(msgs)
		return
	}
	if err := r.st.AppendHistory(ctx, r.sessID, entries); err != nil {
		// Left for the turn's end, which writes the whole history: this
		// append may have been stored all the same.
		r.uncertain = true
		r.log.Error().Err(err).Str("session", r.sessID).Msg("storing history")
		return
	}
	r.entries = append(r.entries, entries...)
	r.nStored = len(msgs)
}

// storeRun makes run the history after the turn's base, with the results
// of the calls this turn answered with a tool_permission and the agent did
// not report placed after their calls: when one goes before a later
// message, the whole history is written.
func (r *historyWriter) storeRun(ctx context.Context, run []store.Entry, refused bool) error {
	run, results := r.movedOnResults(run)
	if !refused {
		results = append(results, r.permissionResults()...)
	}
	if len(results) == 0 {
		return r.st.ReplaceTail(ctx, r.sessID, r.baseLen, run)
	}
	base, err := r.base(ctx)
	if err != nil {
		return err
	}
	hist := append(base[:len(base):len(base)], run...)
	hist, _ = placeResults(hist, missingResults(hist, results))
	return r.st.ReplaceTail(ctx, r.sessID, 0, hist)
}

// stored reports whether entries (the run's last, each with an AG-UI id
// of its own) are in the session's history: a write whose outcome was
// unknown went through.
func (r *historyWriter) stored(ctx context.Context, entries []store.Entry) (bool, error) {
	if len(entries) == 0 {
		return false, nil // writing the session again changes nothing
	}
	hist, err := r.st.History(ctx, r.sessID)
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
func (r *historyWriter) permissionResults() []store.Entry {
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

// movedOnResults takes out of run the results the agent wrote for the
// calls the turn's user message left to their cancelled interrupts
// (pydantic-ai writes "Cancelled by user."), which it streamed after the
// new message, and returns them with translate.UnansweredCall for each
// such call it wrote none for: finish places them right after their
// calls, so that no call is open when the user spoke again.
func (r *historyWriter) movedOnResults(run []store.Entry) (rest, results []store.Entry) {
	if len(r.movedOn) == 0 {
		return run, nil
	}
	moved := map[string]bool{}
	for _, id := range r.movedOn {
		moved[id] = true
	}
	rest = make([]store.Entry, 0, len(run))
	for _, e := range run {
		if tm, ok := e.Message.(*aap.ToolMessage); ok && moved[tm.ToolCallID] {
			results = append(results, e)
			delete(moved, tm.ToolCallID)
			continue
		}
		rest = append(rest, e)
	}
	for _, id := range r.movedOn {
		if moved[id] {
			results = append(results, store.Entry{
				Message: &aap.ToolMessage{ToolCallID: id, Content: aap.TextContent(translate.UnansweredCall)},
				AGUIID:  ident.ToolResultMessage(id),
			})
		}
	}
	return rest, results
}

// grantedText is stored for a granted call whose result the agent never
// reported, in a run that went on past it: the call was answered, so it is
// not open, and the history stays valid (every call has a result) without
// claiming a result the agent did not give.
const grantedText = "Tool call granted; the agent did not report its result."

// checkpointSmall is the size under which a draft is checkpointed whenever
// it changed.
const checkpointSmall = 16 << 10

// base is the history before the run's own entries (its first baseLen
// entries: the run's writes only ever come after them, until a
// MESSAGES_SNAPSHOT, which becomes the base): read once, when first
// needed.
func (r *historyWriter) base(ctx context.Context) ([]store.Entry, error) {
	if r.baseHist != nil {
		return r.baseHist, nil
	}
	hist, err := r.st.History(ctx, r.sessID)
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
func (r *historyWriter) replaceDraft(ctx context.Context) error {
	if err := r.st.ReplaceTail(ctx, r.sessID, r.baseLen, r.entries); err != nil {
		return err
	}
	r.draft = false
	return nil
}

func newDraftID(now time.Time) string { return "msg-draft-" + now.UTC().Format("150405.000000000") }

// refreshEncrypted gives the run's stored entries (r.entries, one per
// message of msgs while no snapshot replaced the history) the values that
// came after they were stored; it reports whether any changed, and the
// run's end then writes them again.
func (r *historyWriter) refreshEncrypted(msgs []aap.Message, ids []string) bool {
	if r.replaced || !r.tr.HasEncrypted() {
		return false
	}
	changed := false
	for j := range r.entries {
		if j >= len(msgs) {
			break
		}
		id := ""
		if j < len(ids) {
			id = ids[j]
		}
		if x := r.tr.Encrypted(msgs, j, id); !bytes.Equal(x, r.entries[j].AGUI) {
			r.entries[j].AGUI, changed = x, true
		}
	}
	return changed
}

// snapshot makes entries (a MESSAGES_SNAPSHOT's) the session's history
// (replaceWith), once the run has streamed what they hold that is new in
// it (translate.AGUIToAAP.FeedSnapshot, against the history the run was
// sent, base; the calls the turn denied have no tool_result): it returns
// those events, and the translator's error. When that history cannot be
// read, nothing of the snapshot is streamed.
func (r *historyWriter) snapshot(ctx context.Context, entries []store.Entry) ([]aap.Event, error) {
	base, err := r.base(ctx)
	if err != nil {
		r.log.Warn().Err(err).Str("session", r.sessID).Msg("MESSAGES_SNAPSHOT: the history it replaces could not be read; what the snapshot leaves out of it is not kept, nor streamed")
		r.replaceWith(ctx, entries)
		return nil, nil
	}
	var denied []string
	for _, pm := range r.perms {
		if !pm.Granted {
			denied = append(denied, pm.ToolCallID)
		}
	}
	out, err := r.tr.FeedSnapshot(historyEntries(entries), historyEntries(base), denied)
	r.replaceWith(ctx, r.mergeSnapshot(base, entries))
	return out, err
}

// historyEntries are the entries of lists, one after the other, as
// translate's.
func historyEntries(lists ...[]store.Entry) []translate.HistoryEntry {
	n := 0
	for _, list := range lists {
		n += len(list)
	}
	out := make([]translate.HistoryEntry, 0, n)
	for _, list := range lists {
		for _, e := range list {
			out = append(out, translate.HistoryEntry(e))
		}
	}
	return out
}

// mergeSnapshot is snap (the entries a MESSAGES_SNAPSHOT makes) with what
// the history it replaces holds and the snapshot left out
// (translate.MergeSnapshot): base, then the run's entries, stored or not.
func (r *historyWriter) mergeSnapshot(base, snap []store.Entry) []store.Entry {
	unstored := r.unstored(r.tr.Messages(), r.tr.MessageIDs())
	hist := historyEntries(base, r.entries, unstored)
	merged := translate.MergeSnapshot(historyEntries(snap), translate.SnapshotBase{History: hist, Own: idSet(r.own), Run: idSet(r.tr.MessageIDs())})
	out := make([]store.Entry, len(merged))
	for i, e := range merged {
		out[i] = store.Entry(e)
	}
	return out
}

// replaceWith makes entries (a MESSAGES_SNAPSHOT's, merged) the session's
// history; the run's later messages follow it.
func (r *historyWriter) replaceWith(ctx context.Context, entries []store.Entry) {
	if err := r.st.ReplaceTail(ctx, r.sessID, 0, entries); err != nil {
		r.uncertain = true // it may have been stored: the turn's end writes the history whole
		r.log.Error().Err(err).Msg("storing MESSAGES_SNAPSHOT")
		return
	}
	// The snapshot is the history the run's later messages follow.
	r.baseHist, r.baseLen, r.entries = entries, len(entries), nil
	// What the run said so far is in the snapshot, and so may be the
	// message it is still building: skip it (by id) when it settles.
	r.nStored = len(r.tr.Settled())
	r.replaced = true
	r.draft = false // the snapshot replaced any draft
	r.snapIDs = make(map[string]bool, len(entries))
	for _, e := range entries {
		r.snapIDs[e.AGUIID] = true
	}
}

// checkpoint stores the draft of the message still streaming (size: its
// bytes so far) when every has passed since the last, and it changed
// enough (see turnRun.checkpoint).
func (r *historyWriter) checkpoint(ctx context.Context, now time.Time, every time.Duration, size int) {
	if r.ck.at.IsZero() {
		r.ck.at = now // the first draft waits one interval
		return
	}
	if now.Sub(r.ck.at) < every {
		return
	}
	r.ck.at = now
	settled := len(r.tr.Settled())
	if r.draft && settled == r.ck.settled &&
		(size == r.ck.bytes || size > checkpointSmall && size-r.ck.bytes < r.ck.bytes/2) {
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
	r.draft, r.ck.bytes, r.ck.settled = true, size, settled
	if err := r.st.ReplaceTail(store.Progress(ctx), r.sessID, r.baseLen, entries); err != nil && ctx.Err() == nil {
		// (A turn that ended meanwhile stores its answer at its end.)
		r.log.Error().Err(err).Str("session", r.sessID).Msg("storing a checkpoint of the streamed answer")
	}
}
