package aap2agui_test

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/store"
)

// A turn whose release of the session fails at first (the store's writer
// busy past its deadline) still leaves the session free when the client
// sees the end of the turn: the next turn is not refused with 409. (A turn
// that ends as usual frees its lock with its last save; these are refused
// after taking the lock, and free it with Release.)
func TestReleaseRetried(t *testing.T) {
	st := &bridgetest.FailingUnlocks{Store: store.NewMemory()}
	e := newEnv(t, demoAgent(t), func(c *aap2agui.Config) { c.Store = st })
	id := e.createSession(t, aap.PostSessionsRequest{})
	for i := range 3 {
		st.N.Store(2)
		_, err := e.Client.Turn(bridgetest.Context(t), id, &aap.PostSessionTurnRequest{Agent: &aap.AgentConfig{Name: "another"}, Messages: []aap.Message{aap.UserText("hello " + strconv.Itoa(i))}})
		requireHTTPError(t, err, http.StatusBadRequest, "invalid_request")
		assert.EqualValues(t, -1, st.N.Load(), "the release failed twice, then held")
		resp, err := e.Client.Turn(bridgetest.Context(t), id, &aap.PostSessionTurnRequest{Messages: []aap.Message{aap.UserText("hello " + strconv.Itoa(i))}})
		require.NoError(t, err, "turn %d", i)
		assert.Equal(t, aap.StopEndTurn, resp.StopReason)
	}
}

// /readyz checks the store.
func TestReadyzChecksTheStore(t *testing.T) {
	up := newEnv(t, demoAgent(t))
	r := doRaw(t, http.MethodGet, up.Root+"/readyz", "", "")
	assert.Equal(t, http.StatusOK, r.Status, r.Body)
	down := newEnv(t, demoAgent(t), func(c *aap2agui.Config) { c.Store = bridgetest.DownStore{Store: store.NewMemory()} })
	r = doRaw(t, http.MethodGet, down.Root+"/readyz", "", "")
	requireJSONError(t, r, http.StatusServiceUnavailable, "not_ready")
}

// stolenLock is a store in which another holder takes a session's lock
// after its first take (as when this process stalls past the lease):
// every renewal finds it held.
type stolenLock struct {
	store.Store
	mu    sync.Mutex
	taken map[string]bool
}

func (s *stolenLock) Lock(ctx context.Context, id, holder string, ttl time.Duration) (bool, time.Duration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.taken[holder] {
		return false, ttl, nil
	}
	s.taken[holder] = true
	return s.Store.Lock(ctx, id, holder, ttl)
}

// RenewLock finds the lock held by the other holder.
func (s *stolenLock) RenewLock(context.Context, string, string, time.Duration) (bool, error) {
	return false, nil
}

// A turn whose lock another holder took stops (its agent call is
// cancelled) rather than run beside the turn that took over, and its
// stream ends with an error stop named lease_lost, never a 500; in mode
// none it is answered 503 lease_lost with Retry-After.
func TestTurnStopsWhenItsLockIsLost(t *testing.T) {
	cancelled := make(chan struct{}, 2)
	up := newFakeUpstream(t, func(w http.ResponseWriter, r *http.Request, in *runInput, _ int) {
		sseEvents(w, runStarted(in), `{"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}`,
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"working"}`)
		<-r.Context().Done()
		cancelled <- struct{}{}
	})
	const ttl = 300 * time.Millisecond
	e := newEnv(t, up.URL, func(c *aap2agui.Config) {
		c.Store = &stolenLock{Store: store.NewMemory(), taken: map[string]bool{}}
		c.LeaseTTL = ttl
	})
	id := e.createSession(t, aap.PostSessionsRequest{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var stop *aap.TurnStop
	for ev, err := range e.Client.StreamTurn(ctx, id, &aap.PostSessionTurnRequest{Stream: aap.StreamDelta, Messages: []aap.Message{aap.UserText("hi")}}) {
		require.NoError(t, err, "the stream ends in-band")
		if ts, ok := ev.(*aap.TurnStop); ok {
			stop = ts
		}
	}
	require.NoError(t, ctx.Err(), "the turn went on after its lock was lost")
	select {
	case <-cancelled:
	case <-ctx.Done():
		t.Fatal("the agent call was not cancelled")
	}
	require.NotNil(t, stop, "the stream ends with turn_stop")
	assert.Equal(t, aap.StopError, stop.StopReason)
	require.NotNil(t, stop.Error, "the error stop is named")
	assert.Equal(t, "lease_lost", stop.Error.Code)

	id = e.createSession(t, aap.PostSessionsRequest{})
	r := doRaw(t, http.MethodPost, e.URL+"/sessions/"+id+"/turns", "", `{"stream":"none","messages":[{"role":"user","content":"hi"}]}`)
	requireJSONError(t, r, http.StatusServiceUnavailable, "lease_lost")
	assert.NotEmpty(t, r.Header.Get("Retry-After"))
}
