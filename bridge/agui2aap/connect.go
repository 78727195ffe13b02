package agui2aap

import (
	"errors"

	"github.com/gin-gonic/gin"

	"github.com/aapagui/aapagui/bridge/internal/web"
	"github.com/aapagui/aapagui/store"
)

// A run's stream is recorded in the thread's run log as it goes
// (web.Turn.Record), each event with an SSE id; a client that lost it
// (a reloaded page, a restarted runtime) rejoins it with POST
// /agents/:name/connect, on any replica.

// runKey is the run-log key of a thread's runs.
func runKey(threadID string) string { return "thread/" + threadID }

// runLogs is the store's run logs; nil when it keeps none.
func (s *Server) runLogs() store.RunLogStore {
	rl, _ := s.cfg.Store.(store.RunLogStore)
	return rl
}

// record makes the run's stream recorded.
func (r *runner) record() {
	if st := r.s.runLogs(); st != nil {
		r.life.Record(st, r.th.Owner, runKey(r.in.ThreadID), r.in.RunID, "agui")
	}
}

// connect answers POST /agents/:name/connect, a RunAgentInput naming the
// thread (CopilotKit's connect): the thread's run in flight, on any
// replica, from its RUN_STARTED and followed live to its end; with
// Last-Event-ID, exactly the events after that one of the run it belongs
// to, in flight or finished while kept. With no run in flight and no id,
// it answers as a hydration does: the thread's conversation.
func (s *Server) connect(c *gin.Context) {
	if err := s.serveConnect(c); err != nil {
		s.fail(c, err)
	}
}

func (s *Server) serveConnect(c *gin.Context) error {
	in, err := readRunInput(c.Request)
	if err != nil {
		return err
	}
	if st := s.runLogs(); st != nil {
		lastID := c.GetHeader("Last-Event-ID")
		l, after, err := web.FindRun(c.Request.Context(), st, c.GetString(ownerKey), runKey(in.ThreadID), lastID)
		switch {
		case err == nil && (lastID != "" || !l.Finished):
			s.cfg.Rejoin(c, st, l, after)
			return nil
		case err != nil && !errors.Is(err, web.ErrNoRun):
			return err
		}
	}
	in.Messages, in.Resume = nil, nil // a hydration
	_, err = s.serveInput(c, in)
	return err
}
