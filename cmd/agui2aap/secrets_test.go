package main

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/cmd/internal/clitest"
	"github.com/aapagui/aapagui/internal/testkit/proctest"
)

// A token in the query of the AAP server's URL is in no log line: not the
// start-up line, and not the line of a run that could not reach the
// server (whose error quotes the URL).
func TestLogsHideUpstreamToken(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	server := clitest.DeadURL(t) + "/aap"
	p := proctest.Start(t, nil, "--listen", "127.0.0.1:0", "--store", "memory:", "--upstream", server+"?token="+clitest.URLToken)
	clitest.LogHides(t, p, "agui2aap serving", clitest.URLToken)
	assert.Equal(t, server+"?token=***", p.LogField("upstream"))

	resp := clitest.Post(t, ctx, p.URL()+"/agents/demo", runBody("r1", `{"id":"u1","role":"user","content":"hi"}`))
	require.Equal(t, http.StatusBadGateway, resp.StatusCode)
	clitest.LogHides(t, p, "upstream call failed", clitest.URLToken)
	assert.Contains(t, p.LogField("error"), server+"?token=***", "the failure names the server's address")
}

// The store's DSN is logged, and shown in start-up errors, without its
// password.
func TestLogsHideStorePassword(t *testing.T) {
	t.Parallel()
	clitest.StoreSecrets(t, run, "agui2aap serving")
}
