package main

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/aapagui/aapagui/internal/testkit/proctest"
)

// refuses runs the program with args and returns its error: it must stop
// at start-up rather than serve.
func refuses(t *testing.T, args ...string) string {
	t.Helper()
	return proctest.Refuses(t, run, args...)
}

// A key flag holding a line break (or any other control character) stops
// the program at start-up, naming the flag and never the value: the key
// goes upstream in an Authorization header, or is compared with one.
func TestKeyFlagsRefuseControlCharacters(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the AAP server was called (%s) by a program that should not have started", r.URL)
	}))
	defer up.Close()
	for flag, value := range map[string]string{
		"--upstream-api-key": "s3cret\r\nX-Evil: 1",
		"--api-key":          "s3cret\x00",
	} {
		t.Run(flag, func(t *testing.T) {
			msg := refuses(t, "--upstream", up.URL, flag, value)
			assert.Contains(t, msg, flag)
			assert.NotContains(t, msg, "s3cret", "the value of a key flag is never shown")
		})
	}
	t.Run("environment", func(t *testing.T) {
		t.Setenv("AGUI2AAP_UPSTREAM_API_KEY", "s3cret\n")
		msg := refuses(t, "--upstream", up.URL)
		assert.Contains(t, msg, "--upstream-api-key")
		assert.NotContains(t, msg, "s3cret")
	})
}
