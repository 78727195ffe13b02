package aap2agui_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
)

// TestBodyTooDeep: a session or a turn whose tool schema nests deeper
// than the 10,000 levels JSON decoding reads is a 400 naming the limit
// (not "not valid JSON"), and nothing is stored or sent to the agent.
func TestBodyTooDeep(t *testing.T) {
	up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, _ int) {
		sseEvents(w, runStarted(in), runFinished(in))
	})
	e := newEnv(t, up.URL)
	// The body and the tools' array are two levels, the tool a third.
	schema := strings.Repeat(`{"a":`, 9998) + `{}` + strings.Repeat(`}`, 9998)
	tools := `"tools":[{"name":"t","description":"d","parameters":` + schema + `}]`
	r := doRaw(t, http.MethodPost, e.URL+"/sessions", "", `{"agent":{"name":"`+agentName+`"},`+tools+`}`)
	requireJSONError(t, r, http.StatusBadRequest, "invalid_body")
	assert.Contains(t, r.Body, "deeper than 10000 levels, the limit")
	list, err := e.Store.ListSessions(bridgetest.Context(t), "", 0, 10)
	require.NoError(t, err)
	assert.Empty(t, list, "no session stored")

	id := e.createSession(t, aap.PostSessionsRequest{})
	r = doRaw(t, http.MethodPost, e.URL+"/sessions/"+id+"/turns", "", `{"stream":"delta","messages":[{"role":"user","content":"hi"}],`+tools+`}`)
	requireJSONError(t, r, http.StatusBadRequest, "invalid_body")
	assert.Contains(t, r.Body, "deeper than 10000 levels, the limit")
	assert.Zero(t, up.count(), "nothing reached the agent")
}
