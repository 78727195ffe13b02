package edge_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/bridge/internal/edge"
	"github.com/aapagui/aapagui/bridge/internal/ssestream"
)

func errorCode(t *testing.T, body []byte) string {
	t.Helper()
	var e struct {
		Error struct{ Code, Message string }
	}
	require.NoError(t, json.Unmarshal(body, &e), "%s", body)
	return e.Error.Code
}

func echoEngine(guards ...gin.HandlerFunc) *gin.Engine {
	e := edge.NewEngine(zerolog.Nop(), 1<<20, nil, guards...)
	e.POST("/things", edge.JSONBody, func(c *gin.Context) {
		b, err := io.ReadAll(c.Request.Body)
		if err != nil {
			edge.ReadError(c, err)
			return
		}
		c.Data(http.StatusOK, "application/json", b)
	})
	return e
}

// A cross-site "simple" request (text/plain, form) is refused; JSON, with
// or without parameters, passes; a POST without a body passes.
func TestJSONBody(t *testing.T) {
	e := echoEngine()
	for _, tc := range []struct {
		name, ct, body string
		want           int
	}{
		{"json", "application/json", `{}`, http.StatusOK},
		{"json with charset", "application/json; charset=utf-8", `{}`, http.StatusOK},
		{"text/plain", "text/plain", `{}`, http.StatusUnsupportedMediaType},
		{"form", "application/x-www-form-urlencoded", `{}`, http.StatusUnsupportedMediaType},
		{"no content type", "", `{}`, http.StatusUnsupportedMediaType},
		{"no body", "", ``, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/things", strings.NewReader(tc.body))
			if tc.ct != "" {
				r.Header.Set("Content-Type", tc.ct)
			}
			w := httptest.NewRecorder()
			e.ServeHTTP(w, r)
			assert.Equal(t, tc.want, w.Code, w.Body.String())
			if tc.want == http.StatusUnsupportedMediaType {
				assert.Equal(t, "unsupported_media_type", errorCode(t, w.Body.Bytes()))
			}
		})
	}
}

// Without keys, a Host that is not a loopback name or allowed is refused:
// a DNS-rebinding page sends its own name.
func TestHostAllow(t *testing.T) {
	e := echoEngine(edge.HostAllow([]string{"bridge.internal", "10.0.0.5:9999"}))
	for _, tc := range []struct {
		host string
		want int
	}{
		{"localhost:8080", http.StatusOK},
		{"LOCALHOST", http.StatusOK},
		{"app.localhost:8080", http.StatusOK},
		{"127.0.0.1:8080", http.StatusOK},
		{"127.9.9.9", http.StatusOK},
		{"[::1]:8080", http.StatusOK},
		{"bridge.internal:8080", http.StatusOK},
		{"10.0.0.5:8080", http.StatusOK},
		{"evil.example:8080", http.StatusForbidden},
		{"localhost.evil.example", http.StatusForbidden},
		{"10.0.0.6", http.StatusForbidden},
		{"", http.StatusForbidden},
	} {
		t.Run(tc.host, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/things", strings.NewReader(`{}`))
			r.Host = tc.host
			r.Header.Set("Content-Type", "application/json")
			w := httptest.NewRecorder()
			e.ServeHTTP(w, r)
			assert.Equal(t, tc.want, w.Code, w.Body.String())
			if tc.want == http.StatusForbidden {
				assert.Equal(t, "host_not_allowed", errorCode(t, w.Body.Bytes()))
			}
		})
	}
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodGet, "/healthz", nil)
	r.Host = "evil.example"
	echoEngine(edge.HostAllow([]string{"*"})).ServeHTTP(w, r)
	assert.Equal(t, http.StatusOK, w.Code, "* allows any Host")
}

// A trailing slash or an unknown path answers JSON 404, never a redirect.
func TestUnknownRoutesAreJSON404(t *testing.T) {
	e := echoEngine()
	for _, path := range []string{"/things/", "/healthz/", "/nope", "/THINGS"} {
		for _, method := range []string{http.MethodGet, http.MethodPost} {
			r := httptest.NewRequest(method, path, nil)
			w := httptest.NewRecorder()
			e.ServeHTTP(w, r)
			assert.Equal(t, http.StatusNotFound, w.Code, "%s %s", method, path)
			assert.Empty(t, w.Header().Get("Location"))
			assert.Equal(t, "not_found", errorCode(t, w.Body.Bytes()), "%s %s", method, path)
		}
	}
}

// A client that sends headers and then stops sending its body is cut off
// after the body timeout; a streamed answer afterwards is not.
func TestBodyTimeout(t *testing.T) {
	e := edge.NewEngine(zerolog.Nop(), 1<<20, nil, edge.BodyTimeout(300*time.Millisecond))
	e.POST("/slow", func(c *gin.Context) {
		if _, err := io.ReadAll(c.Request.Body); err != nil {
			edge.ReadError(c, err)
			return
		}
		c.Status(http.StatusOK)
		c.Writer.Flush()
		time.Sleep(600 * time.Millisecond) // longer than the body timeout
		_, _ = io.WriteString(c.Writer, "done")
	})
	srv := httptest.NewServer(e)
	defer srv.Close()

	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	_, err = io.WriteString(conn, "POST /slow HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
	require.NoError(t, err)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err, "the server answers instead of waiting for the rest of the body")
	body, _ := io.ReadAll(resp.Body)
	assert.Equal(t, http.StatusRequestTimeout, resp.StatusCode)
	assert.Equal(t, "body_timeout", errorCode(t, body))

	// A whole body, then an answer that outlasts the body timeout.
	resp, err = http.Post(srv.URL+"/slow", "application/json", strings.NewReader(`{}`))
	require.NoError(t, err)
	body, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, "done", string(body))
}

// A stream whose upstream is silent gets ": keep-alive" comments; once the
// upstream speaks, its data follows, and no comment is written while data
// is flowing.
func TestStreamKeepAlive(t *testing.T) {
	upR, upW := io.Pipe()
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		defer close(done)
		s := ssestream.New(w)
		s.KeepAlive = 50 * time.Millisecond
		s.Start()
		s.Flush()
		r := ssestream.FlushBeforeRead(upR, s)
		p := make([]byte, 64)
		for {
			n, err := r.Read(p)
			if n > 0 {
				s.Commit(append(s.Buffer(), p[:n]...))
			}
			if err != nil {
				s.Flush()
				return
			}
		}
	}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	require.NoError(t, err)
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	line, err := br.ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, ": keep-alive\n", line, "an idle stream gets a comment")
	_, _ = br.ReadString('\n') // its blank line

	go func() {
		_, _ = io.WriteString(upW, "data: 1\n\n")
		upW.Close()
	}()
	rest, err := io.ReadAll(br)
	require.NoError(t, err)
	assert.Contains(t, string(rest), "data: 1\n\n")
	<-done
}
