package agui2aap_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/agui2aap"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/demo"
)

// echoingAAP is an AAP server behind a misconfigured proxy: GET /meta is
// answered, every other call gets a 500 whose body echoes the request's
// Authorization header, as a header line, in JSON and with "/" escaped
// (as PHP's encoder writes it), and in the message of the project's
// error shape. It returns the server's URL and the Authorization values
// it received.
func echoingAAP(t *testing.T) (string, func() []string) {
	agent := demo.NewAAPAgent(demo.AAPAgentOptions{})
	var mu sync.Mutex
	var got []string
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/meta" {
			agent.ServeHTTP(w, r)
			return
		}
		auth := r.Header.Get("Authorization")
		mu.Lock()
		got = append(got, auth)
		mu.Unlock()
		headers, _ := json.Marshal(r.Header)
		echo := fmt.Sprintf("Authorization: %s\n%s\n%s", auth, headers, strings.ReplaceAll(string(headers), "/", `\/`))
		writeJSON(w, http.StatusInternalServerError, map[string]any{
			"error":   aap.ErrorBody{Code: "proxy_error", Message: "upstream failed; request was " + echo},
			"request": map[string]any{"headers": r.Header, "raw": echo},
		})
	}))
	t.Cleanup(s.Close)
	return s.URL, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), got...) }
}

// An AAP server (or a proxy before it) that echoes the request's
// Authorization in its error body gets the key it was sent into neither
// agui2aap's log nor the client's reply: not --upstream-api-key, and under
// --forward-auth not the caller's key, in any form the body writes it.
func TestEchoedKeyIsNotLoggedOrReplied(t *testing.T) {
	const key = "sk-echo/4f2a+9b=="
	for name, configure := range map[string]func(*agui2aap.Config){
		"upstream key":  func(c *agui2aap.Config) { c.UpstreamAPIKey = key },
		"forwarded key": func(c *agui2aap.Config) { c.ForwardAuth = true },
	} {
		t.Run(name, func(t *testing.T) {
			url, received := echoingAAP(t)
			var logs bridgetest.SyncBuffer
			e := newBridge(t, url, configure, func(c *agui2aap.Config) {
				c.Logger = zerolog.New(&logs).Level(zerolog.DebugLevel)
			})
			c := e.conv("echoed")
			c.say("hello")
			var headers []string
			if name == "forwarded key" {
				headers = []string{"Authorization", "Bearer " + key}
			}
			r := e.post(t, "/agents/demo", c.input("", nil), headers...)
			require.Equal(t, []string{"Bearer " + key}, received(), "the AAP server was sent the key and echoed it")
			require.Eventually(t, func() bool {
				return len(bridgetest.LogLines(t, logs.String(), "request")) == 1
			}, bridgetest.Timeout, 5*time.Millisecond, "the request's log line")

			require.Contains(t, logs.String(), "proxy_error", "the upstream's error is logged")
			for _, part := range []string{key, "4f2a", `4f2a+9b`, `sk-echo\/4f2a`} {
				assert.NotContains(t, logs.String(), part, "the log")
				assert.NotContains(t, r.Body, part, "the reply")
			}
		})
	}
}
