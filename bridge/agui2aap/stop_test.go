package agui2aap_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
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

// hangingAnswer is an AAP server whose first turn streams words deltas
// and then waits for its request to end (a long answer a user stops),
// closing ended when it does; later turns answer "done" at once.
func hangingAnswer(words int, ended chan<- struct{}) func(http.ResponseWriter, *http.Request, int, *aap.PostSessionTurnRequest) {
	return func(w http.ResponseWriter, r *http.Request, n int, _ *aap.PostSessionTurnRequest) {
		writeEvents(w, &aap.TurnStart{})
		if n > 0 {
			writeEvents(w, &aap.TextDelta{Delta: "done"}, &aap.TurnStop{StopReason: aap.StopEndTurn})
			return
		}
		for i := range words {
			writeEvents(w, &aap.TextDelta{Delta: fmt.Sprintf("w%d ", i)})
		}
		_ = http.NewResponseController(w).Flush()
		<-r.Context().Done()
		close(ended)
	}
}

// Headers of the stop tests: one key, and the person behind each request.
const (
	stopKey   = "key-stop-5d1e"
	stopUser  = "X-User-Id"
	stopAlice = "user-alice-0c4f"
	stopBob   = "user-bob-9a21"
)

// as is the headers of a request of user's.
func as(user string) http.Header {
	return http.Header{"Authorization": {"Bearer " + stopKey}, stopUser: {user}}
}

// stopRun sends DELETE /agents/demo/threads/:id/run as user and returns
// the status and the body.
func stopRun(t *testing.T, base, threadID, user string) (int, string) {
	t.Helper()
	return bridgetest.Delete(t, bridgetest.Context(t), base+"/agents/demo/threads/"+threadID+"/run", as(user))
}

// A run of agui2aap under --on-client-gone finish, whose client left, is
// stopped with DELETE …/threads/:threadId/run, sent to the process that
// runs it or to another sharing its store: 202 naming the run; the AAP
// server's turn is cancelled; a client following the run (connect) gets
// RUN_FINISHED, not an error; the thread keeps what came and is free for
// the next run. Another user's DELETE, and one with no run in flight, are
// 404 no_run_in_flight, and stop nothing.
func TestStopRun(t *testing.T) { bridgetest.ForReplicas(t, testStopRun) }

func testStopRun(t *testing.T, stA, stB store.Store) {
	ended := make(chan struct{})
	f := newFakeAAP(t, hangingAnswer(5, ended))
	replica := func(st store.Store) *env {
		return newBridge(t, f.URL, func(c *agui2aap.Config) {
			c.Store = st
			c.OnClientGone = agui2aap.ClientGoneFinish
			c.APIKeys = []string{stopKey}
			c.Users.Header = stopUser
		})
	}
	a := replica(stA)
	b := a // one process: the DELETE goes to the one that runs the run
	if stB != stA {
		b = replica(stB)
	}
	status, body := stopRun(t, b.URL, "stopped", stopAlice)
	assert.Equal(t, http.StatusNotFound, status, "no run yet")
	assert.Contains(t, body, `"code":"no_run_in_flight"`)

	c := a.conv("stopped")
	c.say("tell me a long story")
	in, err := json.Marshal(c.input("run-1", nil))
	require.NoError(t, err)
	first := streamtest.Open(t, bridgetest.Context(t), http.MethodPost, a.URL+"/agents/demo", string(in), as(stopAlice))
	require.Equal(t, http.StatusOK, first.Status, first.Body)
	had := first.Until(t, "TEXT_MESSAGE_CONTENT", 5)
	first.Leave() // under finish, the run goes on

	join := streamtest.Open(t, bridgetest.Context(t), http.MethodPost, b.URL+"/agents/demo/connect", `{"threadId":"stopped"}`, as(stopAlice))
	require.Equal(t, http.StatusOK, join.Status, join.Body)
	assert.Equal(t, had, joined(t, join.Until(t, "TEXT_MESSAGE_CONTENT", 5), "tell me a long story"))

	status, body = stopRun(t, b.URL, "stopped", stopBob)
	assert.Equal(t, http.StatusNotFound, status, "another user's thread")
	assert.Contains(t, body, `"code":"no_run_in_flight"`)
	status, body = stopRun(t, b.URL, "stopped", stopAlice)
	require.Equal(t, http.StatusAccepted, status, body)
	var stopping struct{ RunLogID, RunID string }
	require.NoError(t, json.Unmarshal([]byte(body), &stopping))
	assert.Equal(t, "run-1", stopping.RunID)
	assert.True(t, strings.HasPrefix(had[0].ID, stopping.RunLogID+":"), "the log of the run's events")

	select {
	case <-ended:
	case <-time.After(20 * time.Second):
		t.Fatal("the AAP server's turn goes on after the stop")
	}
	rest := join.Rest()
	require.NotEmpty(t, rest)
	last := rest[len(rest)-1]
	assert.Contains(t, last.Data, `"type":"RUN_FINISHED"`, "a run stopped on purpose finishes")
	assert.NotContains(t, fmt.Sprint(rest), "RUN_ERROR")
	streamtest.RequireNumbered(t, append(append([]streamtest.Frame{}, had...), rest...), 1)

	// The thread keeps what came (a reloaded page shows it), is free,
	// and its next run answers.
	alice := []string{"Authorization", "Bearer " + stopKey, stopUser, stopAlice}
	var msgs []types.Message
	require.Eventually(t, func() bool {
		r := b.post(t, "/agents/demo", c.hydrationInput(), alice...)
		if r.Status != http.StatusOK || len(r.Events) != 3 {
			return false
		}
		msgs = r.Events[1].(*events.MessagesSnapshotEvent).Messages
		return len(msgs) == 2
	}, 10*time.Second, 50*time.Millisecond, "the thread holds the answer once the stopped run is saved")
	require.Len(t, msgs, 2, "the user's message and the answer up to the stop")
	assert.Equal(t, "w0 w1 w2 w3 w4 ", msgs[1].Content)
	c.Messages = msgs
	c.say("go on")
	next := b.post(t, "/agents/demo", c.input("run-2", nil), alice...)
	require.Equal(t, http.StatusOK, next.Status, next.Body)
	assert.Equal(t, "RUN_FINISHED", next.types()[len(next.Events)-1])
	assert.Contains(t, next.Body, `"delta":"done"`)
	status, body = stopRun(t, a.URL, "stopped", stopAlice)
	assert.Equal(t, http.StatusNotFound, status, "the run is over")
	assert.Contains(t, body, `"code":"no_run_in_flight"`)
	status, body = stopRun(t, a.URL, "a%00b", stopAlice)
	assert.Equal(t, http.StatusBadRequest, status, "a thread id that cannot be")
	assert.Contains(t, body, `"code":"invalid_request"`)
}

