package agui2aap_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/bridge/agui2aap"
	"github.com/aapagui/aapagui/store"
)

// threadSaveFaults fails the next fail saves at a run's end, as a
// PostgreSQL restart does; failAll fails every one.
type threadSaveFaults struct {
	store.Store
	fail    atomic.Int32
	failAll atomic.Bool
	calls   atomic.Int32
}

func (s *threadSaveFaults) SaveThreadUnlock(ctx context.Context, th *store.Thread, holder string) error {
	s.calls.Add(1)
	if s.failAll.Load() || s.fail.Add(-1) >= 0 {
		return errors.New("unexpected EOF")
	}
	return s.Store.SaveThreadUnlock(ctx, th, holder)
}

// TestRunFinishedMeansSaved: RUN_FINISHED reaches the client only once the
// thread is saved. A save that fails is tried again, and the thread stays
// on its AAP session (a failed save moved it to a new one); a store that
// does not come back ends the run with RUN_ERROR STORE_ERROR instead.
func TestRunFinishedMeansSaved(t *testing.T) {
	st := &threadSaveFaults{Store: store.NewMemory()}
	e := newEnv(t, func(c *agui2aap.Config) { c.Store = st })
	c := e.conv("t1")
	c.say("hello")
	require.NotNil(t, c.run(t).Finished)
	session := e.onlySession(t)

	st.fail.Store(2)
	before := st.calls.Load()
	c.say("hello again")
	r := c.run(t)
	require.NotNil(t, r.Finished, "finished once saved: %s", r.Body)
	assert.Equal(t, before+3, st.calls.Load(), "two failed tries, then the save")
	c.say("and again")
	require.NotNil(t, c.run(t).Finished)
	assert.Equal(t, session, e.onlySession(t), "the thread stayed on its session")
	assert.Equal(t, []string{"hello", "hello again", "and again"}, userTexts(e.history(t, session)))

	st.failAll.Store(true)
	c.say("lost")
	r = c.run(t)
	assert.Nil(t, r.Finished, "no RUN_FINISHED for a thread not saved")
	require.NotNil(t, r.Error)
	assert.Equal(t, agui2aap.CodeStoreError, *r.Error.Code)
}
