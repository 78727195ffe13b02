package main

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/cmd/internal/clitest"
)

// The per-key limit flags reach the server: a key over
// --max-sessions-per-key gets 429 with Retry-After; a limit that makes no
// sense stops the program.
func TestLimitFlags(t *testing.T) {
	clitest.LimitFlags(t, clitest.Limits{
		Run:   run,
		Flags: []string{"--max-sessions-per-key", "1", "--max-turns-per-key", "2", "--rate-limit-per-key", "50"},
		Request: func(ctx context.Context, url string) *http.Request {
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/sessions", strings.NewReader(`{"agent":{"name":"demo"}}`))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			return req
		},
		Allowed: http.StatusCreated,
		Refused: map[string]string{"--max-sessions-per-key": "-1", "--max-turns-per-key": "-2", "--rate-limit-per-key": "-0.5", "--rate-burst-per-key": "-1"},
	})
}
