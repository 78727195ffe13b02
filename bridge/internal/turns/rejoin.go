package turns

import (
	"context"
	"errors"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/aapagui/aapagui/bridge/internal/edge"
	"github.com/aapagui/aapagui/bridge/internal/fault"
	"github.com/aapagui/aapagui/bridge/internal/runlog"
	"github.com/aapagui/aapagui/bridge/internal/ssestream"
	"github.com/aapagui/aapagui/internal/ident"
	"github.com/aapagui/aapagui/store"
)

// A client that lost its connection to a run rejoins it from the run's
// log (runlog), on any replica: both bridges find the log the same way
// (FindRun) and stream it the same way (Rejoin); only the route differs.

// ErrNoRun is FindRun's when the key has no run log and no Last-Event-ID
// was given.
var ErrNoRun = errors.New("no run of this conversation is recorded")

// FindRun finds the run a rejoin names: the one of lastEventID (an SSE id
// of its events, which must be of owner's key), else the key's latest.
// after is the number of the last event the client has (0 without an
// id). A malformed id is a KindInvalid failure, a log that is not the
// key's or no longer kept a KindNotFound one; a key with no log and no id
// is ErrNoRun.
//
// A run that a follower ended, its process gone, with the terminal event
// ended (runlog.Ending.Frame) is rejoined at that event by a client whose
// id is at or past it: the client had events its run never stored, and
// is told the end instead of nothing.
func FindRun(ctx context.Context, st store.RunLogStore, owner, key, lastEventID string, ended []byte) (l *store.RunLog, after int64, err error) {
	if lastEventID == "" {
		l, err = st.LatestRunLog(ctx, owner, key)
		if errors.Is(err, store.ErrNotFound) {
			return nil, 0, ErrNoRun
		}
		return l, 0, err
	}
	id, after, err := runlog.ParseEventID(lastEventID)
	if err != nil {
		return nil, 0, fault.Fail(fault.KindInvalid, "bad_last_event_id", "Last-Event-ID "+err.Error())
	}
	l, err = st.GetRunLog(ctx, owner, id)
	if errors.Is(err, store.ErrNotFound) || err == nil && l.Key != key {
		return nil, 0, fault.Fail(fault.KindNotFound, "run_not_kept", "the run of Last-Event-ID is not one of this conversation's kept runs (a conversation keeps its running run and the last one before it)")
	}
	if err != nil {
		return nil, 0, err
	}
	if after >= l.Events && len(ended) > 0 {
		if ok, err := runlog.EndsWith(ctx, st, l, ended); err != nil || ok {
			return l, l.Events - 1, err
		}
	}
	if after > l.Events && l.Finished {
		return nil, 0, fault.Fail(fault.KindInvalid, "bad_last_event_id", "Last-Event-ID names an event past the run's end")
	}
	return l, after, nil
}

// Rejoin streams run l to the client from the event after after, and
// follows it live to its end: the response is the run's own stream, each
// event with the id it had; prologue, when it follows from the start, goes
// right after the run's first event (runlog.Follow.Prologue). A follower never slows the run: it reads the
// run's log, and one that stops reading is dropped (StallTimeout) and
// may rejoin with the last id it had. A run that makes no progress for
// longer than the idle bound, without finishing, is one whose process is
// gone: the stream ends there. Before that, when end is given, a run
// whose lock ran out (its process died) is ended by its follower, on any
// replica, with end's terminal event (runlog.Ending): within about
// LeaseTTL and runlog.DefaultGrace of the process's last renewal.
func (b *Base) Rejoin(c *gin.Context, st store.RunLogStore, l *store.RunLog, after int64, prologue []byte, end *runlog.Ending) {
	s := b.serving
	out := ssestream.New(c.Writer)
	out.KeepAlive, out.StallTimeout = s.KeepAlive, s.StallTimeout
	defer out.Done()
	out.Start()
	f := runlog.Follow{Store: st, Hub: b.runs, Log: l, After: after, Idle: s.IdleTimeout + s.StartTimeout, Prologue: prologue}
	if s.IdleTimeout < 0 {
		f.Idle = 0
	}
	if end != nil {
		end.Quiet, end.Grace = s.LeaseTTL, runlog.DefaultGrace
		f.End = end
	}
	err := f.Run(c.Request.Context(), follower{out})
	log := edge.Logger(c)
	switch {
	case err == nil:
		log.Info().Str("run_log", l.ID).Msg("rejoined run followed to its end")
	case c.Request.Context().Err() != nil || out.Err() != nil:
		log.Info().Str("run_log", l.ID).Msg("rejoined run: the client left")
	default:
		log.Warn().Err(err).Str("run_log", l.ID).Msg("rejoined run: following it stopped short of its end")
	}
}

// follower is a Stream as a follower's runlog.Sink.
type follower struct{ s *ssestream.Stream }

func (f follower) Write(frames []byte) {
	f.s.Commit(append(f.s.Buffer(), frames...))
}

func (f follower) Flush() error {
	f.s.Flush()
	return f.s.Err()
}

func (f follower) Waiting(idle bool) {
	if f.s.KeepAlive > 0 {
		f.s.Waiting(idle)
	}
}

// checkTTL is how long a check of whether a lock is free (LockFree) holds
// it should its release fail.
const checkTTL = 2 * time.Second

// LockFree is a runlog.Ending's Free for the lock lock takes and unlock
// frees: it takes the lock, as a holder of its own, and frees it at once.
// A lock that is gone with its conversation is free.
func LockFree(lock func(ctx context.Context, holder string, ttl time.Duration) (bool, time.Duration, error), unlock func(ctx context.Context, holder string) error) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		holder := ident.Random("check-")
		ok, _, err := lock(ctx, holder, checkTTL)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return true, nil
		case err != nil || !ok:
			return false, err
		}
		return true, unlock(context.WithoutCancel(ctx), holder)
	}
}
