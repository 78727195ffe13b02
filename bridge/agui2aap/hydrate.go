package agui2aap

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/gin-gonic/gin"
	"github.com/rs/zerolog"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/internal/edge"
	"github.com/aapagui/aapagui/bridge/internal/fault"
	"github.com/aapagui/aapagui/bridge/internal/ssestream"
	"github.com/aapagui/aapagui/bridge/internal/turns"
	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/translate"
)

// isHydration tells a run that asks for the thread's conversation back: no
// messages and no resume, the convention AG-UI servers use when a client
// reconnects to a thread it no longer holds (a page reload, a runtime
// restart).
func isHydration(in *types.RunAgentInput) bool {
	return len(in.Messages) == 0 && len(in.Resume) == 0
}

// hydrate answers a hydration without running a turn: RUN_STARTED, a
// MESSAGES_SNAPSHOT of the whole conversation in AG-UI form (read from the
// AAP session's history), and RUN_FINISHED carrying the interrupts still
// open. An unknown thread (or one of another key: threads are per key) gets
// an empty snapshot. The snapshot's ids become the thread's delivered ids,
// so that the client's next run continues the same AAP session.
//
// A hydration only reads the thread: it takes no run lock, so that any
// number of them (a page sends two connects on load, several tabs reload)
// and a run of the thread go on side by side. Only when the snapshot's
// ids are not the thread's (renumber) does it write, under the lock, and
// only if the lock is free.
func (s *Server) hydrate(c *gin.Context, ua upstreamAgent, in *types.RunAgentInput) error {
	cl, info := ua.cl, ua.info
	log := edge.Logger(c)
	ctx := c.Request.Context()
	start, endStart := fault.StartContext(ctx, s.cfg.StartTimeout)
	th, err := s.cfg.loadThread(start, edge.Owner(c), in.ThreadID)
	endStart()
	if err != nil {
		return fault.CauseOf(start, err)
	}
	kept := sessionKept(ctx, ua, th, log) // under the AG-UI extension: its state, activity messages, metadata
	msgs, interrupts, err := s.conversation(ctx, cl, info, th, kept, log)
	if err != nil {
		return err
	}
	evs := []events.Event{events.NewRunStartedEvent(in.ThreadID, in.RunID), kept.snapshot(msgs)}
	if st := kept.stateSnapshot(); st != nil {
		evs = append(evs, st)
	}
	finished := events.NewRunFinishedEvent(in.ThreadID, in.RunID)
	finished.Outcome = &events.RunFinishedOutcome{Type: events.RunFinishedOutcomeTypeSuccess}
	if len(interrupts) > 0 {
		finished.Outcome = &events.RunFinishedOutcome{Type: events.RunFinishedOutcomeTypeInterrupt, Interrupts: interrupts}
	}
	evs = append(evs, finished)
	out := ssestream.New(c.Writer)
	out.Start()
	writeAGUI(out, evs, log)
	out.Flush()
	log.Info().Str("thread", in.ThreadID).Int("messages", len(msgs)).Int("interrupts", len(interrupts)).Msg("thread hydrated")
	return nil
}

// conversation is the thread's conversation in AG-UI form and the
// interrupts still open on it: empty for an unknown thread, a thread of
// another agent, or one whose AAP session is gone or keeps no history.
// The messages' ids become the thread's delivered ids (renumber).
func (s *Server) conversation(ctx context.Context, cl *aap.Client, info *aap.AgentInfo, th *store.Thread, kept *keptByServer, log *zerolog.Logger) ([]types.Message, []types.Interrupt, error) {
	if th == nil || th.SessionID == "" || th.Agent != info.Name {
		return []types.Message{}, nil, nil
	}
	hist, ok, err := s.sessionHistory(ctx, cl, info, th.SessionID)
	if err != nil {
		return nil, nil, &upstreamError{err}
	}
	if !ok {
		if msgs, ok := s.recorded(ctx, th, log); ok {
			log.Info().Str("thread", th.ID).Str("session", th.SessionID).Int("messages", len(msgs)).Msg("hydration: the AAP session is gone or keeps no history; the conversation from agui2aap's own record")
			return msgs, nil, nil
		}
		log.Info().Str("thread", th.ID).Str("session", th.SessionID).Msg("hydration: the AAP session is gone or keeps no history; empty snapshot")
		return []types.Message{}, nil, nil
	}
	msgs, err := historySnapshot(hist, th, kept)
	if err != nil {
		log.Error().Err(err).Str("thread", th.ID).Str("session", th.SessionID).Msg("the AAP session's history has no AG-UI form")
		return nil, nil, err
	}
	if slices.Equal(deliveredIDs(msgs), th.Delivered) {
		return msgs, th.Interrupts, nil // nothing to save
	}
	return s.renumber(ctx, th, hist, kept, log)
}

// historySnapshot is snapshotMessages of the thread's session history,
// never nil, its failure named.
func historySnapshot(hist []aap.Message, th *store.Thread, kept *keptByServer) ([]types.Message, error) {
	msgs, err := snapshotMessages(hist, th.Delivered, kept)
	if err != nil {
		return nil, fault.Fail(fault.KindUpstream, "upstream_bad_history", "the AAP session's history could not be given in AG-UI form: "+err.Error())
	}
	if msgs == nil {
		msgs = []types.Message{}
	}
	return msgs, nil
}

