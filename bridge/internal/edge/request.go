package edge

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/trace"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/internal/fault"
	"github.com/aapagui/aapagui/internal/jsonenc"
)

// writeError writes a JSON error body {"error":{"code","message"}} and
// aborts (Reply).
//
// A server error (5xx) for a client that went away is answered 499
// client_closed_request instead (see StatusClientClosedRequest).
func writeError(c *gin.Context, status int, code, message string) {
	c.Abort()
	status, code, message = clientClosed(status, code, message, c)
	aap.WriteError(c.Writer, status, code, message)
}

// held answers 409 to a request whose session or thread is locked by a
// running turn (Locked): Retry-After gives the whole seconds (rounded up)
// until the holder's lease runs out unless renewed, and the body says the
// same in milliseconds (leaseRemainingMs) beside the usual code and
// message.
func held(c *gin.Context, code, message string, left time.Duration) {
	c.Abort()
	retryAfter(c, left)
	c.Header("Content-Type", "application/json")
	c.Status(http.StatusConflict)
	_ = jsonenc.Encode(c.Writer, heldResponse{Error: heldBody{Code: code, Message: message, LeaseRemainingMs: max(1, left.Milliseconds())}})
}

// tooMany answers 429 to a request over one of its key's limits
// (Throttled): Retry-After gives the whole seconds after which a retry may
// pass, and the body is the usual error naming the limit.
func tooMany(c *gin.Context, code, message string, retry time.Duration) {
	c.Abort()
	retryAfter(c, retry)
	aap.WriteError(c.Writer, http.StatusTooManyRequests, code, message)
}

// retryAfter sets Retry-After to d in whole seconds, rounded up, at least 1.
func retryAfter(c *gin.Context, d time.Duration) {
	c.Header("Retry-After", strconv.FormatInt(max(1, int64((d+time.Second-1)/time.Second)), 10))
}

type heldResponse struct {
	Error heldBody `json:"error"`
}

type heldBody struct {
	Code             string `json:"code"`
	Message          string `json:"message"`
	LeaseRemainingMs int64  `json:"leaseRemainingMs"`
}

// LeaseLog returns a Lease's OnError that logs to log: a failed renewal or
// release attempt at warning level (both are retried), a lost lease as an
// error.
func LeaseLog(log *zerolog.Logger, what, id string) func(op string, err error) {
	return func(op string, err error) {
		ev := log.Warn()
		if op == "lost" {
			ev = log.Error()
		}
		ev.Err(err).Str(what, id).Str("op", op).Msg("turn lock")
	}
}

// JSON writes v as the response body without HTML escaping (which would
// rewrite raw JSON such as tool input and schemas).
func JSON(c *gin.Context, status int, v any) { WriteJSON(c.Writer, status, v) }

// WriteJSON writes v as the JSON body of a response with status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = jsonenc.Encode(w, v)
}

// Logger returns the request's logger.
func Logger(c *gin.Context) *zerolog.Logger { return LoggerOf(c.Writer) }

// LoggerOf returns the logger of the request w answers (RequestLog's), or
// one that logs nothing.
func LoggerOf(w http.ResponseWriter) *zerolog.Logger {
	if sw, ok := w.(*servedWriter); ok {
		return &sw.log
	}
	l := zerolog.Nop()
	return &l
}

// Start is when the request arrived (RequestLog saw it; now if it did
// not).
func Start(c *gin.Context) time.Time { return StartOf(c.Writer) }

// StartOf is when the request w answers arrived (RequestLog saw it; now
// if it did not).
func StartOf(w http.ResponseWriter) time.Time {
	if sw, ok := w.(*servedWriter); ok {
		return sw.start
	}
	return time.Now()
}

// servedWriter is the response writer of a request RequestLog serves,
// holding what the bridge keeps of the request while it is served: its
// logger, its owner (SetOwner) and when it arrived. They ride on the
// writer rather than in gin's Keys, a map that a request would hold for
// as long as its stream is open (some 300 bytes).
type servedWriter struct {
	gin.ResponseWriter
	log   zerolog.Logger
	owner string
	start time.Time
}

