package agui2aap_test

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/agui2aap"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/translate"
)

// A run whose release of the thread fails at first (the store's writer
// busy past its deadline) still leaves the thread free when the client sees
// the end of the run: the next run is not refused with 409. (A run that
// ends as usual frees the thread with its save; the runs refused here,
// a resume with no interrupt open, free it with Release.)
func TestReleaseRetried(t *testing.T) {
	st := &bridgetest.FailingUnlocks{Store: store.NewMemory()}
	e := newEnv(t, func(c *agui2aap.Config) { c.Store = st })
	c := e.conv("flaky")
	for i := range 3 {
		c.say("hello " + strconv.Itoa(i))
		require.NotEmpty(t, c.run(t))
		st.N.Store(2)
		r := e.post(t, "/agents/demo", c.input("", []types.ResumeEntry{approve("no-such-interrupt")}))
		require.Equal(t, http.StatusOK, r.Status, r.Body)
		require.Equal(t, translate.CodeUnknownInterrupt, r.errorCodeInBand(), r.Body)
		assert.EqualValues(t, -1, st.N.Load(), "the release failed twice, then held")
	}
}

// /readyz checks the store as well as the AAP server.
func TestReadyzChecksTheStore(t *testing.T) {
	up := newEnv(t)
	r := up.get(t, "/readyz")
	assert.Equal(t, http.StatusOK, r.Status, r.Body)
	down := newEnv(t, func(c *agui2aap.Config) { c.Store = bridgetest.DownStore{Store: store.NewMemory()} })
	r = down.get(t, "/readyz")
	assert.Equal(t, http.StatusServiceUnavailable, r.Status, r.Body)
	assert.Equal(t, "not_ready", r.errorCode())
}

// A run's end saves the thread and frees it in one write.
func TestRunEndIsOneWrite(t *testing.T) {
	var mu sync.Mutex
	ops := map[string]int{}
	count := func(ctx context.Context, op string) (context.Context, func(error)) {
		return ctx, func(error) {
			mu.Lock()
			defer mu.Unlock()
			ops[op]++
		}
	}
	e := newEnv(t, func(c *agui2aap.Config) { c.Store = store.Observe(store.NewMemory(), count) })
	c := e.conv("one-write")
	for i := range 2 {
		c.say("hello " + strconv.Itoa(i))
		require.NotEmpty(t, c.run(t))
	}
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, 2, ops["SaveThreadUnlock"])
	assert.Zero(t, ops["SaveThread"])
	assert.Zero(t, ops["UnlockThread"])
}

// stolenThreadLock is a store in which another holder takes a thread's
// lock after its first take (as when this process stalls past the lease
// and another replica takes the thread): every renewal finds it held.
type stolenThreadLock struct {
	store.Threads
	mu    sync.Mutex
	taken map[string]bool
}

func (s *stolenThreadLock) LockThread(ctx context.Context, owner, id, holder string, ttl time.Duration) (bool, time.Duration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.taken[holder] {
		return false, ttl, nil
	}
	s.taken[holder] = true
	return s.Threads.LockThread(ctx, owner, id, holder, ttl)
}

// RenewThreadLock finds the lock held by the other holder.
func (s *stolenThreadLock) RenewThreadLock(context.Context, string, string, string, time.Duration) (bool, error) {
	return false, nil
}

// A run whose lock another holder took stops (its AAP turn is
// cancelled) rather than run beside the run that took over, and ends
// in-band with RUN_ERROR LEASE_LOST, never a 500.
func TestRunStopsWhenItsLockIsLost(t *testing.T) {
	cancelled := make(chan struct{}, 1)
	up := newFakeAAP(t, func(w http.ResponseWriter, r *http.Request, _ int, _ *aap.PostSessionTurnRequest) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte("event: turn_start\ndata: {}\n\nevent: text_delta\ndata: {\"delta\":\"working\"}\n\n"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		cancelled <- struct{}{}
	})
	e := newBridge(t, up.URL, func(c *agui2aap.Config) {
		c.Store = &stolenThreadLock{Threads: store.NewMemory(), taken: map[string]bool{}}
		c.LeaseTTL = 300 * time.Millisecond
	})
	c := e.conv("t1")
	c.say("hi")
	res := e.post(t, "/agents/demo", c.input("r1", nil))
	require.Equal(t, http.StatusOK, res.Status, res.Body)
	assert.Equal(t, "LEASE_LOST", res.errorCodeInBand())
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the AAP turn was not cancelled")
	}
}

// A process that cannot keep more runs alive refuses a run's start up
// front: with a scheduling-delay bound no process meets, a start, once
// the process's ticker has measured, is answered 503 overloaded with
// Retry-After before the AAP server gets a turn.
func TestOverloadedProcessRefusesRunsUpFront(t *testing.T) {
	up := newFakeAAP(t, func(w http.ResponseWriter, _ *http.Request, _ int, _ *aap.PostSessionTurnRequest) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte("event: turn_start\ndata: {}\n\nevent: turn_stop\ndata: {\"stopReason\":\"end_turn\"}\n\n"))
	})
	e := newBridge(t, up.URL, func(c *agui2aap.Config) {
		c.MaxSchedulingDelay = time.Nanosecond
		c.MaxRenewalLag = -1
	})
	c := e.conv("t1")
	c.say("hi")
	var res *response
	require.Eventually(t, func() bool {
		res = e.post(t, "/agents/demo", c.input(c.newID("r"), nil))
		return res.Status != http.StatusOK
	}, 10*time.Second, 10*time.Millisecond, "a start refused once the process's lateness is measured")
	turns := len(up.turnRequests())
	assert.Equal(t, http.StatusServiceUnavailable, res.Status, res.Body)
	assert.Equal(t, "overloaded", res.errorCode())
	assert.NotEmpty(t, res.Header.Get("Retry-After"))
	res = e.post(t, "/agents/demo", c.input(c.newID("r"), nil))
	assert.Equal(t, "overloaded", res.errorCode())
	assert.Equal(t, turns, len(up.turnRequests()), "nothing of a refused run reached the AAP server")
}
