package upstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/aapagui/aapagui/bridge/internal/fault"
	"github.com/aapagui/aapagui/internal/redirect"
)

// NewClient returns the HTTP client a bridge calls its upstream
// with when its Config gives none: http.DefaultTransport's proxy and
// HTTP/2 settings, a pool sized for a proxy (many concurrent turns to one
// upstream: the standard library keeps only 2 idle connections per host,
// so a burst of turns would open and close a connection each), and small
// connection buffers; it asks for no compression. It follows no
// redirect (redirect.Refuse): the place a redirect points to would get
// the turn and the upstream's headers.
func NewClient() *http.Client {
	return &http.Client{CheckRedirect: redirect.Refuse, Transport: &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     90 * time.Second,
		ForceAttemptHTTP2:   true,
		// An open stream keeps its connection's buffers: 1 KiB each
		// instead of 4 KiB saves 6 KiB per stream. Requests are
		// written in 1 KiB pieces; the SSE reader reads the response
		// into its own larger buffer, which bypasses this one.
		WriteBufferSize: 1 << 10,
		ReadBufferSize:  1 << 10,
		// No "Accept-Encoding: gzip" of the transport's own: a stream
		// is relayed as it comes, and a compressed one would hold its
		// tokens in the agent's compressor; the header the transport
		// adds is also a map of its own on every call (352 bytes,
		// kept for as long as the stream is open).
		DisableCompression: true,
	}}
}

// ErrHeaderTimeout is the cause of an upstream call whose response
// headers did not arrive within the header timeout (see Dial).
var ErrHeaderTimeout = errors.New("upstream connect timeout")

// Dial makes a turn's streaming call to its upstream: call is made with a
// context derived from ctx, whose response headers are waited for header
// at most (the error is then wrapped with ErrHeaderTimeout, and a body
// that came just too late is closed); the body it returns is read for as
// long as it keeps sending events within idle (IdleBody). Closing the
// body ends the call's context. On error nothing is left open. call
// checks the response (status, content type) itself, closing what it
// refuses.
func Dial(ctx context.Context, header, idle time.Duration, call func(context.Context) (io.ReadCloser, error)) (*IdleBody, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	b := &IdleBody{d: idle, cancel: cancel}
	b.mu.Lock()
	b.timer = time.AfterFunc(header, b.tick)
	b.mu.Unlock()
	body, err := call(ctx)
	if err = b.connected(ctx, err); err != nil {
		if body != nil {
			body.Close() // the bound fired just as the headers arrived
		}
		cancel(nil)
		return nil, err
	}
	b.ReadCloser = body
	return b, nil
}

// Failure names a failed upstream call, before its stream began,
// for the failures both bridges share: no answer within the header
// timeout or another deadline (504 upstream_timeout), or no answer at all
// (502 upstream_unreachable), or a redirect, which is not followed (502
// upstream_redirect, naming its status and where it pointed). who names
// the upstream in the message ("the agent", "the AAP server"). Each bridge
// names first what only its wire has (an HTTP status, a content type, a
// protocol version).
func Failure(err error, who string, header time.Duration) *fault.Failure {
	var netErr net.Error
	var re *redirect.Error
	switch {
	case errors.As(err, &re):
		return fault.Fail(fault.KindUpstream, "upstream_redirect", fmt.Sprintf("%s answered HTTP %d, a redirect to %s, which is not followed: configure the URL it points to if it is the upstream's", who, re.StatusCode, re.Location))
	case errors.Is(err, ErrHeaderTimeout):
		return fault.Fail(fault.KindUpstreamTimeout, "upstream_timeout", who+" did not answer within "+header.String())
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return fault.Fail(fault.KindUpstreamTimeout, "upstream_timeout", who+" did not answer in time")
	}
	return fault.Fail(fault.KindUpstream, "upstream_unreachable", who+" could not be reached")
}
