package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/internal/testkit/proctest"
)

// logLine is the first JSON log line of p with this message.
func logLine(t *testing.T, p *proctest.Proc, message string) map[string]any {
	t.Helper()
	for _, line := range strings.Split(p.Log(), "\n") {
		var l map[string]any
		if json.Unmarshal([]byte(line), &l) == nil && l["message"] == message {
			return l
		}
	}
	t.Fatalf("no %q line in:\n%s", message, p.Log())
	return nil
}

// The start-up line names the AAP versions served (version 3 when no
// --aap-version is given, not an empty list), and the shutdown line gives
// the grace period with its unit.
func TestStartAndStopLines(t *testing.T) {
	t.Parallel()
	p := proctest.Start(t, nil, "--listen", "127.0.0.1:0", "--store", "memory:", "--shutdown-timeout", "7s")
	assert.Equal(t, []any{"3"}, logLine(t, p, "aap2agui serving")["aap_versions"])
	p.Stop(t)
	assert.Equal(t, "7s", logLine(t, p, "shutting down: waiting for running requests")["grace"])

	p = proctest.Start(t, nil, "--listen", "127.0.0.1:0", "--store", "memory:", "--aap-version", "3", "--aap-version", "1=/legacy")
	require.Equal(t, []any{"3", "1=/legacy"}, logLine(t, p, "aap2agui serving")["aap_versions"])
}
