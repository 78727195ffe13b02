package edge

import (
	"io"
	"mime"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/aapagui/aapagui/bridge/internal/fault"
)

// JSONBody answers 415 to a request that carries a body not declared as
// application/json. A browser sends text/plain, form and multipart bodies
// cross-site without a preflight; demanding JSON makes every such request
// need one, which an open bridge on localhost never grants to a stranger.
// Requests without a body (Content-Length 0) pass.
func JSONBody(c *gin.Context) {
	r := c.Request
	if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
		return
	}
	ct := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/json" {
		if ct == "" {
			ct = "none"
		}
		Reply(c, fault.Fail(fault.KindUnsupportedMediaType, "unsupported_media_type",
			"the request body must be JSON with Content-Type: application/json (got "+ct+")"))
	}
}

// HostAllow refuses (403) requests whose Host is neither a loopback name
// (localhost, *.localhost, 127.0.0.0/8, ::1) nor one of allowed (host names
// or addresses, ports ignored; "*" allows any). A bridge without API keys
// uses it against DNS rebinding: a web page whose name resolves to
// 127.0.0.1 still sends its own name as Host.
func HostAllow(allowed []string) gin.HandlerFunc {
	set := map[string]bool{}
	for _, h := range allowed {
		set[strings.ToLower(hostOnly(h))] = true
	}
	return func(c *gin.Context) {
		if set["*"] {
			return
		}
		host := strings.ToLower(hostOnly(c.Request.Host))
		if IsLoopbackHost(host) || set[host] {
			return
		}
		Reply(c, fault.Fail(fault.KindForbidden, "host_not_allowed",
			"the Host "+quote(c.Request.Host)+" is not allowed: without API keys only loopback names, the listen address and --allowed-host are served"))
	}
}

// IsLoopbackHost reports whether host (without a port) names this machine
// only: localhost, a name under .localhost, or a loopback address.
func IsLoopbackHost(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

func quote(s string) string {
	if len(s) > 100 {
		s = s[:100] + "…"
	}
	return "\"" + s + "\""
}

// BodyTimeout bounds the time to receive a request body: a client that
// sends headers and then trickles (or stops) the body is cut off after d
// instead of holding its connection forever. The deadline is lifted once
// the handler starts, so that a streamed answer is never cut by it; the
// handler reads the body through the same deadline, set here. Zero: no
// limit.
func BodyTimeout(d time.Duration) gin.HandlerFunc {
	return func(c *gin.Context) {
		if d <= 0 || c.Request.ContentLength == 0 || c.Request.Body == nil || c.Request.Body == http.NoBody {
			return
		}
		rc := http.NewResponseController(c.Writer)
		if err := rc.SetReadDeadline(time.Now().Add(d)); err != nil {
			return // not a net/http connection (a test recorder): nothing to bound
		}
		c.Request.Body = &deadlineBody{ReadCloser: c.Request.Body, lift: func() { _ = rc.SetReadDeadline(time.Time{}) }}
	}
}

// deadlineBody lifts the connection's read deadline once the body has
// been read to its end.
type deadlineBody struct {
	io.ReadCloser
	lift func()
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && b.lift != nil {
		b.lift()
		b.lift = nil
	}
	return n, err
}
