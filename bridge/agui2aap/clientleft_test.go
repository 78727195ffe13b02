package agui2aap_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/agui2aap"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/internal/testkit/streamtest"
	"github.com/aapagui/aapagui/store"
)

// stallingThreads is a thread store whose GetThread, while stall is set,
// waits for its caller to give up, as a busy database would.
type stallingThreads struct {
	store.Threads
	stall   atomic.Bool
	arrived chan struct{}
}

func (s *stallingThreads) GetThread(ctx context.Context, owner, id string) (*store.Thread, error) {
	if s.stall.Load() {
		s.arrived <- struct{}{}
		<-ctx.Done()
		return nil, fmt.Errorf("store: get thread: %w", ctx.Err())
	}
	return s.Threads.GetThread(ctx, owner, id)
}

// A client that goes away while agui2aap waits for the AAP server (a run's
// new session, a hydration's history) or for its store is no server
// error: the request is counted and logged with status 499 (client closed
// request), never as a 5xx, and no line is logged at warning or error
// level.
func TestClientLeft(t *testing.T) {
	var stallUpstream atomic.Bool
	upstreamArrived := make(chan struct{}, 1)
	quit := make(chan struct{})
	agent := demo.NewAAPAgent(demo.AAPAgentOptions{})
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if stallUpstream.Load() && r.URL.Path != "/meta" {
			// Read to the end: only then does net/http watch the
			// connection and cancel the request when it closes.
			_, _ = io.Copy(io.Discard, r.Body)
			upstreamArrived <- struct{}{}
			select {
			case <-r.Context().Done():
			case <-quit:
				t.Errorf("%s %s went on after its client left", r.Method, r.URL.Path)
			}
			return
		}
		agent.ServeHTTP(w, r)
	}))
	t.Cleanup(upstream.Close)
	t.Cleanup(func() { close(quit) })
	threads := &stallingThreads{Threads: store.NewMemory(), arrived: make(chan struct{}, 1)}
	var logs bridgetest.SyncBuffer
	e := newBridge(t, upstream.URL, func(c *agui2aap.Config) {
		c.Store = threads
		c.Logger = zerolog.New(&logs).Level(zerolog.InfoLevel)
	})

	c := e.conv("left")
	c.say("hello there")
	c.run(t)

	// leave sends a run and goes away once the bridge waits on arrived.
	leave := func(in types.RunAgentInput, arrived chan struct{}) {
		t.Helper()
		body, err := json.Marshal(in)
		require.NoError(t, err)
		bridgetest.Leave(t, e.URL+"/agents/demo", string(body), arrived)
		// The client is gone before the bridge has finished with the
		// run: the next one waits for the thread to be free.
		require.Eventually(t, func() bool {
			ok, _, err := threads.LockThread(context.Background(), "", in.ThreadID, "probe", time.Second)
			if ok && err == nil {
				_ = threads.UnlockThread(context.Background(), "", in.ThreadID, "probe")
			}
			return ok && err == nil
		}, bridgetest.Timeout, 5*time.Millisecond, "the thread is freed")
	}

	stallUpstream.Store(true)
	fresh := e.conv("left-new")
	fresh.say("hello")
	leave(fresh.input("", nil), upstreamArrived) // a new thread's session
	hydrate := c.input("", nil)
	hydrate.Messages = []types.Message{}
	leave(hydrate, upstreamArrived) // a hydration's history
	stallUpstream.Store(false)
	threads.stall.Store(true)
	leave(hydrate, threads.arrived) // a hydration's thread
	c.say("and again")
	leave(c.input("", nil), threads.arrived) // a run's thread
	threads.stall.Store(false)

	bridgetest.CountedAsLeft(t, e.URL+"/metrics", "agui2aap_http_requests_total", 4, "route", "/agents/:name")
	var left int
	for _, l := range bridgetest.LogLines(t, logs.String(), "request") {
		if l["status"] == 499.0 {
			left++
			assert.Equal(t, "info", l["level"], l)
		}
	}
	assert.Equal(t, 4, left, "four request lines with status 499")
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		assert.NotContains(t, line, `"level":"error"`)
		assert.NotContains(t, line, `"level":"warn"`)
	}

	// The thread is as it was: the next run goes on.
	c.Messages = c.Messages[:len(c.Messages)-1]
	c.say("still there?")
	assert.Equal(t, []string{demo.EchoText("still there?")}, c.run(t).Text)
}

// With OnClientGone finish, a run whose client left mid-answer runs to its
// end: the AAP turn is not cancelled, and the thread is saved with the
// whole answer delivered, so that the next run continues the same
// session. (With cancel, the default, the turn stops: TestClientLeft.)
func TestClientLeftFinish(t *testing.T) {
	release := make(chan struct{})
	cancelled := make(chan bool, 2)
	f := newFakeAAP(t, func(w http.ResponseWriter, r *http.Request, n int, _ *aap.PostSessionTurnRequest) {
		if n > 0 {
			writeEvents(w, &aap.TurnStart{}, &aap.Text{Text: "again"}, &aap.TurnStop{StopReason: aap.StopEndTurn})
			return
		}
		writeEvents(w, &aap.TurnStart{}, &aap.TextDelta{Delta: "the first half, "})
		select {
		case <-release:
		case <-r.Context().Done():
			cancelled <- true
			return
		}
		writeEvents(w, &aap.TextDelta{Delta: "and the second."}, &aap.TurnStop{StopReason: aap.StopEndTurn})
		cancelled <- false
	})
	e := newBridge(t, f.URL, func(c *agui2aap.Config) { c.OnClientGone = agui2aap.ClientGoneFinish })
	c := e.conv("finish")
	c.say("hello")
	body, err := json.Marshal(c.input("", nil))
	require.NoError(t, err)
	// The client leaves mid-answer.
	streamtest.LeaveAfter(t, bridgetest.Context(t), e.URL+"/agents/demo", string(body), "the first half")
	close(release)

	bridgetest.RanToItsEnd(t, cancelled)
	require.Eventually(t, func() bool {
		th, err := e.Store.GetThread(bridgetest.Context(t), "", "finish")
		return err == nil && len(th.Delivered) == 2
	}, bridgetest.Timeout, 10*time.Millisecond, "the thread saved with the answer delivered")

	// The client comes back with the answer it would have had: the next
	// run is the same session's next turn, not a new session.
	answer := e.thread(t, "finish").Delivered[1]
	c.apply([]events.Event{
		events.NewTextMessageStartEvent(answer, events.WithRole("assistant")),
		events.NewTextMessageContentEvent(answer, "the first half, and the second."),
		events.NewTextMessageEndEvent(answer),
	})
	c.say("and then?")
	r := c.run(t)
	assert.Empty(t, r.errorCodeInBand())
	f.mu.Lock()
	defer f.mu.Unlock()
	assert.Len(t, f.creates, 1, "one AAP session for the thread")
	assert.Len(t, f.turns, 2)
}
