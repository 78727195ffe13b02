package web

import (
	"context"
	"errors"
	"io"
	"sync/atomic"
	"time"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/internal/sse"
)

// ErrUpstreamIdle reports an upstream stream that sent nothing for longer
// than the idle timeout.
var ErrUpstreamIdle = errors.New("the upstream stream sent nothing within the idle timeout")

// AgentError is the upstream result (metrics, the turn's log line) of a
// turn the agent itself ended with an error (RUN_ERROR, turn_stop error):
// the call worked, the agent failed.
const AgentError = "agent_error"

// ErrBadEvent wraps an upstream event that could not be decoded.
var ErrBadEvent = errors.New("malformed upstream event")

// StreamFailure is the one place that names a failure of an upstream
// stream after it began: a stable code and a message for the client. The
// bridges send them in-band (agui2aap's RUN_ERROR) or log them (aap2agui,
// whose turn_stop carries no code).
func StreamFailure(err error) (code, message string) {
	var tooLarge *sse.EventTooLargeError
	var decode *aap.DecodeError
	switch {
	case errors.Is(err, ErrUpstreamIdle):
		return "upstream_idle_timeout", "the agent's stream sent nothing within the idle timeout"
	case errors.As(err, &tooLarge):
		return "upstream_event_too_large", "the agent sent an event larger than " + itoa(int64(tooLarge.Limit)) + " bytes"
	case errors.Is(err, ErrBadEvent), errors.As(err, &decode):
		return "upstream_bad_event", "the agent sent an event that could not be read"
	case errors.Is(err, sse.ErrIncompleteEvent), errors.Is(err, io.ErrUnexpectedEOF):
		return "upstream_cut", "the agent's connection was cut in the middle of the stream"
	case err == nil:
		return "upstream_incomplete", "the agent's stream ended before the turn was complete"
	default:
		return "upstream_read_error", "the agent's stream failed while it was being read"
	}
}

// IdleTimeout returns body with an idle timer: when no byte arrives for d
// the request is cancelled through cancel, and the read that fails
// because of it returns ErrUpstreamIdle. Zero or negative d: no timer.
// (Cancelling the request, not closing the body, is what unblocks a read
// in progress: net/http's Close waits for the read to return.)
func IdleTimeout(body io.ReadCloser, d time.Duration, cancel context.CancelCauseFunc) io.ReadCloser {
	if d <= 0 {
		return body
	}
	b := &idleBody{ReadCloser: body, d: d}
	b.timer = time.AfterFunc(d, func() {
		b.fired.Store(true)
		cancel(ErrUpstreamIdle)
	})
	return b
}

type idleBody struct {
	io.ReadCloser
	d     time.Duration
	timer *time.Timer
	fired atomic.Bool
}

func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF && b.fired.Load() {
		return n, ErrUpstreamIdle
	}
	if n > 0 {
		b.timer.Reset(b.d)
	}
	return n, err
}

func (b *idleBody) Close() error {
	b.timer.Stop()
	return b.ReadCloser.Close()
}