// hydrationInput is a run that asks for the thread's conversation back.
func (c *conv) hydrationInput() types.RunAgentInput {
	return types.RunAgentInput{ThreadID: c.ThreadID, RunID: c.newID("hydrate"), State: map[string]any{},
		Messages: []types.Message{}, Tools: []types.Tool{}, Context: []types.Context{}, ForwardedProps: map[string]any{}}
}

// A long answer of the demo agent stopped midway is kept as it was
// delivered: after the stop, the conversation a reloaded page gets (the
// AAP session's history) ends with exactly the words its client received,
// not words the agent wrote after its client had gone.
func TestStoppedAnswerKeptAsDelivered(t *testing.T) {
	upstream := httptest.NewServer(demo.NewAAPAgent(demo.AAPAgentOptions{LongPace: 20 * time.Millisecond}))
	t.Cleanup(upstream.Close)
	e := newBridge(t, upstream.URL, func(c *agui2aap.Config) { c.OnClientGone = agui2aap.ClientGoneFinish })
	c := e.conv("stop-kept")
	c.say("long 1000")
	in, err := json.Marshal(c.input("run-1", nil))
	require.NoError(t, err)
	run := streamtest.Open(t, bridgetest.Context(t), http.MethodPost, e.URL+"/agents/demo", string(in), nil)
	require.Equal(t, http.StatusOK, run.Status, run.Body)
	frames := run.Until(t, "TEXT_MESSAGE_CONTENT", 10)
	status, body := bridgetest.Delete(t, bridgetest.Context(t), e.URL+"/agents/demo/threads/stop-kept/run", nil)
	require.Equal(t, http.StatusAccepted, status, body)
	frames = append(frames, run.Rest()...)
	require.Contains(t, frames[len(frames)-1].Data, `"type":"RUN_FINISHED"`)
	var delivered strings.Builder
	for _, f := range frames {
		var ev struct{ Type, Delta string }
		require.NoError(t, json.Unmarshal([]byte(f.Data), &ev))
		if ev.Type == "TEXT_MESSAGE_CONTENT" {
			delivered.WriteString(ev.Delta)
		}
	}
	require.Less(t, strings.Count(delivered.String(), "word"), 1000, "stopped midway")

	var msgs []types.Message
	require.Eventually(t, func() bool {
		msgs, _ = c.hydrate(t)
		return len(msgs) == 2
	}, bridgetest.Timeout, 20*time.Millisecond, "the stopped answer is saved")
	assert.Equal(t, delivered.String(), msgs[1].Content, "the answer as delivered")
	session := e.onlySession(t)
	hist := e.history(t, session)
	require.Len(t, hist, 2)
	assert.Equal(t, delivered.String(), hist[1].(*aap.AssistantMessage).Content.Text, "the AAP session keeps what it delivered")
}
