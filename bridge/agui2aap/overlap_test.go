package agui2aap_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/agui2aap"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/internal/testkit/streamtest"
	"github.com/aapagui/aapagui/store"
)

// parkedThreads is a store whose next n thread reads wait, once armed,
// until all n have arrived and the test opens them: readers held side by
// side, so that any lock they take shows as a conflict. Every other call
// passes through.
type parkedThreads struct {
	store.Store
	armed   atomic.Int64 // reads still to park
	arrived chan struct{}
	open    chan struct{}
}

func (p *parkedThreads) GetThread(ctx context.Context, owner, id string) (*store.Thread, error) {
	if p.armed.Add(-1) >= 0 {
		p.arrived <- struct{}{}
		select {
		case <-p.open:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return p.Store.GetThread(ctx, owner, id)
}

// Reading a thread takes no run lock: forty connects of one thread at
// once (a page sends two on load; tabs reload) all get its conversation,
// none 409. While they are all in flight, a run of the thread starts and
// answers, a second run meanwhile is refused with 409 run_in_progress,
// and a connect during the run joins it; the thread goes on in its one
// AAP session.
func TestOverlappingConnectsAndRuns(t *testing.T) {
	const readers = 40
	release := make(chan struct{})
	f := newFakeAAP(t, func(w http.ResponseWriter, r *http.Request, n int, req *aap.PostSessionTurnRequest) {
		switch n {
		case 0:
			answerText("first answer")(w, r, n, req)
		case 1:
			pausingAnswer(6, 3, release)(w, r, n, req)
		default:
			answerText(fmt.Sprintf("answer %d", n))(w, r, n, req)
		}
	})
	st := &parkedThreads{Store: store.NewMemory(), arrived: make(chan struct{}, readers), open: make(chan struct{})}
	e := newBridge(t, f.URL, func(c *agui2aap.Config) {
		c.Store = st
		c.OnClientGone = agui2aap.ClientGoneFinish
	})
	let := sync.OnceFunc(func() { close(release) })
	t.Cleanup(let)
	unpark := sync.OnceFunc(func() { close(st.open) })
	t.Cleanup(unpark)

	c := e.conv("busy")
	c.say("hello")
	require.Equal(t, []string{"first answer"}, c.run(t).Text)

	// Forty connects at once, each parked in its read of the thread.
	st.armed.Store(readers)
	answers := make([]*response, readers)
	early := make(chan int, readers) // connects answered while the others read
	var wg sync.WaitGroup
	for i := range readers {
		wg.Go(func() {
			answers[i] = e.post(t, "/agents/demo/connect", `{"threadId":"busy"}`)
			early <- i
		})
	}
	fail := func(format string, args ...any) {
		unpark()
		wg.Wait()
		t.Fatalf(format, args...)
	}
	for n := range readers {
		select {
		case <-st.arrived:
		case i := <-early:
			fail("connect %d answered %d while %d others read the thread: %s", i, answers[i].Status, n, answers[i].Body)
		case <-time.After(bridgetest.Timeout):
			fail("only %d of %d connects read the thread side by side", n, readers)
		}
	}

	// Meanwhile a run of the thread starts and streams.
	c.say("tell me more")
	body, err := json.Marshal(c.input("run-2", nil))
	require.NoError(t, err)
	run := streamtest.Open(t, bridgetest.Context(t), http.MethodPost, e.URL+"/agents/demo", string(body), nil)
	require.Equal(t, http.StatusOK, run.Status, "a run while the thread is read: %s", run.Body)
	had := run.Until(t, "TEXT_MESSAGE_CONTENT", 3)

	// A second run while it goes is refused, visibly.
	other := e.conv("busy")
	other.n = 100 // ids of its own: another tab
	other.Messages = append(other.Messages, c.Messages[:2]...)
	other.say("me too")
	busy := e.post(t, "/agents/demo", other.input("run-3", nil))
	assert.Equal(t, http.StatusConflict, busy.Status, busy.Body)
	assert.Equal(t, "run_in_progress", busy.errorCode())
	assert.Contains(t, busy.errorMessage(), "a run is already in progress on this thread")

	// A connect during the run joins it.
	join := streamtest.Open(t, bridgetest.Context(t), http.MethodPost, e.URL+"/agents/demo/connect", `{"threadId":"busy"}`, nil)
	require.Equal(t, http.StatusOK, join.Status, join.Body)
	assert.Equal(t, had, joined(t, join.Until(t, "TEXT_MESSAGE_CONTENT", 3), "tell me more"))

	// The parked connects answer, with the conversation, and the run
	// goes on to its end.
	unpark()
	wg.Wait()
	for i, a := range answers {
		require.Equal(t, http.StatusOK, a.Status, "connect %d: %s", i, a.Body)
		require.Equal(t, []string{"RUN_STARTED", "MESSAGES_SNAPSHOT", "RUN_FINISHED"}, a.types(), "connect %d", i)
		msgs := a.Events[1].(*events.MessagesSnapshotEvent).Messages
		require.GreaterOrEqual(t, len(msgs), 2, "connect %d", i)
		assert.Equal(t, "hello", msgs[0].Content, "connect %d", i)
		assert.Equal(t, "first answer", msgs[1].Content, "connect %d", i)
	}
	let()
	rest := run.Rest()
	require.NotEmpty(t, rest)
	assert.Contains(t, rest[len(rest)-1].Data, `"type":"RUN_FINISHED"`)
	assert.Equal(t, rest, join.Rest(), "the joined client follows the run to its end")

	// The thread goes on in its one AAP session.
	var msgs []types.Message
	require.Eventually(t, func() bool {
		msgs, _ = c.hydrate(t)
		return len(msgs) == 4
	}, bridgetest.Timeout, 20*time.Millisecond, "hello, first answer, tell me more and its answer, once the run is saved")
	c.Messages = msgs
	c.say("and now")
	assert.Equal(t, []string{"answer 2"}, c.run(t).Text)
	f.mu.Lock()
	defer f.mu.Unlock()
	assert.Len(t, f.creates, 1, "one AAP session")
}

// A hydration whose snapshot needs new ids (the thread's delivered ids no
// longer match the history, as after a compaction) is answered while the
// thread's run lock is held, without saving them; once the lock is free a
// hydration saves them, and the next run, sent with them, continues the
// same AAP session.
func TestHydrationRenumbersOnlyWhenFree(t *testing.T) {
	e := newEnv(t)
	c := e.conv("renumber")
	c.say("hello there")
	c.run(t)
	c.say("and again")
	c.run(t)
	session := e.onlySession(t)
	ctx := bridgetest.Context(t)
	th := e.thread(t, "renumber")
	th.Delivered = th.Delivered[:len(th.Delivered)-1] // one id short: the history no longer matches
	require.NoError(t, e.Store.SaveThread(ctx, th, ""))

	ok, _, err := e.Store.LockThread(ctx, "", "renumber", "a-run", time.Minute)
	require.NoError(t, err)
	require.True(t, ok)
	msgs, _ := c.hydrate(t)
	require.Len(t, msgs, 4)
	assert.Equal(t, "hist-1", msgs[0].ID, "positional ids")
	assert.Equal(t, th.Delivered, e.thread(t, "renumber").Delivered, "not saved while the lock is held")
	require.NoError(t, e.Store.UnlockThread(ctx, "", "renumber", "a-run"))

	msgs, _ = c.hydrate(t)
	require.Len(t, msgs, 4)
	assert.Equal(t, []string{"hist-1", "hist-2", "hist-3", "hist-4"}, e.thread(t, "renumber").Delivered, "saved once the lock is free")
	c.Messages = msgs
	c.say("still there?")
	assert.Equal(t, []string{demo.EchoText("still there?")}, c.run(t).Text)
	assert.Equal(t, session, e.onlySession(t), "the same AAP session")
}
