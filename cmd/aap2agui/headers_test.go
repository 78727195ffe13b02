package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/cmd/internal/clitest"
	"github.com/aapagui/aapagui/internal/testkit/proctest"
)

// refuses runs the program with args and returns its error: it must stop
// at start-up rather than serve.
func refuses(t *testing.T, args ...string) string {
	t.Helper()
	return proctest.Refuses(t, run, args...)
}

// A header flag holding a line break (or any other control character)
// stops the program at start-up, naming the flag and never the value:
// "X-Token: s3cret\r\nX-Evil: 1" used to send X-Evil upstream.
func TestHeaderFlagsRefuseControlCharacters(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the agent was called (%s) by a program that should not have started", r.URL)
	}))
	defer up.Close()
	for name, header := range map[string]string{
		"CR LF":     "X-Token: s3cret\r\nX-Evil: 1",
		"LF":        "X-Token: s3cret\nX-Evil: 1",
		"NUL":       "X-Token: s3cret\x00",
		"escape":    "X-Token: s3cret\x1b[2J",
		"name":      "X\rEvil: s3cret",
		"bad token": "X(Token): s3cret",
	} {
		t.Run(name, func(t *testing.T) {
			msg := refuses(t, "--upstream", up.URL, "--upstream-header", header)
			assert.Contains(t, msg, "--upstream-header")
			assert.NotContains(t, msg, "s3cret", "the value of a header flag is never shown")
		})
	}
	t.Run("environment", func(t *testing.T) {
		t.Setenv("AAP2AGUI_UPSTREAM_HEADER", "X-A: 1\nX-Token: s3cret\x07")
		msg := refuses(t, "--upstream", up.URL)
		assert.Contains(t, msg, "--upstream-header")
		assert.NotContains(t, msg, "s3cret")
	})
	t.Run("api key", func(t *testing.T) {
		msg := refuses(t, "--upstream", up.URL, "--api-key", "s3cret\r\nX-Evil: 1")
		assert.Contains(t, msg, "--api-key")
		assert.NotContains(t, msg, "s3cret")
	})
}

// The environment variable still holds one header per line (CR LF line
// ends too), and each reaches the agent as it was written.
func TestUpstreamHeadersFromEnvironment(t *testing.T) {
	got := make(chan http.Header, 1)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case got <- r.Header.Clone():
		default:
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte("data: {\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\n\ndata: {\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r\"}\n\n"))
	}))
	defer up.Close()
	p := proctest.Start(t, []string{"AAP2AGUI_UPSTREAM_HEADER=X-A: 1\r\nX-B: two, three\r\n"},
		"--listen", "127.0.0.1:0", "--store", "memory:", "--upstream", up.URL)
	resp := clitest.Post(t, t.Context(), p.URL()+"/sessions", `{"agent":{"name":"agent"}}`)
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	var id struct {
		SessionID string `json:"sessionId"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&id))
	resp = clitest.Post(t, t.Context(), p.URL()+"/sessions/"+id.SessionID+"/turns", `{"messages":[{"role":"user","content":"hi"}]}`)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	_, _ = io.Copy(io.Discard, resp.Body)
	h := <-got
	assert.Equal(t, "1", h.Get("X-A"))
	assert.Equal(t, "two, three", h.Get("X-B"))
	for name := range h {
		assert.False(t, strings.ContainsAny(name, "\r\n"), name)
	}
}
