package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/aapagui/aapagui/internal/testkit/proctest"
)

// TestVersionFlag: --version prints the program's name and version and
// exits without serving (cmd/aap2agui builds both programs and checks the
// revision).
func TestVersionFlag(t *testing.T) {
	out := proctest.Stdout(t, "--version")
	assert.Regexp(t, `^agui2aap \S+.* go1\.\d+`, out)
}
