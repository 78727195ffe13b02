package aap

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/aapagui/aapagui/internal/jsonenc"
	"github.com/aapagui/aapagui/internal/redact"
	"github.com/aapagui/aapagui/internal/redirect"
	"github.com/aapagui/aapagui/internal/reqbody"
)

// ClientOptions configures a Client. The zero value is ready to use.
type ClientOptions struct {
	// HTTPClient sends the requests. Nil means a shared client whose
	// transport keeps up to 64 idle connections per host and which has no
	// overall timeout, since a streaming turn lasts as long as the agent
	// runs: bound calls with their context instead.
	//
	// Redirects are not followed (the place one points to would get the
	// request, its body and the API key): a redirect answer fails the
	// call with a *RedirectError. A client given here without a
	// CheckRedirect is used as a copy that refuses them; one with a
	// CheckRedirect of its own keeps it.
	HTTPClient *http.Client
	// APIKey is sent as "Authorization: Bearer <APIKey>". Empty sends no
	// Authorization header (unless Header has one).
	APIKey string
	// Header holds extra headers sent with every request. Nil sends none.
	// The client's own Content-Type, Accept and (with APIKey) Authorization
	// take precedence.
	Header http.Header
	// MaxEventSize bounds one SSE event of a streaming turn, in bytes. Zero
	// means the default of ReadEvents.
	MaxEventSize int
	// MaxErrorBody is how many bytes of an error response's body are read
	// into HTTPError.Body. Zero or negative means 64 KiB.
	MaxErrorBody int
	// Version is the protocol version to speak (1, 2 or 3) whatever the
	// server's GET /meta says. Zero means the client reads it from GET
	// /meta on first use (see Client.Version).
	Version int
}

const defaultMaxErrorBody = 64 << 10

// defaultHTTPClient is shared by every Client without its own, so that they
// share one connection pool. Its transport is http.DefaultTransport's
// settings with a pool sized for a proxy, which sends many concurrent turns
// to one upstream: the standard library keeps only 2 idle connections per
// host, so a burst of turns would open and close a connection each.
var defaultHTTPClient = &http.Client{
	CheckRedirect: redirect.Refuse,
	Transport: &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		DialContext: (&net.Dialer{
			Timeout:   30 * time.Second,
			KeepAlive: 30 * time.Second,
		}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	},
}

// Client calls the endpoints of an AAP server of version 1, 2 or 3 (see
// Version). It is safe for concurrent use.
type Client struct {
	base         string // without a trailing slash
	hc           *http.Client
	apiKey       string
	header       http.Header
	maxEventSize int
	maxErrorBody int
	forced       int          // the version given in ClientOptions; 0: detect
	detected     atomic.Int64 // the version read from GET /meta; 0: not yet
}

// NewClient returns a client of the AAP server at baseURL, which may carry a
// path prefix ("https://api.example.com/v1"); a trailing slash is ignored.
// An unusable baseURL makes every call fail.
func NewClient(baseURL string, opts ClientOptions) *Client {
	c := &Client{
		base:         strings.TrimRight(baseURL, "/"),
		hc:           redirect.Client(opts.HTTPClient),
		apiKey:       opts.APIKey,
		header:       opts.Header.Clone(),
		maxEventSize: opts.MaxEventSize,
		maxErrorBody: opts.MaxErrorBody,
		forced:       opts.Version,
	}
	if c.hc == nil {
		c.hc = defaultHTTPClient
	}
	if c.maxErrorBody <= 0 {
		c.maxErrorBody = defaultMaxErrorBody
	}
	return c
}

// The endpoints, as named in errors.
const (
	epMeta          = "GET /meta"
	epListSessions  = "GET /sessions"
	epCreateSession = "POST /sessions"
	epGetSession    = "GET /sessions/{id}"
	epDeleteSession = "DELETE /sessions/{id}"
	epHistory       = "GET /sessions/{id}/history"
	epTurn          = "POST /sessions/{id}/turns"

	// Versions 1 and 2.
	epPutSession      = "PUT /session"
	epGetSessionV1    = "GET /session/{id}"
	epDeleteSessionV1 = "DELETE /session/{id}"
	epHistoryV2       = "GET /session/{id}/history"
	epTurnV1          = "POST /session/{id}"
)

