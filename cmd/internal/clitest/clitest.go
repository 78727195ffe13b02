package clitest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/internal/testkit/metricstest"
	"github.com/aapagui/aapagui/internal/testkit/otlptest"
	"github.com/aapagui/aapagui/internal/testkit/proctest"
)

// Post posts the JSON body to url, with the extra headers given as
// name, value pairs; the response's body is closed when the test ends.
func Post(t *testing.T, ctx context.Context, url, body string, headers ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

// ShuttingDown reports whether a GET /readyz got 503 with the code
// shutting_down (the server drains); it closes the body.
func ShuttingDown(r *http.Response, err error) bool {
	if err != nil {
		return false
	}
	defer r.Body.Close()
	var body struct{ Error struct{ Code string } }
	return r.StatusCode == http.StatusServiceUnavailable && json.NewDecoder(r.Body).Decode(&body) == nil && body.Error.Code == "shutting_down"
}

// DrainsOnSIGTERM starts the program with --shutdown-delay and checks its
// drain: on SIGTERM GET /readyz answers 503 shutting_down at once while
// GET served (a route of the program) still answers 200; a second SIGTERM
// ends the delay and the listener closes.
func DrainsOnSIGTERM(t *testing.T, served string) {
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
	require.Eventually(t, func() bool { return ShuttingDown(get("/readyz")) },
		10*time.Second, 20*time.Millisecond, "/readyz answers 503 shutting_down")
	r, err = get(served)
	require.NoError(t, err, "the program still serves during --shutdown-delay")
	r.Body.Close()
	assert.Equal(t, http.StatusOK, r.StatusCode)

	p.Stop(t) // the second SIGTERM
	_, err = get("/readyz")
	assert.Error(t, err, "the listener is closed")
}

// UserFlags starts the program with an API key and --user-header
// X-User-Id and checks that GET path (a route that touches a user's
// conversations) refuses a request naming no user with 400
// user_required, naming the header, and answers alice's with 200; then
// that run refuses the --user-jwt flags without an audience, beside
// --user-header, or beside --api-key without a header of its own.
func UserFlags(t *testing.T, run func(args []string) error, path string) {
	p := proctest.Start(t, nil, "--listen", "127.0.0.1:0", "--store", "memory:", "--api-key", "k1", "--user-header", "X-User-Id")
	get := func(user string) (int, string) {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, p.URL()+path, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer k1")
		if user != "" {
			req.Header.Set("X-User-Id", user)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}
	status, body := get("")
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, body, "user_required")
	assert.Contains(t, body, "X-User-Id")
	status, body = get("alice")
	assert.Equal(t, http.StatusOK, status, body)

	secret := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(secret, []byte("hs256:"+strings.Repeat("s", 40)), 0o600))
	refuses := func(args ...string) string { return proctest.Refuses(t, run, args...) }
	assert.Contains(t, refuses("--user-jwt", secret), "audience")
	assert.Contains(t, refuses("--user-jwt", secret, "--user-jwt-audience", "a", "--user-header", "X-User-Id"), "not both")
	assert.Contains(t, refuses("--user-jwt", secret, "--user-jwt-audience", "a", "--api-key", "k1"), "another header")
}

// Limits is what LimitFlags needs of a program.
type Limits struct {
	// Run is the program's run function, for the values it refuses.
	Run func(args []string) error
	// Flags are the limit flags it starts with (beside --api-key k1):
	// they allow one request of Request, not two.
	Flags []string
	// Request is a request the limits count, without its key.
	Request func(ctx context.Context, url string) *http.Request
	// Allowed is the status of the first Request.
	Allowed int
	// Refused maps each limit flag to a value that makes no sense.
	Refused map[string]string
}

// LimitFlags checks that the per-key limit flags reach the server: the
// first request is answered with l.Allowed, the second with 429 and a
// Retry-After, which it returns; and each of l.Refused stops the program,
// naming the flag.
func LimitFlags(t *testing.T, l Limits) *http.Response {
	p := proctest.Start(t, nil, append([]string{"--listen", "127.0.0.1:0", "--store", "memory:", "--api-key", "k1"}, l.Flags...)...)
	send := func() *http.Response {
		req := l.Request(t.Context(), p.URL())
		req.Header.Set("Authorization", "Bearer k1")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		t.Cleanup(func() { _ = resp.Body.Close() })
		return resp
	}
	require.Equal(t, l.Allowed, send().StatusCode)
	resp := send()
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	assert.NotEmpty(t, resp.Header.Get("Retry-After"))

	for flag, value := range l.Refused {
		msg := proctest.Refuses(t, l.Run, flag, value)
		assert.Contains(t, msg, flag)
	}
	return resp
}

