package main

import (
	"testing"

	"github.com/aapagui/aapagui/cmd/internal/clitest"
)

// --user-header reaches the server: a request that names no user is
// refused, naming the header; the --user-jwt flags are checked at
// start-up.
func TestUserFlags(t *testing.T) {
	clitest.UserFlags(t, run, "/agents/demo/threads")
}
