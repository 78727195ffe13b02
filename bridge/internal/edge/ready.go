package edge

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"golang.org/x/sync/singleflight"

	"github.com/aapagui/aapagui/bridge/internal/fault"
)

// ReadyTTL is how long a readiness check's result answers GET /readyz:
// however many callers probe, the store and the upstreams are checked at
// most once in that time, one check at a time.
const ReadyTTL = 3 * time.Second

// Ready runs a bridge's readiness check (the store, the upstreams) for
// GET /readyz at most once per ReadyTTL: callers within it get the last
// result, and callers that find it stale share one check. The check runs
// within ReadyContext, detached from any one caller, so that a caller
// that leaves does not fail it for the others.
type Ready[T any] struct {
	check func(context.Context) T
	clock func() time.Time

	mu    sync.Mutex
	last  T
	at    time.Time
	valid bool
	calls singleflight.Group
}

// NewReady returns the readiness of check, timed by clock (nil:
// time.Now).
func NewReady[T any](clock func() time.Time, check func(context.Context) T) *Ready[T] {
	if clock == nil {
		clock = time.Now
	}
	return &Ready[T]{check: check, clock: clock}
}

// Get returns the last result when it is younger than ReadyTTL, else the
// result of a check it runs or joins; ctx's error when ctx ends first.
func (r *Ready[T]) Get(ctx context.Context) (T, error) {
	if v, ok := r.fresh(); ok {
		return v, nil
	}
	ch := r.calls.DoChan("", func() (any, error) {
		if v, ok := r.fresh(); ok {
			return v, nil // a check ended between the look and the call
		}
		ctx, cancel := ReadyContext(context.WithoutCancel(ctx))
		defer cancel()
		v := r.check(ctx)
		r.mu.Lock()
		r.last, r.at, r.valid = v, r.clock(), true
		r.mu.Unlock()
		return v, nil
	})
	select {
	case res := <-ch:
		return res.Val.(T), nil
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// fresh returns the last result if it is younger than ReadyTTL.
func (r *Ready[T]) fresh() (T, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last, r.valid && r.clock().Sub(r.at) < ReadyTTL
}

// NotReady is the 503 not_ready of a readiness probe: why (the store or
// the upstream that failed) only for a caller that may know it (MayKnow).
func NotReady(why string, mayKnow bool) *fault.Failure {
	if !mayKnow {
		why = "the server is not ready"
	}
	return fault.Fail(fault.KindUnavailable, "not_ready", why)
}

// ReadyContext bounds a readiness probe (GET /readyz): what it checks
// must answer within 2 s, in both bridges.
func ReadyContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, 2*time.Second)
}

// AnswerReady answers a readiness probe (GET /readyz) from its last check:
// one that did not finish (err), or found the server not ready (notReady,
// "" when ready), is 503 not_ready, returned, whose reason only a caller
// that may know it is told (mayKnow); a ready server answers 200 with
// details to such a caller, and only {"status":"ok"} to another.
func AnswerReady(c *gin.Context, mayKnow bool, err error, notReady string, details any) error {
	switch {
	case err != nil:
		return NotReady("the readiness check did not finish", mayKnow)
	case notReady != "":
		return NotReady(notReady, mayKnow)
	case !mayKnow:
		JSON(c, http.StatusOK, struct {
			Status string `json:"status"`
		}{"ok"})
	default:
		JSON(c, http.StatusOK, details)
	}
	return nil
}
