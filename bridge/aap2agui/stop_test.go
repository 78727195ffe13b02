package aap2agui_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/internal/testkit/streamtest"
	"github.com/aapagui/aapagui/store"
)

// hangingRun is an AG-UI agent whose first run streams words deltas and
// then waits for its request to end (a long answer a user stops), closing
// ended when it does; later runs answer "done" at once.
func hangingRun(t *testing.T, words int, ended chan<- struct{}) string {
	var runs atomic.Int32
	return serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		sseEvents(w, `{"type":"RUN_STARTED","threadId":"t","runId":"r"}`)
		sseEvents(w, `{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}`)
		if runs.Add(1) > 1 {
			sseEvents(w, `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"done"}`)
			sseEvents(w, `{"type":"TEXT_MESSAGE_END","messageId":"m1"}`)
			sseEvents(w, `{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`)
			return
		}
		for i := range words {
			sseEvents(w, fmt.Sprintf(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"w%d "}`, i))
		}
		<-r.Context().Done()
		close(ended)
	}))
}

// The two keys of the stop tests: a's sessions are not b's.
const (
	stopKeyA = "key-stop-a-61d0"
	stopKeyB = "key-stop-b-2f7c"
)

// bearer is the headers of a request with key.
func bearer(key string) http.Header { return http.Header{"Authorization": {"Bearer " + key}} }

// stopTurn sends DELETE /sessions/:id/turn with key and returns the
// status and the body.
func stopTurn(t *testing.T, base, id, key string) (int, string) {
	t.Helper()
	return bridgetest.Delete(t, bridgetest.Context(t), base+"/sessions/"+id+"/turn", bearer(key))
}

// A turn under --on-client-gone finish, whose client left, is stopped
// with DELETE /sessions/:id/turn, sent to the process that runs it or to
// another sharing its store: 202 naming the turn's run; the agent's run is
// cancelled; a client following the turn (GET /sessions/:id/turn) gets
// turn_stop end_turn; history holds what came and the session is free for
// the next turn. Another key's DELETE, and one with no turn running, are
// 404 no_run_in_flight, and stop nothing.
func TestStopTurn(t *testing.T) { bridgetest.ForReplicas(t, testStopTurn) }

func testStopTurn(t *testing.T, stA, stB store.Store) {
	ended := make(chan struct{})
	upstream := hangingRun(t, 5, ended)
	replica := func(st store.Store) *env {
		return newEnv(t, upstream, func(c *aap2agui.Config) {
			c.Store = st
			c.OnClientGone = aap2agui.ClientGoneFinish
			c.APIKeys = []string{stopKeyA, stopKeyB}
		})
	}
	a := replica(stA)
	b := a // one process: the DELETE goes to the one that runs the turn
	if stB != stA {
		b = replica(stB)
	}
	id := a.createSession(t, aap.PostSessionsRequest{})
	status, body := stopTurn(t, b.URL, id, stopKeyA)
	assert.Equal(t, http.StatusNotFound, status, "no turn yet")
	assert.Contains(t, body, `"code":"no_run_in_flight"`)

	first := streamtest.Open(t, bridgetest.Context(t), http.MethodPost, a.URL+"/sessions/"+id+"/turns", `{"stream":"delta","messages":[{"role":"user","content":"a long story"}]}`, bearer(stopKeyA))
	require.Equal(t, http.StatusOK, first.Status, first.Body)
	had := first.Until(t, "w4 ", 1)
	first.Leave() // under finish, the turn goes on

	join := streamtest.Open(t, bridgetest.Context(t), http.MethodGet, b.URL+"/sessions/"+id+"/turn", "", bearer(stopKeyA))
	require.Equal(t, http.StatusOK, join.Status, join.Body)
	assert.Equal(t, had, join.Until(t, "w4 ", 1), "the turn from its start")

	status, body = stopTurn(t, b.URL, id, stopKeyB)
	assert.Equal(t, http.StatusNotFound, status, "another key's session")
	assert.Contains(t, body, `"code":"no_run_in_flight"`)
	status, body = stopTurn(t, b.URL, id, stopKeyA)
	require.Equal(t, http.StatusAccepted, status, body)
	var stopping struct{ RunLogID, RunID string }
	require.NoError(t, json.Unmarshal([]byte(body), &stopping))
	assert.NotEmpty(t, stopping.RunID)
	assert.True(t, strings.HasPrefix(had[0].ID, stopping.RunLogID+":"), "the log of the turn's events")

	select {
	case <-ended:
	case <-time.After(20 * time.Second):
		t.Fatal("the agent's run goes on after the stop")
	}
	rest := join.Rest()
	require.NotEmpty(t, rest)
	last := rest[len(rest)-1]
	assert.Equal(t, "turn_stop", last.Event)
	assert.JSONEq(t, `{"stopReason":"end_turn"}`, last.Data, "a turn stopped on purpose ends, not fails")
	streamtest.RequireNumbered(t, append(append([]streamtest.Frame{}, had...), rest...), 1)

	// History holds what came; the session is free for the next turn.
	var h []string
	require.Eventually(t, func() bool {
		h = b.history(t, id, aap.HistoryFull)
		return len(h) == 2
	}, 10*time.Second, 50*time.Millisecond)
	assert.Contains(t, h[1], "w0 w1 w2 w3 w4 ")
	evs, err := b.stream(t, id, userTurn(aap.StreamDelta, "go on"))
	require.NoError(t, err)
	require.NotEmpty(t, evs)
	assert.Equal(t, &aap.TurnStop{StopReason: aap.StopEndTurn}, evs[len(evs)-1])
	status, body = stopTurn(t, a.URL, id, stopKeyA)
	assert.Equal(t, http.StatusNotFound, status, "the turn is over")
	assert.Contains(t, body, `"code":"no_run_in_flight"`)
	status, body = stopTurn(t, a.URL, "nope", stopKeyA)
	assert.Equal(t, http.StatusNotFound, status, "a session that is not there")
	assert.Contains(t, body, `"code":"no_run_in_flight"`)
}
