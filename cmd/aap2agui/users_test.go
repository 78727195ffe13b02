package main

import (
	"testing"

	"github.com/aapagui/aapagui/cmd/internal/clitest"
)

// --user-header reaches the server: a request that names no user is
// refused, naming the header; the --user-jwt flags are checked at
// start-up.
func TestUserFlags(t *testing.T) {
	clitest.UserFlags(t, run, "/sessions")
}

// An identity provider's PEM key with a comment line before it is read as
// its key, not as an HS256 secret that anyone could sign with; an
// unmarked secret file stops the start.
func TestUserKeyFile(t *testing.T) {
	clitest.UserKeyFile(t, run, "/sessions")
}
