package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/cmd/internal/clitest"
)

// --user-header reaches the server: a request that names no user is
// refused, naming the header; the --user-jwt flags are checked at
// start-up.
func TestUserFlags(t *testing.T) {
	clitest.UserFlags(t, run, "/agents/demo/threads")
}

// --forward-user reaches the Config: without a user scope to forward the
// program refuses to start, naming what is missing.
func TestForwardUserFlag(t *testing.T) {
	err := run([]string{"--listen", "127.0.0.1:0", "--store", "memory:", "--forward-user", "X-User-Id"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ForwardUser needs a user scope")
}

// An identity provider's PEM key with a comment line before it is read as
// its key, not as an HS256 secret that anyone could sign with; an
// unmarked secret file stops the start.
func TestUserKeyFile(t *testing.T) {
	clitest.UserKeyFile(t, run, "/agents/demo/threads")
}
