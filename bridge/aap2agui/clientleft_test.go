package aap2agui_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/internal/testkit/streamtest"
)

// A client that goes away while aap2agui waits for the AG-UI agent's
// answer is no server error: the request is counted and logged with
// status 499 (client closed request), never as a 5xx, and no line is
// logged at warning or error level.
func TestClientLeft(t *testing.T) {
	arrived := make(chan struct{}, 1)
	quit := make(chan struct{})
	upstream := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Read to the end: only then does net/http watch the connection
		// and cancel the request when it closes.
		_, _ = io.Copy(io.Discard, r.Body)
		arrived <- struct{}{}
		select {
		case <-r.Context().Done():
		case <-quit:
			t.Errorf("the run went on after its client left")
		}
	}))
	t.Cleanup(func() { close(quit) })
	var logs bridgetest.SyncBuffer
	e := newEnv(t, upstream, func(c *aap2agui.Config) {
		c.Logger = zerolog.New(&logs).Level(zerolog.InfoLevel)
	})
	id := e.createSession(t, aap.PostSessionsRequest{})

	bridgetest.Leave(t, e.URL+"/sessions/"+id+"/turns", `{"stream":"delta","messages":[{"role":"user","content":"hello"}]}`, arrived)

	bridgetest.CountedAsLeft(t, e.Root+"/metrics", "aap2agui_http_requests_total", 1, "route", "/sessions/:id/turns", "method", "POST")
	out := logs.String()
	assert.Contains(t, out, `"status":499`)
	assert.NotContains(t, out, `"level":"error"`)
	assert.NotContains(t, out, `"level":"warn"`)

}

// With OnClientGone finish, a turn whose client left mid-answer runs to
// its end: the agent's run is not cancelled, and history holds the whole
// answer, as if the client had stayed. (With cancel, the default, the
// run stops: TestClientLeft.)
func TestClientLeftFinish(t *testing.T) {
	release := make(chan struct{})
	cancelled := make(chan bool, 1)
	upstream := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		sseEvents(w, `{"type":"RUN_STARTED","threadId":"t","runId":"r"}`)
		sseEvents(w, `{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}`)
		sseEvents(w, `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"the first half, "}`)
		select {
		case <-release:
		case <-r.Context().Done():
			cancelled <- true
			return
		}
		sseEvents(w, `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"and the second."}`)
		sseEvents(w, `{"type":"TEXT_MESSAGE_END","messageId":"m1"}`)
		sseEvents(w, `{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`)
		cancelled <- false
	}))
	e := newEnv(t, upstream, func(c *aap2agui.Config) { c.OnClientGone = aap2agui.ClientGoneFinish })
	id := e.createSession(t, aap.PostSessionsRequest{})

	// The client leaves mid-answer.
	streamtest.LeaveAfter(t, bridgetest.Context(t), e.URL+"/sessions/"+id+"/turns", `{"stream":"delta","messages":[{"role":"user","content":"hello"}]}`, "the first half")
	close(release)

	bridgetest.RanToItsEnd(t, cancelled)
	require.Eventually(t, func() bool {
		h := e.history(t, id, aap.HistoryFull)
		return len(h) == 2 && strings.Contains(h[1], "the first half, and the second.")
	}, bridgetest.Timeout, 10*time.Millisecond, "history holds the whole answer")
	// The session is free again: the next turn runs.
	evs, err := e.stream(t, id, userTurn(aap.StreamMessage, "again"))
	require.NoError(t, err)
	assert.NotEmpty(t, evs)
}
