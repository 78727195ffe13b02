package turns

import (
	"context"
	"errors"

	"github.com/rs/zerolog"

	"github.com/aapagui/aapagui/bridge/internal/fault"
	"github.com/aapagui/aapagui/store"
)

// A run is stopped on purpose with a DELETE of it, on any replica, in
// both OnClientGone modes: both bridges stop it the same way (StopRun);
// only the route differs.

// Stopped reports whether ctx, a turn's, ended because the turn was
// stopped on request (ErrRunStopped).
func Stopped(ctx context.Context) bool { return errors.Is(context.Cause(ctx), fault.ErrRunStopped) }

// NoRunInFlight is a stop's failure for a conversation with no run in
// flight: 404 no_run_in_flight.
func NoRunInFlight() *fault.Failure {
	return fault.Fail(fault.KindNotFound, "no_run_in_flight", "this conversation has no run in flight")
}

// RunStopping is the body of the 202 that answers a stop (StopRun): the
// run asked to stop, by its log's id (the first part of its events' SSE
// ids) and its own id (the AG-UI runId).
type RunStopping struct {
	RunLogID string `json:"runLogId"`
	RunID    string `json:"runId"`
}

// StopRun stops the run in flight of owner's key, whichever replica runs
// it (log: the request's logger): the run's log is marked in st (the
// mark is stored before StopRun returns), and the run is ended at once
// when this process runs it; the process of another replica sees the
// mark within a poll (about a second). The run then ends as a cancelled one does, its context's cause
// ErrRunStopped (Turn.Cut). A key with no run in flight, also another
// owner's (the answers are the same: nothing can be probed), is a
// KindNotFound failure, no_run_in_flight; a store failure is returned as
// it is.
func (b *Base) StopRun(ctx context.Context, log *zerolog.Logger, st store.RunLogStore, owner, key string) (*RunStopping, error) {
	l, err := st.LatestRunLog(ctx, owner, key)
	if err == nil && l.Finished {
		err = store.ErrNotFound
	}
	if err == nil {
		err = st.StopRunLog(ctx, owner, l.ID) // ErrNotFound: it finished meanwhile
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, NoRunInFlight()
	}
	if err != nil {
		return nil, err
	}
	here := b.runs.Stop(l.ID)
	log.Info().Str("run_log", l.ID).Str("run_id", l.RunID).Bool("here", here).Msg("run asked to stop")
	return &RunStopping{RunLogID: l.ID, RunID: l.RunID}, nil
}
