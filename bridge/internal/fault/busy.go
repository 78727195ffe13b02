package fault

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aapagui/aapagui/store"
)

// ErrStoreBusy is the cause of a turn or run start that the store could
// not take within its bound (StartContext): its lock was not taken in
// time, so nothing of it ran.
var ErrStoreBusy = errors.New("the store could not take the start within its bound")

// StartContext bounds the store work of a turn's or a run's start (taking
// its lock, reading what it continues) to d: past it, ctx ends with the
// cause ErrStoreBusy, and the start is refused (StoreCause). d <= 0: no
// bound.
func StartContext(parent context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return context.WithCancel(parent)
	}
	return context.WithTimeoutCause(parent, d, ErrStoreBusy)
}

// CauseOf returns err, wrapped with the cause of ctx's end when ctx ended
// for a reason of the bridge's own (its bound on a start, ErrStoreBusy; a
// lost lease, store.ErrLeaseLost; the turn's longest duration,
// ErrTurnTooLong; a stop on request, ErrRunStopped), so that the error map names that cause rather than the
// "context canceled" of the call it cut short. nil stays nil.
func CauseOf(ctx context.Context, err error) error {
	if err == nil || ctx.Err() == nil {
		return err
	}
	cause := context.Cause(ctx)
	for _, own := range []error{ErrStoreBusy, store.ErrLeaseLost, ErrTurnTooLong, ErrRunStopped} {
		if errors.Is(cause, own) && !errors.Is(err, own) {
			return fmt.Errorf("%w: %w", cause, err)
		}
	}
	return err
}

// storeBusyRetry is the Retry-After of a start refused for a busy store,
// or for a lock it could not keep: the store is answering, slowly; a
// retry a second later meets a shorter queue.
const storeBusyRetry = time.Second

// StoreCause names a failure before the stream that the store's state
// caused, not the request nor the upstream (nil for any other err):
//
//   - ErrStoreBusy: 503 store_busy with Retry-After, the start refused
//     before anything of it ran (its lock not taken in time);
//   - store.ErrLeaseLost: 503 lease_lost with Retry-After, the lock taken
//     for it could not be kept (renewed in time), so the turn stopped
//     before its stream began, whatever call it was making (an upstream
//     call cut short by it is not the upstream's failure);
//   - ErrTurnTooLong: 504 turn_too_long;
//   - ErrRunStopped: 409 run_stopped, the run stopped on request before
//     its stream began.
func StoreCause(err error) *Failure {
	switch {
	case errors.Is(err, ErrStoreBusy):
		return &Failure{Kind: KindUnavailable, Code: "store_busy",
			Message: "the store is too busy to start this now; nothing of it ran; retry after Retry-After", Retry: storeBusyRetry}
	case errors.Is(err, store.ErrLeaseLost):
		return &Failure{Kind: KindUnavailable, Code: "lease_lost",
			Message: "the lock taken for this could not be kept (the store did not renew it in time); it stopped before its stream began; retry after Retry-After", Retry: storeBusyRetry}
	case errors.Is(err, ErrTurnTooLong):
		return Fail(KindUpstreamTimeout, "turn_too_long", "the turn ran past its longest allowed duration before its stream began")
	case errors.Is(err, ErrRunStopped):
		return Fail(KindHeld, "run_stopped", "the run was stopped on request before its stream began")
	}
	return nil
}
