package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/cmd/internal/clitest"
	"github.com/aapagui/aapagui/internal/testkit/proctest"
)

// A token in the query of the agent's URL is in no log line: not the
// start-up line, and not the line of a turn that could not reach the
// agent (whose error quotes the URL).
func TestLogsHideUpstreamToken(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	agent := clitest.DeadURL(t) + "/run"
	p := proctest.Start(t, nil, "--listen", "127.0.0.1:0", "--store", "memory:", "--upstream", agent+"?token="+clitest.URLToken)
	assert.Equal(t, agent+"?token=***", logLine(t, p, "aap2agui serving")["upstream"])

	resp := clitest.Post(t, ctx, p.URL()+"/sessions", `{"agent":{"name":"agent"}}`)
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	var created struct {
		SessionID string `json:"sessionId"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&created))
	resp = clitest.Post(t, ctx, p.URL()+"/sessions/"+created.SessionID+"/turns", `{"messages":[{"role":"user","content":"hi"}]}`)
	assert.Equal(t, http.StatusBadGateway, resp.StatusCode)
	clitest.LogHides(t, p, "upstream failed before the stream", clitest.URLToken)
	assert.Contains(t, p.LogField("error"), agent+"?token=***", "the failure names the agent's address")
}

// Each agent's URL in --agent-config's list is logged without its query's
// values.
func TestLogsHideAgentURLToken(t *testing.T) {
	t.Parallel()
	agent := clitest.DeadURL(t) + "/agent/web/run"
	cfg := filepath.Join(t.TempDir(), "agents.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("agents:\n  - name: web\n    upstream: {url: \""+agent+"?key="+clitest.URLToken+"&v=2\"}\n"), 0o600))
	p := proctest.Start(t, nil, "--listen", "127.0.0.1:0", "--store", "memory:", "--agent-config", cfg)
	clitest.LogHides(t, p, "aap2agui serving", clitest.URLToken)
	assert.Equal(t, agent+"?key=***&v=***", logLine(t, p, "agent served")["upstream"])
}

// The store's DSN is logged, and shown in start-up errors, without its
// password.
func TestLogsHideStorePassword(t *testing.T) {
	t.Parallel()
	clitest.StoreSecrets(t, run, "aap2agui serving")
}