// HTTPError is an error status from the server. Code and Message come from
// the body when it is the project's error shape (see ErrorResponse) and are
// empty otherwise; Body holds the start of the body (see
// ClientOptions.MaxErrorBody). A server or proxy may echo the request's
// headers in its error, so the client masks in Body (and so in Code and
// Message) the credentials its request sent and any the body names
// (redact.Echoed), and Error masks those the body names once more. The
// client's methods return it wrapped with the endpoint: use errors.As, or
// IsNotFound.
type HTTPError struct {
	StatusCode int
	Code       string
	Message    string
	Body       []byte
}

// Error describes the failure.
func (e *HTTPError) Error() string {
	var sb strings.Builder
	sb.WriteString("aap: HTTP ")
	sb.WriteString(strconv.Itoa(e.StatusCode))
	if text := http.StatusText(e.StatusCode); text != "" {
		sb.WriteString(" " + text)
	}
	switch {
	case e.Code != "" || e.Message != "":
		if e.Code != "" {
			sb.WriteString(": " + redact.Echoed(e.Code, nil))
		}
		if e.Message != "" {
			sb.WriteString(": " + redact.Echoed(e.Message, nil))
		}
	case len(e.Body) > 0:
		// Quoted so that an HTML error page stays on one line.
		const maxShown = 200
		body := e.Body
		if len(body) > maxShown {
			body = body[:maxShown]
		}
		sb.WriteString(": " + strconv.Quote(redact.Echoed(strings.ToValidUTF8(string(body), string(utf8.RuneError)), nil)))
	}
	return sb.String()
}

// RedirectError is a redirect the client did not follow (see
// ClientOptions.HTTPClient): its status and the URL it pointed to,
// without that URL's user information, query or fragment. The client's
// methods return it wrapped with the endpoint: use errors.As.
type RedirectError = redirect.Error

// IsNotFound reports whether err is (or wraps) an HTTPError with status
// 404: the session does not exist, or the agent does not serve the
// requested history type.
func IsNotFound(err error) bool {
	var he *HTTPError
	return (errors.As(err, &he) && he.StatusCode == http.StatusNotFound) || errors.Is(err, ErrHistoryNotServed)
}

// ErrStreamIncomplete reports a streaming turn that ended before its
// turn_stop event: the server closed the stream early or the connection was
// cut. The events before it were delivered.
var ErrStreamIncomplete = errors.New("aap: stream ended before turn_stop")

// ErrNotEventStream reports a turn answered with a Content-Type other than
// text/event-stream (an HTML error page from a proxy, say).
var ErrNotEventStream = errors.New("response is not an event stream")

// endpointError names the endpoint an error came from.
type endpointError struct {
	endpoint string
	what     string // what went wrong, when err alone does not say
	err      error
}

// Error describes the failure.
func (e *endpointError) Error() string {
	msg := "aap: " + e.endpoint + ": "
	if e.what != "" {
		msg += e.what + ": "
	}
	return msg + strings.TrimPrefix(e.err.Error(), "aap: ")
}

// Unwrap returns the underlying error.
func (e *endpointError) Unwrap() error { return e.err }

// Meta returns the server's protocol version and agents, in the version 3
// shape whatever the server's version (see DecodeMeta). Unless the client
// was given a version, it remembers the server's for the calls that
// follow.
func (c *Client) Meta(ctx context.Context) (*GetMetaResponse, error) {
	var out metaBody
	granted, err := c.callHeader(ctx, http.MethodGet, epMeta, "/meta", nil, &out)
	if err != nil {
		return nil, err
	}
	if v, err := versionOf(out.meta.Version); err == nil {
		c.detected.Store(int64(v))
	}
	if vs := granted.Values(ExtensionsHeader); len(vs) > 0 {
		out.meta.Extensions = http.Header{http.CanonicalHeaderKey(ExtensionsHeader): vs}
	}
	return &out.meta, nil
}

// metaBody decodes GET /meta of any version.
type metaBody struct{ meta GetMetaResponse }

// UnmarshalJSON decodes with DecodeMeta.
func (m *metaBody) UnmarshalJSON(data []byte) error {
	meta, err := DecodeMeta(data)
	if err != nil {
		return err
	}
	m.meta = *meta
	return nil
}