// renumber gives the snapshot of hist the thread's ids when a run saved
// them since th was read (the thread is read again), else new ids
// (positional), which it saves as the delivered ids when the thread's run
// lock is free: a hydration is no run, and is never refused for one. The
// save is no activity, so listings keep their order. When the lock is
// held (a run, or another hydration saving the same ids), or the thread
// changed meanwhile, nothing is saved: the lock's holder writes the
// thread.
func (s *Server) renumber(ctx context.Context, th *store.Thread, hist []aap.Message, kept *keptByServer, log *zerolog.Logger) ([]types.Message, []types.Interrupt, error) {
	if fresh, err := s.cfg.loadThread(ctx, th.Owner, th.ID); err != nil {
		return nil, nil, err
	} else if fresh != nil && fresh.SessionID == th.SessionID && !slices.Equal(fresh.Delivered, th.Delivered) {
		th = fresh
	}
	msgs, err := historySnapshot(hist, th, kept)
	if err != nil {
		log.Error().Err(err).Str("thread", th.ID).Str("session", th.SessionID).Msg("the AAP session's history has no AG-UI form")
		return nil, nil, err
	}
	delivered := deliveredIDs(msgs)
	if slices.Equal(delivered, th.Delivered) {
		return msgs, th.Interrupts, nil
	}
	lease, err := store.TakeThread(ctx, s.cfg.Store, th.Owner, th.ID, store.LeaseOptions{OnError: edge.LeaseLog(log, "thread", th.ID)})
	if errors.Is(err, store.ErrHeld) {
		log.Debug().Str("thread", th.ID).Msg("hydration: the thread's run lock is held; its new ids are not saved")
		return msgs, th.Interrupts, nil
	}
	if err != nil {
		return nil, nil, &storeError{"lock thread", err}
	}
	held, err := s.cfg.loadThread(ctx, th.Owner, th.ID)
	if err != nil || held == nil || held.SessionID != th.SessionID || !slices.Equal(held.Delivered, th.Delivered) {
		lease.Release()
		return msgs, th.Interrupts, err
	}
	held.Delivered, held.KeepUpdatedAt = delivered, true
	held.RecordTail = recordOf(msgs, log)
	err = lease.ReleaseWith(func(holder string) error {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), turns.WriteTimeout)
		defer cancel()
		return s.cfg.Store.SaveThread(ctx, held, holder)
	})
	if err != nil {
		return nil, nil, &storeError{"save thread", err}
	}
	return msgs, held.Interrupts, nil
}

// sessionHistory reads the session's history, full preferred; false when
// the session is gone (404) or the agent keeps no history.
func (s *Server) sessionHistory(ctx context.Context, cl *aap.Client, info *aap.AgentInfo, session string) ([]aap.Message, bool, error) {
	ht, ok := historyType(info)
	if !ok {
		return nil, false, nil
	}
	ctx, cancel := context.WithTimeout(ctx, historyTimeout)
	defer cancel()
	hist, err := cl.History(ctx, session, ht)
	s.env().upstreamCall(ctx, "history", info.Name, err)
	if sessionGone(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return hist, true, nil
}

// snapshotMessages is the AG-UI form of an AAP history. When the history
// gives as many messages (reasoning aside) as the thread delivered, they
// get the delivered ids: the ids the client saw when they were streamed or
// sent. Otherwise (a history the server compacted, or rewrote) they get
// ids derived from their position. Context the bridge rendered into a
// user message is taken out again.
func snapshotMessages(hist []aap.Message, delivered []string, kept *keptByServer) ([]types.Message, error) {
	shown := historyForSnapshot(hist)
	n := len(shown)
	i := 0
	next := func() string {
		i++
		return fmt.Sprintf("hist-%d", i)
	}
	if n == len(delivered) {
		next = func() string {
			i++
			return delivered[i-1]
		}
	}
	msgs, err := translate.MessagesToAGUI(shown, next)
	if err != nil || kept == nil {
		return msgs, err
	}
	return kept.place(msgs, hist), nil
}

// historyForSnapshot is hist without tool_permission messages (answers,
// not conversation: in AG-UI they were resume entries) and without the
// context block withContext put first in user messages.
func historyForSnapshot(hist []aap.Message) []aap.Message {
	out := make([]aap.Message, 0, len(hist))
	for _, m := range hist {
		if _, ok := m.(*aap.ToolPermissionMessage); ok {
			continue
		}
		if um, ok := m.(*aap.UserMessage); ok && um.Content.IsBlocks() && len(um.Content.Blocks) > 1 {
			if tb, ok := um.Content.Blocks[0].(*aap.TextBlock); ok && strings.HasPrefix(tb.Text, translate.ContextHeader) {
				rest := um.Content.Blocks[1:]
				if t, ok := rest[0].(*aap.TextBlock); ok && len(rest) == 1 {
					m = aap.UserText(t.Text)
				} else {
					m = &aap.UserMessage{Content: aap.BlockContent(rest...)}
				}
			}
		}
		out = append(out, m)
	}
	return out
}

// deliveredIDs are the ids a thread counts as delivered for msgs:
// reasoning messages are never sent back as history, and activity
// messages are the session's, beside its history.
func deliveredIDs(msgs []types.Message) []string {
	out := make([]string, 0, len(msgs))
	for _, m := range msgs {
		if m.Role != types.RoleReasoning && m.Role != types.RoleActivity {
			out = append(out, m.ID)
		}
	}
	return out
}
