package agui2aap_test

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/bridge/agui2aap"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/internal/testkit/pgtest"
	"github.com/aapagui/aapagui/store"
	_ "github.com/aapagui/aapagui/store/postgres"
)

// TestFinishedRunsSurviveDatabaseFaults: threads running through two
// agui2aap replicas on one PostgreSQL database while the database drops
// every connection, and, where the test may restart it, restarts. Runs
// may fail while the database is away; every run the client saw finish is
// saved (its message delivered to the thread's session), and no thread
// moves to a new AAP session because a save failed.
func TestFinishedRunsSurviveDatabaseFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("a load test")
	}
	dsn, app := pgtest.Tagged(t)
	upstream := demoAAPServer(t)
	var replicas []*env
	for range 2 {
		st, err := store.Open(dsn)
		require.NoError(t, err)
		t.Cleanup(func() { st.Close() })
		replicas = append(replicas, newBridge(t, upstream, func(c *agui2aap.Config) { c.Store = st }))
	}

	const threads, runs = 12, 40
	var finished sync.Map // user message id → true
	var nFinished, nFailed atomic.Int32
	var wg sync.WaitGroup
	convs := make([]*conv, threads)
	for i := range convs {
		convs[i] = replicas[0].conv(fmt.Sprintf("faults-%d", i))
		c := convs[i]
		wg.Go(func() {
			for n := range runs {
				c.e = replicas[(i+n)%2]
				id := c.say(fmt.Sprintf("hello %d-%d", i, n))
				r := c.e.post(t, "/agents/demo", c.input("", nil))
				if r.Status == http.StatusOK && len(r.Events) > 0 {
					if _, ok := r.Events[len(r.Events)-1].(*events.RunFinishedEvent); ok {
						c.apply(r.Events)
						finished.Store(id, true)
						nFinished.Add(1)
						continue
					}
				}
				c.dropLast() // the client sends it again with its next message
				nFailed.Add(1)
				time.Sleep(100 * time.Millisecond)
			}
		})
	}

	pgtest.Faults(t, app, 300*time.Millisecond)
	wg.Wait()
	t.Logf("%d runs finished, %d failed or refused while the database was away", nFinished.Load(), nFailed.Load())
	require.Positive(t, nFinished.Load())

	assert.Equal(t, threads, len(replicas[0].sessions(t)), "AAP sessions: no thread moved to a new one")
	for i, c := range convs {
		var th *store.Thread
		var err error
		require.Eventually(t, func() bool {
			th, err = replicas[0].Store.GetThread(bridgetest.Context(t), "", c.ThreadID)
			return err == nil
		}, bridgetest.Timeout, 50*time.Millisecond, "thread %d", i)
		delivered := map[string]int{}
		for _, id := range th.Delivered {
			delivered[id]++
		}
		finished.Range(func(k, _ any) bool {
			id := k.(string)
			if _, mine := delivered[id]; mine || len(id) > 0 && c.has(id) {
				assert.Equal(t, 1, delivered[id], "thread %d: the finished run's %s is delivered once", i, id)
			}
			return true
		})
	}
}

// has reports whether the conversation holds a message with id.
func (c *conv) has(id string) bool {
	for _, m := range c.Messages {
		if m.ID == id {
			return true
		}
	}
	return false
}
