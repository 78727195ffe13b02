package agui2aap_test

import (
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/bridge/agui2aap"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
)

// TestRunLogLine: each run that reached the AAP server writes one info
// line with the thread, the mode, the stop reason, the events read and
// written, the duration and the upstream's result; no line holds the API
// keys or what was said.
func TestRunLogLine(t *testing.T) {
	const (
		key         = "log-key-77b0"
		upstreamKey = "upstream-key-3e9d"
		said        = "zebra-content-93"
	)
	var logs bridgetest.SyncBuffer
	e := newEnv(t, func(c *agui2aap.Config) {
		c.APIKeys = []string{key}
		c.UpstreamAPIKey = upstreamKey
		c.Logger = zerolog.New(&logs).Level(zerolog.InfoLevel)
	})
	c := e.conv("log-thread")
	c.Headers = []string{"Authorization", "Bearer " + key}
	c.say(said)
	c.run(t)
	c.say("search " + said)
	res := c.run(t)
	require.Len(t, res.interrupts(), 1)
	c.run(t, deny(res.interrupts()[0].ID, "no"))
	c.say("fail")
	c.run(t)

	var lines []map[string]any
	require.Eventually(t, func() bool {
		lines = bridgetest.LogLines(t, logs.String(), "run finished")
		return len(lines) == 4
	}, bridgetest.Timeout, 5*time.Millisecond, "one line per run")
	for i, w := range []struct{ stop, upstream string }{
		{"end_turn", "ok"}, {"tool_use", "ok"}, {"end_turn", "ok"}, {"error", "agent_error"},
	} {
		l := lines[i]
		assert.Equal(t, "info", l["level"], i)
		assert.Equal(t, c.ThreadID, l["thread"], i)
		assert.Equal(t, "delta", l["mode"], i)
		assert.Equal(t, w.stop, l["stop"], i)
		assert.Equal(t, w.upstream, l["upstream"], i)
		assert.Greater(t, l["events_in"], 0.0, i)
		assert.Greater(t, l["events_out"], 0.0, i)
		assert.Greater(t, l["duration"], 0.0, i)
		assert.NotEmpty(t, l["request_id"], i)
	}
	out := logs.String()
	for _, s := range []string{key, upstreamKey, said} {
		assert.NotContains(t, out, s)
	}
}
