package agui2aap_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
)

// TestRunInputTooDeep: a RunAgentInput whose state nests deeper than the
// 10,000 levels JSON decoding reads is a 400 naming the limit, and nothing
// reaches the AAP server or the store; one as deep as the limit runs.
func TestRunInputTooDeep(t *testing.T) {
	f := newFakeAAP(t, answerText("ok"))
	e := newBridge(t, f.URL)
	body := func(thread string, depth int) string {
		// The input itself is one level, the state's objects the rest.
		state := strings.Repeat(`{"a":`, depth-1) + `1` + strings.Repeat(`}`, depth-1)
		return `{"threadId":"` + thread + `","runId":"r1","state":` + state + `,"messages":[{"id":"u1","role":"user","content":"hi"}],"tools":[],"context":[],"forwardedProps":{}}`
	}
	r := e.post(t, "/agents/demo", body("deep", 10001))
	require.Equal(t, http.StatusBadRequest, r.Status, r.Body)
	assert.Equal(t, "invalid_body", r.errorCode())
	assert.Contains(t, r.errorMessage(), "deeper than 10000 levels, the limit")
	assert.Empty(t, f.turnRequests(), "nothing reached the AAP server")
	n, err := e.Store.CountThreads(bridgetest.Context(t), "")
	require.NoError(t, err)
	assert.Zero(t, n, "no thread stored")

	r = e.post(t, "/agents/demo", body("at-the-limit", 10000))
	assert.Equal(t, http.StatusOK, r.Status, "an input as deep as the limit runs: %s", r.Body)
}
