package aap2agui_test

import (
	"encoding/json"
	"fmt"
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
)

// An agent (or a proxy before it) that echoes the request's headers in a
// 500 puts the credentials aap2agui sent it (--upstream-header) into
// neither the bridge's log nor the client's reply, in any form the body
// writes them; the log still says what failed.
func TestEchoedAgentKeyIsNotLoggedOrReplied(t *testing.T) {
	const (
		agentKey = "agent-key/7c1e+d0=="
		token    = "tenant-token-3b9d"
	)
	received := make(chan string, 1)
	url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		received <- r.Header.Get("Authorization")
		headers, _ := json.Marshal(r.Header)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, `{"error":"proxy_error","echo":%q,"headers":%s,"php":%q}`,
			"Authorization: "+r.Header.Get("Authorization")+"\nX-Tenant-Token: "+r.Header.Get("X-Tenant-Token"),
			headers, strings.ReplaceAll(string(headers), "/", `\/`))
	}))
	var logs bridgetest.SyncBuffer
	e := newEnv(t, url, func(c *aap2agui.Config) {
		c.Logger = zerolog.New(&logs).Level(zerolog.DebugLevel)
		c.UpstreamHeader = http.Header{"Authorization": {"Bearer " + agentKey}, "X-Tenant-Token": {token}}
	})
	id := e.createSession(t, aap.PostSessionsRequest{})
	r := doRaw(t, http.MethodPost, e.URL+"/sessions/"+id+"/turns", "", `{"messages":[{"role":"user","content":"hello"}]}`)
	requireJSONError(t, r, http.StatusBadGateway, "upstream_error")
	require.Equal(t, "Bearer "+agentKey, <-received, "the agent was sent the key and echoed it")
	require.Eventually(t, func() bool {
		return strings.Contains(logs.String(), `"status":502`)
	}, bridgetest.Timeout, 5*time.Millisecond, "the turn's request log line")

	require.Contains(t, logs.String(), "proxy_error", "the agent's error is logged")
	for _, part := range []string{agentKey, "7c1e", token, "3b9d"} {
		assert.NotContains(t, logs.String(), part, "the log")
		assert.NotContains(t, r.Body, part, "the reply")
	}
}
