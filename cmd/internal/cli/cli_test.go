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
)

// A running request (a turn) finishes when the server is told to stop;
// new connections are refused; Serve returns once it is done.
func TestServeShutsDownGracefully(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "event: turn_start\ndata: {}\n\n")
		w.(http.Flusher).Flush()
		close(entered)
		<-release
		_, _ = io.WriteString(w, "event: turn_stop\ndata: {\"stopReason\":\"end_turn\"}\n\n")
	})
	ctx, stop := context.WithCancel(context.Background())
	addrc := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- cli.Serve(ctx, zerolog.Nop(), cli.ServeOptions{Addr: "127.0.0.1:0", Handler: h, Grace: 5 * time.Second, Ready: func(a net.Addr) { addrc <- a }})
	}()
	addr := (<-addrc).String()

	resp, err := http.Get("http://" + addr + "/")
	require.NoError(t, err)
	defer resp.Body.Close()
	<-entered
	stop() // as SIGTERM would

	// Without a shutdown delay the listener closes at once: new
	// connections are refused.
	require.Eventually(t, func() bool {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
		}
		return err != nil
	}, 2*time.Second, 10*time.Millisecond)
	select {
	case <-done:
		t.Fatal("Serve returned while a turn was still running")
	default:
	}
	close(release)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Contains(t, string(body), "turn_stop", "the running turn finished")
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after the last request")
	}
}

// A turn that outlives the grace period is cut, and Serve still returns.
func TestServeGraceIsBounded(t *testing.T) {
	entered := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		close(entered)
		<-r.Context().Done() // never finishes on its own
	})
	ctx, stop := context.WithCancel(context.Background())
	addrc := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- cli.Serve(ctx, zerolog.Nop(), cli.ServeOptions{Addr: "127.0.0.1:0", Handler: h, Grace: 200 * time.Millisecond, Ready: func(a net.Addr) { addrc <- a }})
	}()
	resp, err := http.Get("http://" + (<-addrc).String() + "/")
	require.NoError(t, err)
	defer resp.Body.Close()
	<-entered
	stop()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Serve waited past its grace period")
	}
}

func TestFlagsFromEnvironment(t *testing.T) {
	t.Setenv("PROG_LISTEN", "127.0.0.1:9")
	t.Setenv("PROG_API_KEY", "a, b,,c")
	t.Setenv("PROG_VERBOSE", "true")
	f := cli.NewFlags("prog", "PROG")
	listen := f.String("listen", "127.0.0.1:1", "")
	keys := f.List("api-key", ",", "")
	verbose := f.Bool("verbose", false, "")
	require.NoError(t, f.Parse(nil))
	assert.Equal(t, "127.0.0.1:9", *listen)
	assert.Equal(t, []string{"a", "b", "c"}, *keys)
	assert.True(t, *verbose)

	f = cli.NewFlags("prog", "PROG")
	keys = f.List("api-key", ",", "")
	require.NoError(t, f.Parse([]string{"--api-key", "z"}))
	assert.Equal(t, []string{"z"}, *keys, "flags on the command line replace the environment's")
}

func TestParseHeader(t *testing.T) {
	name, value, err := cli.ParseHeader("Authorization: Bearer xyz")
	require.NoError(t, err)
	assert.Equal(t, "Authorization", name)
	assert.Equal(t, "Bearer xyz", value)
	_, _, err = cli.ParseHeader("Authorization Bearer xyz")
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "xyz", "a malformed header's value is never echoed")
	for _, bad := range []string{"X-A: xyz\r\nX-Evil: 1", "X-A: xyz\nX-B: 1", "X-A: x\x00yz", "X-A: xyz\x7f", "X\rA: xyz", "X/A: xyz"} {
		_, _, err = cli.ParseHeader(bad)
		require.Error(t, err, "%q", bad)
		assert.NotContains(t, err.Error(), "xyz", "the value is never echoed")
	}
	_, value, err = cli.ParseHeader("X-A: a\tb")
	require.NoError(t, err, "a tab is allowed in a value")
	assert.Equal(t, "a\tb", value)
	require.NoError(t, cli.CheckHeaderValues("--api-key", "a", "b c"))
	err = cli.CheckHeaderValues("--api-key", "a", "xyz\r\n")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--api-key")
	assert.NotContains(t, err.Error(), "xyz")
}

