package agui2aap_test

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