// DecodeMeta decodes the body of GET /meta of any version, in the version
// 3 shape: a body whose version is 1 or 2 is read as MetaResponseV1 (tool
// schemas under inputSchema), any other as GetMetaResponse. Version is the
// server's.
func DecodeMeta(data []byte) (*GetMetaResponse, error) {
	var w struct {
		Version json.RawMessage `json:"version"`
	}
	if err := decodeObject(data, &w); err != nil {
		return nil, err
	}
	if v := string(w.Version); v == "1" || v == "2" {
		var old MetaResponseV1
		if err := old.UnmarshalJSON(data); err != nil {
			return nil, err
		}
		return old.V3(), nil
	}
	var out GetMetaResponse
	if err := out.UnmarshalJSON(data); err != nil {
		return nil, err
	}
	return &out, nil
}

// ErrWrongVersion reports a call of an endpoint that the server's protocol
// version does not have (CreateSession on a version 1 server, PutSession
// on a version 3 one).
var ErrWrongVersion = errors.New("aap: endpoint not in the server's protocol version")

// ErrUnsupportedVersion reports a server whose GET /meta names a protocol
// version this package does not speak. Give the client a version
// (ClientOptions.Version) to talk to it anyway.
var ErrUnsupportedVersion = errors.New("aap: unsupported protocol version")

// ErrHistoryNotServed reports a version 1 server that left out the history
// asked for in GET /session/:id?history=…, as it does when its agent does
// not serve that type (a version 2 or 3 server answers 404). IsNotFound
// reports it too.
var ErrHistoryNotServed = errors.New("aap: the agent does not serve this history type")

// versionOf is the protocol a /meta version means: an absent version (0)
// is read as version 3, the current one.
func versionOf(v int) (int, error) {
	switch {
	case v == 0:
		return Version3, nil
	case KnownVersion(v):
		return v, nil
	}
	return 0, fmt.Errorf("%w %d (this client speaks 1, 2 and 3)", ErrUnsupportedVersion, v)
}

// Version returns the protocol version the client speaks: the one it was
// given, else the server's, read from GET /meta on first use (a Meta call
// reads it too). A /meta without a version is taken for version 3; one
// with a version other than 1, 2 or 3 is an ErrUnsupportedVersion.
func (c *Client) Version(ctx context.Context) (int, error) {
	if c.forced != 0 {
		if !KnownVersion(c.forced) {
			return 0, fmt.Errorf("%w %d (this client speaks 1, 2 and 3)", ErrUnsupportedVersion, c.forced)
		}
		return c.forced, nil
	}
	if v := c.detected.Load(); v != 0 {
		return int(v), nil
	}
	m, err := c.Meta(ctx)
	if err != nil {
		return 0, err
	}
	v, err := versionOf(m.Version)
	if err != nil {
		return 0, &endpointError{endpoint: epMeta, err: err}
	}
	return v, nil
}

// WithVersion returns a copy of the client that speaks version v (1, 2 or
// 3) without asking the server; 0 means the copy reads it from GET /meta.
func (c *Client) WithVersion(v int) *Client {
	out := &Client{base: c.base, hc: c.hc, apiKey: c.apiKey, header: c.header, maxEventSize: c.maxEventSize, maxErrorBody: c.maxErrorBody, forced: v}
	if v == 0 {
		out.detected.Store(c.detected.Load())
	}
	return out
}

// legacy reports whether the client speaks version 1 or 2, and which.
func (c *Client) legacy(ctx context.Context) (int, bool, error) {
	v, err := c.Version(ctx)
	return v, err == nil && v != Version3, err
}

