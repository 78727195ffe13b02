package main

import (
	"encoding/json"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/internal/testkit/proctest"
)

// On SIGTERM the program drains for --shutdown-delay: GET /readyz answers
// 503 with the reason in JSON at once, while requests are still served (a
// load balancer may send some before it sees /readyz); a second SIGTERM
// ends the delay, and the program exits.
func TestSIGTERMDrainsFirst(t *testing.T) {
	t.Parallel()
	p := proctest.Start(t, nil, "--listen", "127.0.0.1:0", "--store", "memory:", "--shutdown-delay", "10m")
	get := func(path string) (*http.Response, error) {
		c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
		return c.Get(p.URL() + path)
	}
	r, err := get("/readyz")
	require.NoError(t, err)
	r.Body.Close()
	require.Equal(t, http.StatusOK, r.StatusCode)

	p.Signal(t, syscall.SIGTERM)
	require.Eventually(t, func() bool {
		r, err := get("/readyz")
		if err != nil {
			return false
		}
		defer r.Body.Close()
		var body struct{ Error struct{ Code string } }
		return r.StatusCode == http.StatusServiceUnavailable && json.NewDecoder(r.Body).Decode(&body) == nil && body.Error.Code == "shutting_down"
	}, 10*time.Second, 20*time.Millisecond, "/readyz answers 503 shutting_down")
	r, err = get("/agents")
	require.NoError(t, err, "the program still serves during --shutdown-delay")
	r.Body.Close()
	assert.Equal(t, http.StatusOK, r.StatusCode)

	p.Stop(t) // the second SIGTERM
	_, err = get("/readyz")
	assert.Error(t, err, "the listener is closed")
}
