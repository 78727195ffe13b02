package aap2agui_test

import (
	"context"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/store"
)

// busyLocks is a store too busy to take a turn lock: Lock waits until its
// caller gives up.
type busyLocks struct{ store.Store }

func (busyLocks) Lock(ctx context.Context, id, holder string, ttl time.Duration) (bool, time.Duration, error) {
	<-ctx.Done()
	return false, 0, ctx.Err()
}

// LockLoadSession, a turn's start, waits as Lock does.
func (busyLocks) LockLoadSession(ctx context.Context, owner, id, holder string, known int64, ttl time.Duration) (*store.Session, []store.Entry, bool, time.Duration, error) {
	<-ctx.Done()
	return nil, nil, false, 0, ctx.Err()
}

// A turn start the store cannot take within Config.StartTimeout is
// refused with 503 store_busy and Retry-After, before anything of the
// turn runs: the agent is never called. (It used to wait for the store
// however long it took, and time out later, mid-stream.)
func TestBusyStoreRefusesTheTurnStart(t *testing.T) {
	var called atomic.Bool
	up := newFakeUpstream(t, func(w http.ResponseWriter, r *http.Request, in *runInput, _ int) {
		called.Store(true)
		sseEvents(w, textRun(in, "m", "hi")...)
	})
	e := newEnv(t, up.URL, func(c *aap2agui.Config) {
		c.Store = busyLocks{store.NewMemory()}
		c.StartTimeout = 50 * time.Millisecond
	})
	id := e.createSession(t, aap.PostSessionsRequest{})
	r := doRaw(t, http.MethodPost, e.URL+"/sessions/"+id+"/turns", "", `{"stream":"delta","messages":[{"role":"user","content":"hi"}]}`)
	requireJSONError(t, r, http.StatusServiceUnavailable, "store_busy")
	assert.Equal(t, "1", r.Header.Get("Retry-After"))
	assert.False(t, called.Load(), "the agent was called")
}

// lostOnRenewal is a stolenLock whose heartbeat's RenewLock finds the
// lock taken too.
type lostOnRenewal struct{ stolenLock }

func (s *lostOnRenewal) RenewLock(context.Context, string, string, time.Duration) (bool, error) {
	return false, nil
}

func (s *lostOnRenewal) RenewThreadLock(context.Context, string, string, string, time.Duration) (bool, error) {
	return false, nil
}

// A turn whose lock is lost while the agent is being called (its answer
// has not begun) is told so: 503 lease_lost with Retry-After, not 502
// upstream_unreachable, which blamed an agent that was fine.
func TestLockLostBeforeTheStreamIsNotTheUpstreamsFailure(t *testing.T) {
	up := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body) // (so that net/http sees the call's end)
		<-r.Context().Done()      // no answer until the call is cancelled
	}))
	e := newEnv(t, up, func(c *aap2agui.Config) {
		c.Store = &lostOnRenewal{stolenLock{Store: store.NewMemory(), taken: map[string]bool{}}}
	})
	id := e.createSession(t, aap.PostSessionsRequest{})
	r := doRaw(t, http.MethodPost, e.URL+"/sessions/"+id+"/turns", "", `{"stream":"delta","messages":[{"role":"user","content":"hi"}]}`)
	requireJSONError(t, r, http.StatusServiceUnavailable, "lease_lost")
	assert.NotEmpty(t, r.Header.Get("Retry-After"))
	require.NotContains(t, r.Body, "upstream")
}
