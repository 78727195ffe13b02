package aap2agui_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/internal/testkit/refused"
)

// TestTurnLogLine: each turn that reached the agent writes one info line
// with the session, the mode, the stop reason, the events read and
// written, the duration and the upstream's result; a turn refused with
// 409 writes none; no line holds the API key, a secret option value, an
// upstream header value or what was said.
func TestTurnLogLine(t *testing.T) {
	const (
		key         = "log-key-5c1e"
		secret      = "sk-option-secret-8d2f"
		agentSecret = "agent-header-secret-41aa"
		said        = "zebra-content-93"
	)
	var logs bridgetest.SyncBuffer
	cfg := func(c *aap2agui.Config) {
		c.APIKeys = []string{key}
		c.Logger = zerolog.New(&logs).Level(zerolog.InfoLevel)
		c.UpstreamHeader = http.Header{"X-Agent-Key": {agentSecret}}
	}
	e := newEnv(t, demoAgent(t), cfg)
	create := func(e *env) string {
		r := doRaw(t, http.MethodPost, e.URL+"/sessions", key, `{"agent":{"name":"agent","options":{"api_key":"`+secret+`"}}}`)
		require.Equal(t, http.StatusCreated, r.Status, r.Body)
		return regexpFind(t, `"sessionId":"([^"]+)"`, r.Body)
	}
	id := create(e)
	turn := func(e *env, id, body string, status int) {
		t.Helper()
		r := doRaw(t, http.MethodPost, e.URL+"/sessions/"+id+"/turns", key, body)
		require.Equal(t, status, r.Status, r.Body)
	}
	turn(e, id, `{"stream":"delta","messages":[{"role":"user","content":"`+said+`"}]}`, http.StatusOK)
	turn(e, id, `{"stream":"none","messages":[{"role":"user","content":"`+said+` again"}]}`, http.StatusOK)
	turn(e, id, `{"stream":"message","messages":[{"role":"user","content":"fail"}]}`, http.StatusOK)

	deadURL := refused.URL(t)
	d := newEnv(t, deadURL, cfg)
	deadID := create(d)
	turn(d, deadID, `{"messages":[{"role":"user","content":"`+said+`"}]}`, http.StatusBadGateway)

	var lines []map[string]any
	require.Eventually(t, func() bool {
		lines = bridgetest.LogLines(t, logs.String(), "turn finished")
		return len(lines) == 4
	}, bridgetest.Timeout, 5*time.Millisecond, "one line per turn")
	want := []struct {
		session, mode, stop, upstream string
		out                           bool
	}{
		{id, "delta", "end_turn", "ok", true},
		{id, "none", "end_turn", "ok", false},
		{id, "message", "error", "agent_error", true},
		{deadID, "none", "", "upstream_unreachable", false},
	}
	for i, w := range want {
		l := lines[i]
		assert.Equal(t, "info", l["level"], i)
		assert.Equal(t, w.session, l["session"], i)
		assert.Equal(t, w.mode, l["mode"], i)
		assert.Equal(t, w.stop, l["stop"], i)
		assert.Equal(t, w.upstream, l["upstream"], i)
		assert.NotEmpty(t, l["request_id"], i)
		assert.Greater(t, l["duration"], 0.0, i)
		if w.upstream == "upstream_unreachable" {
			assert.Equal(t, 0.0, l["events_in"], i)
		} else {
			assert.Greater(t, l["events_in"], 0.0, i)
		}
		if w.out {
			assert.Greater(t, l["events_out"], 0.0, i)
		} else {
			assert.Equal(t, 0.0, l["events_out"], i, "no event stream")
		}
	}

	out := logs.String()
	for _, s := range []string{key, secret, agentSecret, said} {
		assert.NotContains(t, out, s)
	}
}
