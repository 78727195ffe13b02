package cli_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/cmd/internal/cli"
	"github.com/aapagui/aapagui/cmd/internal/clitest"
)

// drainHandler serves /readyz (ready), /turn (a turn that streams until
// release is closed; entered is closed once it has started) and any other
// path (a short answer).
func drainHandler(entered, release chan struct{}) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	mux.HandleFunc("GET /turn", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "event: turn_start\ndata: {}\n\n")
		w.(http.Flusher).Flush()
		close(entered)
		<-release
		_, _ = io.WriteString(w, "event: turn_stop\ndata: {\"stopReason\":\"end_turn\"}\n\n")
	})
	mux.HandleFunc("GET /", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "hello\n") })
	return mux
}

// On SIGTERM with a shutdown delay, the server first drains: /readyz
// answers 503 (in JSON) while new connections are still accepted and
// served, each closed after its response; then the listener closes, the
// running turn finishes, and Serve returns without an error.
func TestServeDrainsBeforeClosing(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	ctx, stop := context.WithCancel(context.Background())
	addrc := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- cli.Serve(ctx, zerolog.Nop(), cli.ServeOptions{
			Addr: "127.0.0.1:0", Handler: drainHandler(entered, release),
			Delay: 3 * time.Second, Grace: 10 * time.Second, Ready: func(a net.Addr) { addrc <- a },
		})
	}()
	base := "http://" + (<-addrc).String()
	ready, err := http.Get(base + "/readyz")
	require.NoError(t, err)
	ready.Body.Close()
	require.Equal(t, http.StatusOK, ready.StatusCode)
	turn, err := http.Get(base + "/turn")
	require.NoError(t, err)
	defer turn.Body.Close()
	<-entered
	stop() // as SIGTERM would

	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	require.Eventually(t, func() bool { return clitest.ShuttingDown(fresh.Get(base + "/readyz")) }, 2*time.Second, 10*time.Millisecond, "/readyz says the server is not ready")

	// A request that a load balancer sent before it saw that is served,
	// on a new connection, which closes after the response.
	r, err := http.Get(base + "/")
	require.NoError(t, err, "the listener still accepts during the delay")
	body, _ := io.ReadAll(r.Body)
	r.Body.Close()
	assert.Equal(t, "hello\n", string(body))
	assert.True(t, r.Close, "the response closes its connection")

	// Then the listener closes, and the running turn goes on to its end.
	require.Eventually(t, func() bool {
		_, err := fresh.Get(base + "/")
		return err != nil
	}, 10*time.Second, 20*time.Millisecond, "the listener closes after the delay")
	select {
	case <-done:
		t.Fatal("Serve returned while a turn was still running")
	default:
	}
	close(release)
	rest, err := io.ReadAll(turn.Body)
	require.NoError(t, err)
	assert.Contains(t, string(rest), "turn_stop", "the running turn finished")
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after the last request")
	}
}