// Unwrap gives http.ResponseController the writer underneath.
func (w *servedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// served is c's servedWriter, or nil when RequestLog does not serve it.
func served(c *gin.Context) *servedWriter {
	w, _ := c.Writer.(*servedWriter)
	return w
}

// RequestLog attaches a request-scoped logger (with a request id, and the
// trace id when the request is traced) and logs one line per request when
// it ends: method, route, status, duration. It never logs headers, so
// credentials cannot leak into logs.
func RequestLog(base zerolog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		w := &servedWriter{ResponseWriter: c.Writer, start: time.Now()}
		w.log = requestLogger(c, &base)
		c.Writer = w
		c.Next() // (what the route does runs below this frame: keep it small)
		logRequest(c, &w.log, w.start)
	}
}

// requestLogger gives the request its id and its logger.
func requestLogger(c *gin.Context, base *zerolog.Logger) zerolog.Logger {
	id := c.GetHeader("X-Request-Id")
	if id == "" || len(id) > 64 {
		id = newRequestID()
	}
	c.Header("X-Request-Id", id)
	f := requestFields{id: id}
	if sc := trace.SpanContextFromContext(c.Request.Context()); sc.IsValid() {
		f.trace = sc.TraceID().String()
	}
	// A hook, not a logger With the fields: With gives each logger a
	// 500-byte buffer, which a streaming request would hold for as long
	// as it is open.
	return base.Hook(f)
}

// requestFields are what every line a request's logger writes carries:
// its request id, and its trace id when it is traced.
type requestFields struct{ id, trace string }

func (f requestFields) Run(e *zerolog.Event, _ zerolog.Level, _ string) {
	e.Str("request_id", f.id)
	if f.trace != "" {
		e.Str("trace_id", f.trace)
	}
}

// logRequest writes the request's line once it is answered.
func logRequest(c *gin.Context, l *zerolog.Logger, start time.Time) {
	route := c.FullPath()
	if route == "" {
		route = "(no route)"
	}
	ev := l.Info()
	if c.Writer.Status() >= 500 {
		ev = l.Warn()
	}
	ev.Str("method", c.Request.Method).Str("route", route).Int("status", c.Writer.Status()).
		Dur("duration", time.Since(start)).Msg("request")
}

// BodyLimit caps request bodies; reading past the limit fails with
// *http.MaxBytesError, which handlers answer with 413.
func BodyLimit(limit int64) gin.HandlerFunc {
	return func(c *gin.Context) {
		if c.Request.Body != nil && limit > 0 {
			c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, limit)
		}
		c.Next()
	}
}

// ReadBody reads a request's body whole. A body that says its length
// (Content-Length) is read into one buffer of that size exactly, up to
// bodySizeHint: a 2 MB RunAgentInput read by doubling a buffer allocates
// about twice its size, and what is decoded from the body may keep it for
// as long as the run streams (agui.DecodeRunAgentInput). An error is
// BodyFailure's, or a 400 for a body nested deeper than MaxDepth. A body
// read whole is let go (r.Body is http.NoBody
// after it): its readers (BodyLimit's, the body timeout's) are not held
// while a turn streams. (The server drains and closes the body it made
// itself.)
func ReadBody(r *http.Request) ([]byte, error) {
	n := r.ContentLength
	if n > 0 && n <= bodySizeHint {
		buf := make([]byte, n)
		if _, err := io.ReadFull(r.Body, buf); err != nil {
			return nil, fault.BodyFailure(err)
		}
		r.Body = http.NoBody
		return depthChecked(buf)
	}
	buf := bytes.NewBuffer(make([]byte, 0, bytes.MinRead))
	if _, err := buf.ReadFrom(r.Body); err != nil {
		return nil, fault.BodyFailure(err)
	}
	r.Body = http.NoBody
	return depthChecked(buf.Bytes())
}

// depthChecked is body, or checkDepth's refusal of it.
func depthChecked(body []byte) ([]byte, error) {
	if err := checkDepth(body); err != nil {
		return nil, err
	}
	return body, nil
}

// bodySizeHint bounds the buffer a body's Content-Length alone makes
// ReadBody allocate before anything arrived (BodyLimit's limit still
// bounds what is read).
const bodySizeHint = 16 << 20

// ReadError answers an error reading a request body (BodyFailure): 413
// for an oversized body, 408 for one that did not arrive in time, 400
// otherwise.
func ReadError(c *gin.Context, err error) { Reply(c, fault.BodyFailure(err)) }
