package agui2aap_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/bridge/agui2aap"
	"github.com/aapagui/aapagui/store"
)

// requireLeaseLeft checks a 409's Retry-After and the time the running
// turn's lease has left, in the body: within the lease's TTL.
func requireLeaseLeft(t *testing.T, h http.Header, body string) {
	t.Helper()
	secs, err := strconv.Atoi(h.Get("Retry-After"))
	require.NoError(t, err, "Retry-After %q", h.Get("Retry-After"))
	assert.GreaterOrEqual(t, secs, 1)
	assert.LessOrEqual(t, secs, int(store.LeaseTTL.Seconds()))
	var er struct {
		Error struct {
			LeaseRemainingMs int64 `json:"leaseRemainingMs"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &er), body)
	assert.Positive(t, er.Error.LeaseRemainingMs, body)
	assert.LessOrEqual(t, er.Error.LeaseRemainingMs, store.LeaseTTL.Milliseconds(), body)
}

// failingUnlocks fails the next n releases of a lock, as the SQLite store
// did under load ("unlock: context deadline exceeded").
type failingUnlocks struct {
	store.Store
	n atomic.Int32
}

func (s *failingUnlocks) Unlock(ctx context.Context, id, holder string) error {
	if s.n.Add(-1) >= 0 {
		return context.DeadlineExceeded
	}
	return s.Store.Unlock(ctx, id, holder)
}

func (s *failingUnlocks) UnlockThread(ctx context.Context, owner, id, holder string) error {
	if s.n.Add(-1) >= 0 {
		return context.DeadlineExceeded
	}
	return s.Store.UnlockThread(ctx, owner, id, holder)
}

// A run whose release of the thread fails at first (the store's writer
// busy past its deadline) still leaves the thread free when the client sees
// the end of the run: the next run is not refused with 409. (A run that
// ends as usual frees the thread with its save; the hydrations here read
// the thread and free it with Release.)
func TestReleaseRetried(t *testing.T) {
	st := &failingUnlocks{Store: store.NewMemory()}
	e := newEnv(t, func(c *agui2aap.Config) { c.Store = st })
	c := e.conv("flaky")
	for i := range 3 {
		c.say("hello " + strconv.Itoa(i))
		require.NotEmpty(t, c.run(t))
		st.n.Store(2)
		msgs, _ := c.hydrate(t)
		require.NotEmpty(t, msgs)
		assert.EqualValues(t, -1, st.n.Load(), "the release failed twice, then held")
	}
}

// downStore is a store whose database cannot be reached.
type downStore struct{ store.Store }

func (downStore) Ping(context.Context) error { return errors.New("dial tcp: connection refused") }

// /readyz checks the store as well as the AAP server.
func TestReadyzChecksTheStore(t *testing.T) {
	up := newEnv(t)
	r := up.get(t, "/readyz")
	assert.Equal(t, http.StatusOK, r.Status, r.Body)
	down := newEnv(t, func(c *agui2aap.Config) { c.Store = downStore{store.NewMemory()} })
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
