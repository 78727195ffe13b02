package aap2agui

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/internal/edge"
	"github.com/aapagui/aapagui/bridge/internal/runlog"
	"github.com/aapagui/aapagui/bridge/internal/turns"
)

// A turn's stream is recorded in the session's run log as it goes
// (turns.Turn.KeepRunLog), each event with an SSE id; a client that lost it
// rejoins the turn with GET /sessions/:id/turn, an extension of AAP.

// rejoin answers GET /sessions/:id/turn: the session's running turn from
// its start, followed live to its turn_stop; with Last-Event-ID, exactly
// the events after that one of the turn it belongs to, running or
// finished while kept; 204 when no turn is running and no id is given.
// The stream is in the mode the turn was asked in: a stream query that
// asks another is refused.
func (s *Server) rejoin(c *gin.Context) error {
	ctx, id := c.Request.Context(), c.Param("id")
	if _, err := s.cfg.Store.GetSession(ctx, edge.Owner(c), id); err != nil {
		return err
	}
	st := s.cfg.Store
	lastID := c.GetHeader("Last-Event-ID")
	l, after, err := turns.FindRun(ctx, st, edge.Owner(c), runKey(id), lastID, interruptedStop)
	if errors.Is(err, turns.ErrNoRun) || err == nil && lastID == "" && l.Finished {
		c.Status(http.StatusNoContent)
		return nil
	}
	if err != nil {
		return err
	}
	form, carried := strings.CutSuffix(l.Form, carriedForm)
	if mode := c.Query("stream"); mode != "" && mode != form {
		return invalid("stream_mode_differs", "the turn streams in mode "+form+": rejoin it with stream="+form+" or without stream")
	}
	if carried && !carries(c) {
		return invalid("extension_required", "the turn streams with the AG-UI extension: rejoin it asking for it with the header "+aap.ExtensionsHeader+": "+aap.ExtensionAGUI)
	}
	s.base.Rejoin(c, st, l, after, nil, s.deadTurn(id))
	return nil
}

// interruptedStop is the turn_stop that ends the log of a turn whose
// process is gone (turns.Base.Rejoin): an error stop, named.
var interruptedStop, _ = aap.AppendFrame(nil, &aap.TurnStop{StopReason: aap.StopError,
	Error: &aap.TurnError{Code: "turn_interrupted", Message: "the turn was interrupted when its server stopped"}})

// deadTurn ends the log of session id's turn, followed by a rejoining
// client, once its process is found gone: the session's turn lock free.
func (s *Server) deadTurn(id string) *runlog.Ending {
	st := s.cfg.Store
	return &runlog.Ending{
		Free: turns.LockFree(
			func(ctx context.Context, holder string, ttl time.Duration) (bool, time.Duration, error) {
				return st.Lock(ctx, id, holder, ttl)
			},
			func(ctx context.Context, holder string) error { return st.Unlock(ctx, id, holder) }),
		Frame: interruptedStop,
	}
}

// stopTurn answers DELETE /sessions/:id/turn, an extension of AAP: the
// session's running turn is stopped, on whichever replica runs it (in
// both on-client-gone modes), and ends as a turn whose client left under
// cancel does, its stream, for whoever still reads or follows it, ending
// with turn_stop end_turn. 202 with the turn's run once the stop is
// stored; 404 no_run_in_flight when the session has no running turn (a
// session of another key or user, or none, is answered the same). A turn
// in mode none is not recorded and cannot be stopped this way.
func (s *Server) stopTurn(c *gin.Context) error {
	stopping, err := s.base.StopRun(c.Request.Context(), edge.Logger(c), s.cfg.Store, edge.Owner(c), runKey(c.Param("id")))
	if err != nil {
		return err
	}
	edge.WriteJSON(c.Writer, http.StatusAccepted, stopping)
	return nil
}
