package main

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/cmd/internal/clitest"
)

// The per-key limit flags reach the server: a key past
// --rate-limit-per-key and its burst gets 429 with Retry-After; a limit
// that makes no sense stops the program.
func TestLimitFlags(t *testing.T) {
	resp := clitest.LimitFlags(t, clitest.Limits{
		Run:   run,
		Flags: []string{"--rate-limit-per-key", "0.1", "--rate-burst-per-key", "1", "--max-threads-per-key", "5", "--max-runs-per-key", "2"},
		Request: func(ctx context.Context, url string) *http.Request {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/agents/demo/threads", nil)
			require.NoError(t, err)
			return req
		},
		Allowed: http.StatusOK,
		Refused: map[string]string{"--max-threads-per-key": "-1", "--max-runs-per-key": "-2", "--rate-limit-per-key": "-0.5", "--rate-burst-per-key": "-1"},
	})
	assert.Equal(t, "10", resp.Header.Get("Retry-After"))
}
