package main

import (
	"testing"

	"github.com/aapagui/aapagui/cmd/internal/clitest"
)

// On SIGTERM the program drains for --shutdown-delay: GET /readyz answers
// 503 with the reason in JSON at once, while requests are still served (a
// load balancer may send some before it sees /readyz); a second SIGTERM
// ends the delay, and the program exits.
func TestSIGTERMDrainsFirst(t *testing.T) {
	t.Parallel()
	clitest.DrainsOnSIGTERM(t, "/meta")
}