// ListSessions returns one page of sessions: the first when after is empty,
// otherwise the page after that cursor (a previous page's Next). Version 1
// lists ids only: each session then has just its SessionID.
func (c *Client) ListSessions(ctx context.Context, after string) (*GetSessionsResponse, error) {
	v, old, err := c.legacy(ctx)
	if err != nil {
		return nil, err
	}
	path := "/sessions"
	if after != "" {
		path += "?after=" + url.QueryEscape(after)
	}
	switch {
	case old && v == Version1:
		var out SessionListResponseV1
		if err := c.call(ctx, http.MethodGet, epListSessions, path, nil, &out); err != nil {
			return nil, err
		}
		return out.V3(), nil
	case old:
		var out SessionListResponseV2
		if err := c.call(ctx, http.MethodGet, epListSessions, path, nil, &out); err != nil {
			return nil, err
		}
		return out.V3(), nil
	}
	var out GetSessionsResponse
	if err := c.call(ctx, http.MethodGet, epListSessions, path, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Sessions yields every session, following the pages' next cursors. An
// error ends the sequence; so does a cursor the server already returned,
// which would otherwise loop forever.
func (c *Client) Sessions(ctx context.Context) iter.Seq2[SessionInfo, error] {
	return func(yield func(SessionInfo, error) bool) {
		var after string
		seen := make(map[string]bool)
		for {
			page, err := c.ListSessions(ctx, after)
			if err != nil {
				yield(SessionInfo{}, err)
				return
			}
			for _, s := range page.Sessions {
				if !yield(s, nil) {
					return
				}
			}
			if page.Next == "" {
				return
			}
			if seen[page.Next] {
				yield(SessionInfo{}, &endpointError{endpoint: epListSessions, err: fmt.Errorf("next cursor %q was already returned", page.Next)})
				return
			}
			seen[page.Next] = true
			after = page.Next
		}
	}
}

// CreateSession creates a session and returns its id. It does not run the
// agent. Versions 1 and 2 have no such endpoint (ErrWrongVersion): they
// create a session with its first turn (PutSession).
func (c *Client) CreateSession(ctx context.Context, req *PostSessionsRequest) (*PostSessionsResponse, error) {
	if req == nil {
		return nil, &endpointError{endpoint: epCreateSession, err: errors.New("nil request")}
	}
	if v, old, err := c.legacy(ctx); err != nil {
		return nil, err
	} else if old {
		return nil, errVersion(epCreateSession, v, "PUT /session creates a session with its first turn (PutSession)")
	}
	var out PostSessionsResponse
	if err := c.call(ctx, http.MethodPost, epCreateSession, "/sessions", req, &out); err != nil {
		return nil, err
	}
	if out.SessionID == "" {
		return nil, &endpointError{endpoint: epCreateSession, what: "invalid response body", err: fieldErr("sessionId", "required")}
	}
	return &out, nil
}

// PutSession creates a session and runs its first turn, the last of
// req.Messages (a user message), waiting for the whole response: PUT
// /session of versions 1 and 2. It sends stream "none" whatever
// req.Stream says. Version 3 has no such endpoint (ErrWrongVersion).
func (c *Client) PutSession(ctx context.Context, req *PutSessionRequest) (*PutSessionResponse, error) {
	if err := c.checkPut(ctx, req); err != nil {
		return nil, err
	}
	r := *req
	r.Stream = StreamNone
	var out PutSessionResponse
	if err := c.call(ctx, http.MethodPut, epPutSession, "/session", &r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// StreamPutSession is PutSession streaming (req.Stream is StreamDelta or
// StreamMessage): it yields the events as StreamTurn does, the first being
// *SessionStart with the new session's id.
func (c *Client) StreamPutSession(ctx context.Context, req *PutSessionRequest) iter.Seq2[Event, error] {
	return c.streamEvents(ctx, epPutSession, func() (io.ReadCloser, error) { return c.OpenPutSession(ctx, req) })
}

// OpenPutSession starts PUT /session streaming and returns the response
// body once the server has accepted it, as OpenTurn does for a turn. The
// stream opens with session_start.
func (c *Client) OpenPutSession(ctx context.Context, req *PutSessionRequest) (io.ReadCloser, error) {
	if err := c.checkPut(ctx, req); err != nil {
		return nil, err
	}
	if err := checkStreaming(epPutSession, req.Stream); err != nil {
		return nil, err
	}
	return c.openStream(ctx, http.MethodPut, epPutSession, "/session", req)
}

// checkPut refuses a nil request, one whose messages do not end with a
// user message, and a version 3 server.
func (c *Client) checkPut(ctx context.Context, req *PutSessionRequest) error {
	if req == nil {
		return &endpointError{endpoint: epPutSession, err: errors.New("nil request")}
	}
	if err := CheckPutMessages(req.Messages); err != nil {
		return &endpointError{endpoint: epPutSession, err: err}
	}
	v, old, err := c.legacy(ctx)
	if err != nil {
		return err
	}
	if !old {
		return errVersion(epPutSession, v, "create the session with CreateSession, then send its first turn")
	}
	return nil
}

// GetSession returns the session. Secret options come back redacted.
func (c *Client) GetSession(ctx context.Context, id string) (*SessionInfo, error) {
	_, old, err := c.legacy(ctx)
	if err != nil {
		return nil, err
	}
	if old {
		path, err := sessionPath(epGetSessionV1, "/session/", id, "")
		if err != nil {
			return nil, err
		}
		var out SessionResponseV1
		if err := c.call(ctx, http.MethodGet, epGetSessionV1, path, nil, &out); err != nil {
			return nil, err
		}
		info := out.V3()
		return &info, nil
	}
	path, err := sessionPath(epGetSession, "/sessions/", id, "")
	if err != nil {
		return nil, err
	}
	var out SessionInfo
	if err := c.call(ctx, http.MethodGet, epGetSession, path, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteSession deletes the session and its history.
func (c *Client) DeleteSession(ctx context.Context, id string) error {
	_, old, err := c.legacy(ctx)
	if err != nil {
		return err
	}
	endpoint, prefix := epDeleteSession, "/sessions/"
	if old {
		endpoint, prefix = epDeleteSessionV1, "/session/"
	}
	path, err := sessionPath(endpoint, prefix, id, "")
	if err != nil {
		return err
	}
	return c.call(ctx, http.MethodDelete, endpoint, path, nil, nil)
}

// History returns the session's history of type t. A response without that
// history type is an error; an agent that does not serve the type answers
// 404 (see IsNotFound). Version 1 returns history inline in GET
// /session/:id?history=…, and leaves it out when the agent does not serve
// the type (ErrHistoryNotServed, which IsNotFound reports too).
func (c *Client) History(ctx context.Context, id string, t HistoryType) ([]Message, error) {
	v, old, err := c.legacy(ctx)
	if err != nil {
		return nil, err
	}
	endpoint, prefix, suffix, query := epHistory, "/sessions/", "/history", "?type="
	switch {
	case old && v == Version1:
		endpoint, prefix, suffix, query = epGetSessionV1, "/session/", "", "?history="
	case old:
		endpoint, prefix = epHistoryV2, "/session/"
	}
	if t != HistoryCompacted && t != HistoryFull {
		return nil, &endpointError{endpoint: endpoint, err: fmt.Errorf("unknown history type %q (want compacted or full)", t)}
	}
	path, err := sessionPath(endpoint, prefix, id, suffix)
	if err != nil {
		return nil, err
	}
	path += query + string(t)
	var hist *SessionHistory
	if old && v == Version1 {
		var out SessionResponseV1
		if err := c.call(ctx, http.MethodGet, endpoint, path, nil, &out); err != nil {
			return nil, err
		}
		if out.History == nil {
			return nil, &endpointError{endpoint: endpoint, err: ErrHistoryNotServed}
		}
		hist = out.History
	} else {
		var out GetSessionHistoryResponse
		if err := c.call(ctx, http.MethodGet, endpoint, path, nil, &out); err != nil {
			return nil, err
		}
		hist = &out.History
	}
	msgs := hist.Full
	if t == HistoryCompacted {
		msgs = hist.Compacted
	}
	if msgs == nil {
		if old && v == Version1 {
			return nil, &endpointError{endpoint: endpoint, err: ErrHistoryNotServed}
		}
		return nil, &endpointError{endpoint: endpoint, what: "invalid response body", err: fieldErr("history."+string(t), "required")}
	}
	return msgs, nil
}

// turnRoute is where a turn goes in the client's version: the endpoint's
// name, its path, and the body to send (tool specs in the version's shape).
func (c *Client) turnRoute(ctx context.Context, id string, req *PostSessionTurnRequest) (endpoint, path string, body any, err error) {
	_, old, err := c.legacy(ctx)
	if err != nil {
		return "", "", nil, err
	}
	endpoint, prefix, suffix := epTurn, "/sessions/", "/turns"
	body = req
	if old {
		endpoint, prefix, suffix, body = epTurnV1, "/session/", "", req.V1()
	}
	path, err = sessionPath(endpoint, prefix, id, suffix)
	return endpoint, path, body, err
}

// Turn sends a turn and waits for the whole response. It sends the request
// with stream "none" whatever req.Stream says (req is not modified).
func (c *Client) Turn(ctx context.Context, id string, req *PostSessionTurnRequest) (*PostSessionTurnResponse, error) {
	if req == nil {
		return nil, &endpointError{endpoint: epTurn, err: errors.New("nil request")}
	}
	r := *req
	r.Stream = StreamNone
	endpoint, path, body, err := c.turnRoute(ctx, id, &r)
	if err != nil {
		return nil, err
	}
	var out PostSessionTurnResponse
	if err := c.call(ctx, http.MethodPost, endpoint, path, body, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// StreamTurn sends a turn whose req.Stream is StreamDelta or StreamMessage
// and yields its events as they arrive, *UnknownEvent included.
//
// The sequence ends after turn_stop; otherwise its last value is an error:
// an error status (an *HTTPError, wrapped), a response that is not an event
// stream, an event that does not decode (a *DecodeError, wrapped), the
// context's error if ctx ends, or ErrStreamIncomplete (possibly wrapping
// the read error) if the stream ends before turn_stop. Breaking out of the
// loop closes the response.
//
// After yielding turn_stop, StreamTurn waits briefly for the server to end
// the response, discarding anything after it, so that the connection can be
// reused; break at turn_stop to close it at once.
func (c *Client) StreamTurn(ctx context.Context, id string, req *PostSessionTurnRequest) iter.Seq2[Event, error] {
	return c.streamEvents(ctx, epTurn, func() (io.ReadCloser, error) { return c.OpenTurn(ctx, id, req) })
}

// streamEvents reads the stream open returns, as StreamTurn describes.
func (c *Client) streamEvents(ctx context.Context, endpoint string, open func() (io.ReadCloser, error)) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		body, err := open()
		if err != nil {
			yield(nil, err)
			return
		}
		defer body.Close()
		resp := struct{ Body io.ReadCloser }{body}
		stopped := false
		for ev, err := range ReadEvents(resp.Body, c.maxEventSize) {
			if stopped {
				continue // draining: turn_stop is the last event
			}
			if err != nil {
				yield(nil, streamError(ctx, endpoint, err))
				return
			}
			if !yield(ev, nil) {
				return
			}
			if _, ok := ev.(*TurnStop); ok {
				stopped = true
				// A server that keeps the stream open after turn_stop must
				// not hold the caller: close the body after a grace period.
				t := time.AfterFunc(drainGrace, func() { resp.Body.Close() })
				defer t.Stop()
			}
		}
		if !stopped {
			if err := ctx.Err(); err != nil {
				yield(nil, err)
				return
			}
			yield(nil, ErrStreamIncomplete)
		}
	}
}

// OpenTurn starts a streaming turn (req.Stream must be delta or message)
// and returns the response body, an SSE stream to read with ReadEvents,
// once the server has accepted the turn: an error status comes back as an
// *HTTPError (wrapped) before anything is read. The caller must close the
// body. It is the lower-level half of StreamTurn, for callers (proxies)
// that wrap the body before reading it.
func (c *Client) OpenTurn(ctx context.Context, id string, req *PostSessionTurnRequest) (io.ReadCloser, error) {
	if req == nil {
		return nil, &endpointError{endpoint: epTurn, err: errors.New("nil request")}
	}
	if err := checkStreaming(epTurn, req.Stream); err != nil {
		return nil, err
	}
	endpoint, path, body, err := c.turnRoute(ctx, id, req)
	if err != nil {
		return nil, err
	}
	return c.openStream(ctx, http.MethodPost, endpoint, path, body)
}

// checkStreaming refuses a stream mode that does not stream.
func checkStreaming(endpoint string, m StreamMode) error {
	if m != StreamDelta && m != StreamMessage {
		return &endpointError{endpoint: endpoint, err: fmt.Errorf("a streaming turn needs stream %q or %q, not %q", StreamDelta, StreamMessage, m)}
	}
	return nil
}

// openStream sends a request answered with an event stream and returns
// the body once the server has accepted it.
func (c *Client) openStream(ctx context.Context, method, endpoint, path string, body any) (io.ReadCloser, error) {
	resp, err := c.do(ctx, method, endpoint, path, body, "text/event-stream")
	if err != nil {
		return nil, err
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		resp.Body.Close()
		return nil, &endpointError{endpoint: endpoint, err: fmt.Errorf("%w: Content-Type %q (want text/event-stream)", ErrNotEventStream, resp.Header.Get("Content-Type"))}
	}
	return resp.Body, nil
}

// drainGrace is how long StreamTurn waits for the end of the response after
// turn_stop.
const drainGrace = time.Second

// streamError turns an error of ReadEvents before turn_stop into the error
// StreamTurn yields.
func streamError(ctx context.Context, endpoint string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	var de *DecodeError
	if errors.As(err, &de) {
		return &endpointError{endpoint: endpoint, what: "bad event", err: err}
	}
	// A cut connection, an oversized event or a broken frame: the turn did
	// not complete.
	return &endpointError{endpoint: endpoint, err: fmt.Errorf("%w: %w", ErrStreamIncomplete, err)}
}

// sessionPath returns "<prefix><escaped id><suffix>", refusing ids that
// would address another endpoint ("" would be /sessions, ".." its parent).
func sessionPath(endpoint, prefix, id, suffix string) (string, error) {
	if id == "" || id == "." || id == ".." {
		return "", &endpointError{endpoint: endpoint, err: fmt.Errorf("invalid session id %q", id)}
	}
	return prefix + url.PathEscape(id) + suffix, nil
}

// call sends a request with an optional JSON body and decodes a successful
// response into out (nil: the body is discarded).
func (c *Client) call(ctx context.Context, method, endpoint, path string, body, out any) error {
	_, err := c.callHeader(ctx, method, endpoint, path, body, out)
	return err
}

// callHeader is call that also returns the response's header.
func (c *Client) callHeader(ctx context.Context, method, endpoint, path string, body, out any) (http.Header, error) {
	resp, err := c.do(ctx, method, endpoint, path, body, "application/json")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if out == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, int64(c.maxErrorBody)))
		return resp.Header, nil
	}
	data, err := readBody(resp)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, &endpointError{endpoint: endpoint, what: "reading response", err: ctxErr}
		}
		return nil, &endpointError{endpoint: endpoint, what: "reading response", err: err}
	}
	if err := decodeBody(data, out); err != nil {
		return nil, &endpointError{endpoint: endpoint, what: "invalid response body", err: err}
	}
	return resp.Header, nil
}

// presizeMax is the largest Content-Length readBody reads into a buffer
// of that size at once; a larger one (which a server may claim without
// sending it) is read as it comes.
const presizeMax = 64 << 20

// readBody reads a response's body: into one buffer of its size when the
// server said it (Content-Length, as JSON servers do), so that a long
// history is not read through a sequence of copies each a quarter larger
// (io.ReadAll's growth: five times the body in all).
func readBody(resp *http.Response) ([]byte, error) {
	n := resp.ContentLength
	if n <= 0 || n > presizeMax {
		return io.ReadAll(resp.Body)
	}
	data := make([]byte, n)
	if _, err := io.ReadFull(resp.Body, data); err != nil {
		return nil, err
	}
	return data, nil
}

// decodeBody decodes a response body through the types' own decoders,
// insisting on a JSON object (json.Unmarshal would take null for an empty
// response).
func decodeBody(data []byte, out any) error {
	if firstByte(data) != '{' {
		return &DecodeError{Reason: "must be a JSON object"}
	}
	// A history is decoded by its own UnmarshalJSON straight away, which
	// reads its compact form in one pass; json.Unmarshal would scan the
	// whole body once more before calling it.
	if h, ok := out.(*GetSessionHistoryResponse); ok && h.UnmarshalJSON(data) == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		var de *DecodeError
		if errors.As(err, &de) {
			return err
		}
		return jsonErr("", err)
	}
	return nil
}

