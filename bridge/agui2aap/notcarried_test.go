package agui2aap_test

import (
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/bridge/agui2aap"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/internal/testkit/metricstest"
)

// In front of an AAP server that does not grant the AG-UI extension (the
// demo agent), the page's state and its forwarded props beyond "aap"
// cannot be sent: the run goes on as before, and they are counted in
// agui2aap_events_not_carried_total and logged once for the run. A run
// with an empty state and only "aap" props counts nothing.
func TestNotCarriedToAPlainAAPServer(t *testing.T) {
	var logs bridgetest.SyncBuffer
	e := newEnv(t, func(c *agui2aap.Config) { c.Logger = zerolog.New(&logs).Level(zerolog.InfoLevel) })
	run := func(thread string, state, props any) {
		t.Helper()
		r := e.post(t, "/agents/demo", map[string]any{"threadId": thread, "runId": "r1", "state": state, "tools": []any{}, "context": []any{},
			"forwardedProps": props, "messages": []any{map[string]any{"id": "u1", "role": "user", "content": "hello"}}})
		require.Equal(t, 200, r.Status)
		require.Nil(t, r.runError(), "the run is answered")
	}
	run("th-plain", map[string]any{}, map[string]any{"aap": map[string]any{}})
	run("th-state", map[string]any{"recipe": map[string]any{"title": "Soup"}}, map[string]any{"copilotkit": map[string]any{}})

	var lines []map[string]any
	require.Eventually(t, func() bool {
		lines = bridgetest.LogLines(t, logs.String(), "the AAP server does not grant the AG-UI extension: what AAP has no field for of the page's run was not sent")
		return len(lines) == 1
	}, bridgetest.Timeout, 5*time.Millisecond, "one line, for the run that had some")
	assert.Equal(t, "th-state", lines[0]["thread"])
	assert.Equal(t, map[string]any{"RunAgentInput.state": 1.0, "RunAgentInput.forwardedProps": 1.0}, lines[0]["not_carried"])
	m := metricstest.Scrape(t, e.URL+"/metrics", "")
	assert.Equal(t, 1.0, m.Value("agui2aap_events_not_carried_total", "type", "RunAgentInput.state"))
	assert.Equal(t, 1.0, m.Value("agui2aap_events_not_carried_total", "type", "RunAgentInput.forwardedProps"))
}
