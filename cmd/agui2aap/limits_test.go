package main

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/internal/testkit/proctest"
)

// The per-key limit flags reach the server: a key past
// --rate-limit-per-key and its burst gets 429 with Retry-After; a limit
// that makes no sense stops the program.
func TestLimitFlags(t *testing.T) {
	p := proctest.Start(t, nil, "--listen", "127.0.0.1:0", "--store", "memory:", "--api-key", "k1",
		"--rate-limit-per-key", "0.1", "--rate-burst-per-key", "1", "--max-threads-per-key", "5", "--max-runs-per-key", "2")
	get := func() *http.Response {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, p.URL()+"/agents/demo/threads", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer k1")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		t.Cleanup(func() { _ = resp.Body.Close() })
		return resp
	}
	require.Equal(t, http.StatusOK, get().StatusCode)
	resp := get()
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	assert.Equal(t, "10", resp.Header.Get("Retry-After"))

	for flag, value := range map[string]string{"--max-threads-per-key": "-1", "--max-runs-per-key": "-2", "--rate-limit-per-key": "-0.5", "--rate-burst-per-key": "-1"} {
		msg := refuses(t, flag, value)
		assert.Contains(t, msg, flag)
	}
}
