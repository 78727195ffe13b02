package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/internal/testkit/proctest"
)

// The per-key limit flags reach the server: a key over
// --max-sessions-per-key gets 429 with Retry-After; a limit that makes no
// sense stops the program.
func TestLimitFlags(t *testing.T) {
	p := proctest.Start(t, nil, "--listen", "127.0.0.1:0", "--store", "memory:", "--api-key", "k1",
		"--max-sessions-per-key", "1", "--max-turns-per-key", "2", "--rate-limit-per-key", "50")
	create := func() *http.Response {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, p.URL()+"/sessions", strings.NewReader(`{"agent":{"name":"demo"}}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer k1")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		t.Cleanup(func() { _ = resp.Body.Close() })
		return resp
	}
	require.Equal(t, http.StatusCreated, create().StatusCode)
	resp := create()
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	assert.NotEmpty(t, resp.Header.Get("Retry-After"))

	for flag, value := range map[string]string{"--max-sessions-per-key": "-1", "--max-turns-per-key": "-2", "--rate-limit-per-key": "-0.5", "--rate-burst-per-key": "-1"} {
		msg := refuses(t, flag, value)
		assert.Contains(t, msg, flag)
	}
}