// MetricsListen starts the program with an API key and --metrics-listen
// and checks that the metrics port serves /metrics without the key (with
// program's build_info), and that the API port answers /metrics, even
// with the key, with 404.
func MetricsListen(t *testing.T, program string) {
	p := proctest.Start(t, nil, "--listen", "127.0.0.1:0", "--store", "memory:", "--api-key", "k", "--metrics-listen", "127.0.0.1:0")
	addr := p.LogField("metrics_listen")
	require.NotEmpty(t, addr, "the metrics address is logged")
	m := metricstest.Scrape(t, "http://"+addr+"/metrics", "")
	assert.Equal(t, 1.0, m.Value(program+"_build_info"))

	req, err := http.NewRequest(http.MethodGet, p.URL()+"/metrics", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer k")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
}

// MetricsListenOffLoopback starts the program with --metrics-listen on
// every interface: it serves, and its log holds a warning, a line of its
// own with the metrics address, that /metrics is served without a key to
// everyone who can reach it. On loopback there is no such line.
func MetricsListenOffLoopback(t *testing.T) {
	warned := func(p *proctest.Proc) bool {
		for _, line := range strings.Split(p.Log(), "\n") {
			var l struct {
				Level, Message string
				Keyless        bool   `json:"metrics_keyless"`
				Listen         string `json:"metrics_listen"`
			}
			if json.Unmarshal([]byte(line), &l) == nil && l.Keyless {
				assert.Equal(t, "warn", l.Level)
				assert.Contains(t, l.Message, "without a key to everyone who can reach it")
				assert.NotEmpty(t, l.Listen)
				return true
			}
		}
		return false
	}
	open := proctest.Start(t, nil, "--listen", "127.0.0.1:0", "--store", "memory:", "--api-key", "k", "--metrics-listen", "0.0.0.0:0")
	assert.True(t, warned(open), "a warning names the open metrics port:\n%s", open.Log())
	local := proctest.Start(t, nil, "--listen", "127.0.0.1:0", "--store", "memory:", "--api-key", "k", "--metrics-listen", "127.0.0.1:0")
	assert.False(t, warned(local), "no warning on loopback")
}

// CORSWildcard checks that a --cors-origin holding a wildcard, which no
// browser's Origin would match, stops the start, naming the origin and
// why, and that an exact origin and * (with a key) start.
func CORSWildcard(t *testing.T, run func(args []string) error) {
	for _, o := range []string{"http://*.example.com", "https://app.*", "*.example.com"} {
		msg := proctest.Refuses(t, run, "--api-key", "k", "--cors-origin", o)
		assert.Contains(t, msg, o)
		assert.Contains(t, msg, "wildcard")
		assert.Contains(t, msg, "matched exactly")
	}
	for _, o := range []string{"https://app.example.com", "*"} {
		p := proctest.Start(t, nil, "--listen", "127.0.0.1:0", "--store", "memory:", "--api-key", "k", "--cors-origin", o)
		assert.NotEmpty(t, p.Addr, o)
	}
}

// Traces is what TracesOverOTLP needs of a program.
type Traces struct {
	// Env is the environment that sends its traces to the collector at
	// this URL.
	Env func(collector string) []string
	// Turn sends one turn through the program at url and reads its
	// answer to the end.
	Turn func(t *testing.T, ctx context.Context, url string)
	// Server and Save name the spans of the turn's request and of its
	// last store write.
	Server, Save string
	// Service is the service name the spans carry.
	Service string
}

// TracesOverOTLP starts the program with tr.Env and an OTLP/HTTP
// collector and sends a turn: the collector receives the request's server
// span, the upstream call and the store's save as its children, under
// tr.Service.
func TracesOverOTLP(t *testing.T, tr Traces) {
	col := otlptest.New(t)
	p := proctest.Start(t, tr.Env(col.URL), "--listen", "127.0.0.1:0", "--store", "memory:")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tr.Turn(t, ctx, p.URL())

	var server, upstream, save otlptest.Span
	if !assert.Eventually(t, func() bool {
		var ok1, ok2, ok3 bool
		server, ok1 = col.Named(tr.Server)
		upstream, ok2 = col.Named("upstream POST")
		save, ok3 = col.Named(tr.Save)
		return ok1 && ok2 && ok3
	}, 30*time.Second, 20*time.Millisecond) {
		t.Fatalf("spans received: %+v", col.Spans())
	}
	assert.Equal(t, tr.Service, server.Service, "the service name")
	assert.Equal(t, server.SpanID, upstream.ParentSpanID)
	assert.Equal(t, server.TraceID, upstream.TraceID)
	assert.Equal(t, server.SpanID, save.ParentSpanID)
}
