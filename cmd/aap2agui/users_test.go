package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/internal/testkit/proctest"
)

// --user-header reaches the server: a request that names no user is
// refused, naming the header; the --user-jwt flags are checked at
// start-up.
func TestUserFlags(t *testing.T) {
	p := proctest.Start(t, nil, "--listen", "127.0.0.1:0", "--store", "memory:", "--api-key", "k1", "--user-header", "X-User-Id")
	get := func(user string) (int, string) {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, p.URL()+"/sessions", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer k1")
		if user != "" {
			req.Header.Set("X-User-Id", user)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}
	status, body := get("")
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, body, "user_required")
	assert.Contains(t, body, "X-User-Id")
	status, body = get("alice")
	assert.Equal(t, http.StatusOK, status, body)

	secret := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(secret, []byte(strings.Repeat("s", 40)), 0o600))
	assert.Contains(t, refuses(t, "--user-jwt", secret), "audience")
	assert.Contains(t, refuses(t, "--user-jwt", secret, "--user-jwt-audience", "a", "--user-header", "X-User-Id"), "not both")
	assert.Contains(t, refuses(t, "--user-jwt", secret, "--user-jwt-audience", "a", "--api-key", "k1"), "another header")
}