// An environment variable that does not parse stops the program with a
// message naming it, instead of silently using the default.
func TestFlagsRejectBadEnvironment(t *testing.T) {
	for _, tc := range []struct {
		name, env, value string
		define           func(f *cli.Flags)
	}{
		{"integer", "PROG_MAX_BODY", "abc", func(f *cli.Flags) { f.Int64("max-body", 8, "") }},
		{"boolean", "PROG_PUBLIC_META", "yes please", func(f *cli.Flags) { f.Bool("public-meta", false, "") }},
		{"duration", "PROG_SHUTDOWN_TIMEOUT", "30", func(f *cli.Flags) { f.Duration("shutdown-timeout", time.Second, "") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(tc.env, tc.value)
			f := cli.NewFlags("prog", "PROG")
			f.SetOutput(io.Discard)
			tc.define(f)
			err := f.Parse(nil)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.env)
			assert.Contains(t, err.Error(), tc.value)
		})
	}
}

// --api-key a,b on the command line means two keys, as the environment
// variable does.
func TestListFlagSplits(t *testing.T) {
	f := cli.NewFlags("prog", "PROG")
	keys := f.List("api-key", ",", "")
	headers := f.List("upstream-header", "\n", "")
	require.NoError(t, f.Parse([]string{"--api-key", "a,b", "--api-key", "c", "--upstream-header", "X-A: 1,2"}))
	assert.Equal(t, []string{"a", "b", "c"}, *keys)
	assert.Equal(t, []string{"X-A: 1,2"}, *headers, "a header value keeps its commas")

	f = cli.NewFlags("prog", "PROG")
	headers = f.List("upstream-header", "\n", "")
	require.NoError(t, f.Parse([]string{"--upstream-header", "X-A: 1\r\nX-B: 2"}))
	assert.Equal(t, []string{"X-A: 1\r\nX-B: 2"}, *headers, "one use of a line list is one value, for ParseHeader to refuse")

	t.Setenv("PROG_UPSTREAM_HEADER", "X-A: 1\r\nX-B: 2\n")
	f = cli.NewFlags("prog", "PROG")
	headers = f.List("upstream-header", "\n", "")
	require.NoError(t, f.Parse(nil))
	assert.Equal(t, []string{"X-A: 1", "X-B: 2"}, *headers, "the environment variable holds one value per line")
}

func TestFloatFlag(t *testing.T) {
	t.Setenv("PROG_RATE", "2.5")
	f := cli.NewFlags("prog", "PROG")
	rate := f.Float64("rate", 0, "")
	require.NoError(t, f.Parse(nil))
	assert.InDelta(t, 2.5, *rate, 0)

	t.Setenv("PROG_RATE", "fast")
	f = cli.NewFlags("prog", "PROG")
	f.SetOutput(io.Discard)
	f.Float64("rate", 0, "")
	err := f.Parse(nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "PROG_RATE")
}

func TestCheckExposure(t *testing.T) {
	hosts, err := cli.CheckExposure("127.0.0.1:8080", true, false, []string{"bridge.internal"})
	require.NoError(t, err)
	assert.Equal(t, []string{"bridge.internal", "127.0.0.1"}, hosts)

	_, err = cli.CheckExposure("0.0.0.0:8080", true, false, nil)
	require.Error(t, err, "an open bridge on every interface needs an explicit flag")
	assert.Contains(t, err.Error(), "--insecure-open")
	_, err = cli.CheckExposure(":8080", true, false, nil)
	require.Error(t, err)

	hosts, err = cli.CheckExposure("0.0.0.0:8080", true, true, nil)
	require.NoError(t, err)
	assert.Empty(t, hosts, "an unspecified address is no Host name")
	hosts, err = cli.CheckExposure("10.0.0.5:8080", false, false, nil)
	require.NoError(t, err, "with API keys any address is fine")
	assert.Equal(t, []string{"10.0.0.5"}, hosts)
}
