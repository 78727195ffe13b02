//go:build unix

package cli_test

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/cmd/internal/cli"
)

// OnHangup calls reload on each SIGHUP, one at a time, and logs a reload
// that failed; after stop the signal is no longer taken.
func TestOnHangup(t *testing.T) {
	var logged bytes.Buffer
	calls := make(chan struct{}, 4)
	fail := true
	stop := cli.OnHangup(zerolog.New(&logged), func() error {
		defer func() { calls <- struct{}{} }()
		if fail {
			fail = false
			return errors.New("agents.yaml: agents[1]: name: another agent has this name")
		}
		return nil
	})
	for range 2 {
		require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGHUP))
		select {
		case <-calls:
		case <-time.After(10 * time.Second):
			t.Fatal("SIGHUP did not call reload")
		}
	}
	stop()
	assert.Equal(t, 1, strings.Count(logged.String(), `"message":"SIGHUP: not reloaded; serving on as before"`), logged.String())
	assert.Contains(t, logged.String(), "another agent has this name")
}