// do sends a request and returns the response if its status is 2xx. Any
// other status is returned as an *HTTPError, with the body closed.
func (c *Client) do(ctx context.Context, method, endpoint, path string, body any, accept string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, nil)
	if err != nil {
		return nil, &endpointError{endpoint: endpoint, err: err}
	}
	if body != nil {
		data, err := jsonenc.Marshal(body)
		if err != nil {
			return nil, &endpointError{endpoint: endpoint, what: "encoding request", err: err}
		}
		// A streamed turn's request is kept by the transport while the
		// stream is read: its bytes go once the answer has begun (when
		// do returns).
		rb := reqbody.Set(req, data)
		defer rb.Release()
	}
	for k, vs := range c.header {
		req.Header[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
	}
	req.Header.Set("Accept", accept)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		// A refused redirect without the URL it pointed to in full; any other
		// error quotes the URL, which may hold a token in its query.
		return nil, &endpointError{endpoint: endpoint, err: redact.Error(redirect.Strip(err))}
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp, nil
	}
	defer resp.Body.Close()
	he := &HTTPError{StatusCode: resp.StatusCode}
	echoed, _ := io.ReadAll(io.LimitReader(resp.Body, int64(c.maxErrorBody)))
	he.Body = []byte(redact.Echoed(string(echoed), req.Header))
	var er ErrorResponse
	if json.Unmarshal(he.Body, &er) == nil {
		he.Code, he.Message = er.Error.Code, er.Error.Message
	}
	return nil, &endpointError{endpoint: endpoint, err: he}
}
