package agui2aap_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/agui2aap"
	"github.com/aapagui/aapagui/store"
)

// busyThreadLocks is a thread store too busy to take a run's lock:
// LockThread waits until its caller gives up.
type busyThreadLocks struct{ store.Threads }

func (busyThreadLocks) LockThread(ctx context.Context, owner, id, holder string, ttl time.Duration) (bool, time.Duration, error) {
	<-ctx.Done()
	return false, 0, ctx.Err()
}

// A run start the store cannot take within StartTimeout is refused with
// 503 store_busy and Retry-After, before anything of the run reaches the
// AAP server; so is one whose thread the store cannot read in time.
func TestBusyStoreRefusesTheRunStart(t *testing.T) {
	var turns atomic.Int32
	f := newFakeAAP(t, func(w http.ResponseWriter, _ *http.Request, _ int, _ *aap.PostSessionTurnRequest) {
		turns.Add(1)
		writeEvents(w, &aap.TurnStart{}, &aap.Text{Text: "hi"}, &aap.TurnStop{StopReason: aap.StopEndTurn})
	})
	for name, st := range map[string]store.Threads{
		"lock":   busyThreadLocks{store.NewMemory()},
		"thread": stalledThreads(),
	} {
		t.Run(name, func(t *testing.T) {
			e := newBridge(t, f.URL, func(c *agui2aap.Config) {
				c.Store = st
				c.StartTimeout = 50 * time.Millisecond
			})
			c := e.conv("busy")
			c.say("hello")
			r := e.post(t, "/agents/demo", c.input("", nil))
			assert.Equal(t, http.StatusServiceUnavailable, r.Status, r.Body)
			assert.Equal(t, "store_busy", r.errorCode())
			assert.Equal(t, "1", r.Header.Get("Retry-After"))
		})
	}
	assert.Zero(t, turns.Load(), "no turn reached the AAP server")
	f.mu.Lock()
	defer f.mu.Unlock()
	assert.Empty(t, f.creates, "no session was created")
}

// stalledThreads is a thread store whose reads wait for their caller to
// give up (stallingThreads, stalled from the start).
func stalledThreads() *stallingThreads {
	s := &stallingThreads{Threads: store.NewMemory(), arrived: make(chan struct{}, 16)}
	s.stall.Store(true)
	return s
}
