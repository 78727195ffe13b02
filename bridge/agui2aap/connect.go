package agui2aap

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/gin-gonic/gin"
	"github.com/rs/zerolog"

	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/bridge/internal/edge"
	"github.com/aapagui/aapagui/bridge/internal/fault"
	"github.com/aapagui/aapagui/bridge/internal/runlog"
	"github.com/aapagui/aapagui/bridge/internal/turns"
	"github.com/aapagui/aapagui/store"
)

// A run's stream is recorded in the thread's run log as it goes
// (turns.Turn.KeepRunLog), each event with an SSE id; a client that lost it
// (a reloaded page, a restarted runtime) rejoins it with POST
// /agents/:name/connect, on any replica.

// joining is what a client joining run l of thread threadID from its
// start gets right after its RUN_STARTED: a MESSAGES_SNAPSHOT of the
// conversation the run continues (the thread's record, then what the run
// was asked), so that a page that holds nothing shows the conversation
// and the answer going on. Nothing when the run kept no input or the
// record cannot be read.
func (s *Server) joining(ctx context.Context, l *store.RunLog, threadID string, log *zerolog.Logger) []byte {
	var in runInput
	if len(l.Input) == 0 || json.Unmarshal(l.Input, &in) != nil {
		return nil
	}
	msgs := []types.Message{}
	if in.From > 0 {
		rec, ok := s.recorded(ctx, &store.Thread{Owner: l.Owner, ID: threadID, RecordLen: in.From}, log)
		if !ok {
			return nil
		}
		msgs = rec[:min(in.From, len(rec))]
	}
	msgs = append(msgs, in.Messages...)
	frame, err := agui.AppendFrame(nil, events.NewMessagesSnapshotEvent(msgs))
	if err != nil {
		log.Warn().Err(err).Msg("the conversation of a joined run could not be written")
		return nil
	}
	return frame
}

// connect answers POST /agents/:name/connect, a RunAgentInput naming the
// thread (CopilotKit's connect): the thread's run in flight, on any
// replica, from its RUN_STARTED (followed by a MESSAGES_SNAPSHOT of the
// conversation it continues: joining) and followed live to its end; with
// Last-Event-ID, exactly the events after that one of the run it belongs
// to, in flight or finished while kept. With no run in flight and no id,
// it answers as a hydration does: the thread's conversation.
func (s *Server) connect(c *gin.Context) error {
	in, _, err := readRunInput(c.Request)
	if err != nil {
		return err
	}
	{
		st := s.cfg.Store
		lastID := c.GetHeader("Last-Event-ID")
		l, after, err := s.findRun(c.Request.Context(), edge.Owner(c), c.Param("name"), in.ThreadID, lastID)
		switch {
		case err == nil && (lastID != "" || !l.Finished):
			var prologue []byte
			if lastID == "" {
				prologue = s.joining(c.Request.Context(), l, in.ThreadID, edge.Logger(c))
			}
			s.base.Rejoin(c, st, l, after, prologue, s.deadRun(edge.Owner(c), in.ThreadID))
			return nil
		case err != nil && !errors.Is(err, turns.ErrNoRun):
			return err
		}
	}
	in.Messages, in.Resume = nil, nil // a hydration
	return s.serveInput(c, in, agui.Metadata{})
}

// interruptedRun is the RUN_ERROR that ends the log of a run whose process
// is gone (turns.Base.Rejoin); without a timestamp, so that every
// replica writes it, and knows it, byte for byte.
var interruptedRun, _ = agui.AppendFrame(nil, &events.RunErrorEvent{
	BaseEvent: &events.BaseEvent{EventType: events.EventTypeRunError},
	Message:   "the run was interrupted when its server stopped", Code: ptr(CodeRunInterrupted)})

func ptr[T any](v T) *T { return &v }

// deadRun ends the log of owner's thread id's run, followed by a
// rejoining client, once its process is found gone: the thread's run
// lock free.
func (s *Server) deadRun(owner, id string) *runlog.Ending {
	st := s.cfg.Store
	return &runlog.Ending{
		Free: turns.LockFree(
			func(ctx context.Context, holder string, ttl time.Duration) (bool, time.Duration, error) {
				return st.LockThread(ctx, owner, id, holder, ttl)
			},
			func(ctx context.Context, holder string) error { return st.UnlockThread(ctx, owner, id, holder) }),
		Frame: interruptedRun,
	}
}

// stopRun answers DELETE /agents/:name/threads/:threadId/run: the
// thread's run in flight is stopped, on whichever replica runs it (in
// both on-client-gone modes), and ends as a run whose client left under
// cancel does, its stream, for whoever still reads or follows it, ending
// with RUN_FINISHED once what came is saved. 202 with the run once the
// stop is stored; 404 no_run_in_flight when the thread has no run in
// flight (a thread of another key, user or agent, or none, is answered
// the same).
func (s *Server) stopRun(c *gin.Context) {
	stopping, err := s.stopping(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	edge.WriteJSON(c.Writer, http.StatusAccepted, stopping)
}

func (s *Server) stopping(c *gin.Context) (*turns.RunStopping, error) {
	ctx, owner, id := c.Request.Context(), edge.Owner(c), c.Param("threadId")
	if err := checkThreadID(id); err != nil {
		return nil, fault.Fail(fault.KindInvalid, "invalid_request", err.Error())
	}
	stopping, err := s.stopAgentRun(ctx, edge.Logger(c), owner, c.Param("name"), id)
	var f *fault.Failure
	if err != nil && !errors.As(err, &f) {
		return nil, &storeError{"stop run", err}
	}
	return stopping, err
}
