package aap2agui_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/internal/testkit/streamtest"
	"github.com/aapagui/aapagui/store"
)

// pausingRun is an AG-UI agent whose answer is words deltas, the first
// before of them at once and the rest once release is closed (a model
// that pauses).
func pausingRun(t *testing.T, words, before int, release <-chan struct{}) string {
	return serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		sseEvents(w, `{"type":"RUN_STARTED","threadId":"t","runId":"r"}`)
		sseEvents(w, `{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}`)
		for i := range words {
			if i == before {
				select {
				case <-release:
				case <-r.Context().Done():
					return
				}
			}
			sseEvents(w, fmt.Sprintf(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"w%d "}`, i))
		}
		sseEvents(w, `{"type":"TEXT_MESSAGE_END","messageId":"m1"}`)
		sseEvents(w, `{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`)
	}))
}

// A turn whose client left after 50 deltas (OnClientGone finish) goes on;
// GET /sessions/:id/turn while it runs streams it from its start, the
// same events with the same ids, live to turn_stop; with the last id the
// client had, after the turn ended, exactly the rest; with neither a
// running turn nor an id, 204. History holds the whole answer.
func TestRejoinTurn(t *testing.T) {
	for _, st := range bridgetest.Stores() {
		t.Run(st.Name, func(t *testing.T) { testRejoinTurn(t, st.Open(t)) })
	}
}

func testRejoinTurn(t *testing.T, st store.Store) {
	release := make(chan struct{})
	e := newEnv(t, pausingRun(t, 60, 50, release), func(c *aap2agui.Config) {
		c.Store = st
		c.OnClientGone = aap2agui.ClientGoneFinish
	})
	let := sync.OnceFunc(func() { close(release) })
	t.Cleanup(let) // a test that fails lets the turn end
	id := e.createSession(t, aap.PostSessionsRequest{})
	turn := e.URL + "/sessions/" + id + "/turn"

	none := streamtest.Open(t, bridgetest.Context(t), http.MethodGet, turn, "", nil)
	assert.Equal(t, http.StatusNoContent, none.Status, "no turn yet")

	first := streamtest.Open(t, bridgetest.Context(t), http.MethodPost, e.URL+"/sessions/"+id+"/turns", `{"stream":"delta","messages":[{"role":"user","content":"a long story"}]}`, nil)
	require.Equal(t, http.StatusOK, first.Status, first.Body)
	had := first.Until(t, "w49 ", 1)
	first.Leave()
	streamtest.RequireNumbered(t, had, 1)

	mismatch := streamtest.Open(t, bridgetest.Context(t), http.MethodGet, turn+"?stream=message", "", nil)
	assert.Equal(t, http.StatusBadRequest, mismatch.Status)
	assert.Contains(t, mismatch.Body, `"code":"stream_mode_differs"`)

	join := streamtest.Open(t, bridgetest.Context(t), http.MethodGet, turn+"?stream=delta", "", nil)
	require.Equal(t, http.StatusOK, join.Status, join.Body)
	assert.Equal(t, had, join.Until(t, "w49 ", 1), "the turn from its start, ids and bytes as the first client had them")
	let()
	rest := join.Rest()
	all := append(append([]streamtest.Frame{}, had...), rest...)
	streamtest.RequireNumbered(t, all, 1)
	require.Equal(t, "turn_stop", all[len(all)-1].Event)
	var text strings.Builder
	for _, f := range all {
		if f.Event == "text_delta" {
			text.WriteString(f.Data)
		}
	}
	for i := range 60 {
		assert.Equal(t, 1, strings.Count(text.String(), fmt.Sprintf(`w%d `, i)), "word %d once", i)
	}

	again := streamtest.Open(t, bridgetest.Context(t), http.MethodGet, turn, "", http.Header{"Last-Event-ID": {had[len(had)-1].ID}})
	require.Equal(t, http.StatusOK, again.Status, again.Body)
	assert.Equal(t, rest, again.Rest(), "exactly the rest")

	after := streamtest.Open(t, bridgetest.Context(t), http.MethodGet, turn, "", nil)
	assert.Equal(t, http.StatusNoContent, after.Status, "the turn is over")
	h := e.history(t, id, aap.HistoryFull)
	require.Len(t, h, 2)
	assert.Contains(t, h[1], "w0 w1 ")
	assert.Contains(t, h[1], "w58 w59 ")

	other := streamtest.Open(t, bridgetest.Context(t), http.MethodGet, e.URL+"/sessions/nope/turn", "", nil)
	assert.Equal(t, http.StatusNotFound, other.Status)
}
