package web

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"
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

// ErrTurnTooLong is the cause of a turn's end when it ran past the
// longest a turn may take (the bridges' MaxTurnDuration).
var ErrTurnTooLong = errors.New("the turn ran past its longest allowed duration")

// ErrRunStopped is the cause of a turn's end when it was stopped on
// request (Serving.StopRun: a DELETE of its run, on any replica), not by
// a client that left: it ends as a cancelled turn does (upstream
// cancelled, what came stored, the lock released), and its stream, still
// read or followed, gets a last event that says it ended.
var ErrRunStopped = errors.New("the run was stopped on request")

// MessageTooLargeError reports a message from the agent that grew past
// the bridge's cap on one message.
type MessageTooLargeError struct{ Limit int }

func (e *MessageTooLargeError) Error() string {
	return "the agent's message grew past " + itoa(int64(e.Limit)) + " bytes"
}

// ErrClientStalled is the cause of a stream's end when a write to its
// client made no progress within the stall timeout: the client keeps its
// connection open but stopped reading.
var ErrClientStalled = errors.New("the client stopped reading (a write made no progress within the stall timeout)")

// ErrClientGone is the cause of a stream's end when a write to its client
// failed: the client went away.
var ErrClientGone = errors.New("the client went away")

// clientGone names the cause of a failed write to a client:
// ErrClientStalled for a write past its deadline, else ErrClientGone.
func clientGone(err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return ErrClientStalled
	}
	return ErrClientGone
}

// StreamFailure is the one place that names a failure of an upstream
// stream after it began: a stable code and a message for the client. The
// bridges send them in-band (agui2aap's RUN_ERROR) or log them (aap2agui,
// whose turn_stop carries no code).
func StreamFailure(err error) (code, message string) {
	var tooLarge *sse.EventTooLargeError
	var decode *aap.DecodeError
	switch {
	case errors.Is(err, ErrUpstreamIdle):
		return "upstream_idle_timeout", "the agent's stream sent no event within the idle timeout"
	case errors.Is(err, ErrTurnTooLong):
		return "turn_too_long", "the turn ran past its longest allowed duration"
	case errors.As(err, new(*MessageTooLargeError)):
		return "message_too_large", err.Error()
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

// IdleTimeout returns body with an idle timer: when no event arrives for
// d (within a quarter of it: the reader of the stream calls Touch for each
// event it reads) the request is cancelled through cancel, and the read
// that fails because of it returns ErrUpstreamIdle. Bytes alone do not
// count: an upstream that sends only SSE comments, or nothing whole, is
// idle. Zero or negative d: no timer. (Cancelling the request, not closing
// the body, is what unblocks a read in progress: net/http's Close waits
// for the read to return.)
func IdleTimeout(body io.ReadCloser, d time.Duration, cancel context.CancelCauseFunc) *IdleBody {
	b := &IdleBody{ReadCloser: body, d: d}
	if d <= 0 {
		return b
	}
	b.on = true
	b.mu.Lock()
	defer b.mu.Unlock()
	// A timer reset per event, or a clock read, would cost more than the
	// event: Touch only marks that an event came, and the timer looks
	// every quarter of d; four quarters without one are idle.
	quarters := 0
	b.timer = time.AfterFunc(d/4, func() {
		if b.seen.Swap(false) {
			quarters = 0
		} else if quarters++; quarters >= 4 {
			b.fired.Store(true)
			cancel(ErrUpstreamIdle)
			return
		}
		b.mu.Lock()
		b.timer.Reset(d / 4)
		b.mu.Unlock()
	})
	return b
}

// IdleBody is an upstream body with an idle timer (IdleTimeout).
type IdleBody struct {
	io.ReadCloser
	d     time.Duration
	on    bool        // a timer runs
	seen  atomic.Bool // an event came since the timer last looked
	mu    sync.Mutex  // guards timer
	timer *time.Timer
	fired atomic.Bool
	// release, when set (Dial), ends the call's context once the body is
	// closed.
	release context.CancelCauseFunc
}

// Touch tells the timer that an event arrived.
func (b *IdleBody) Touch() {
	if b.on && !b.seen.Load() {
		b.seen.Store(true)
	}
}

func (b *IdleBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF && b.fired.Load() {
		return n, ErrUpstreamIdle
	}
	return n, err
}

// Close stops the timer and closes the body, then ends the call's
// context when Dial made it.
func (b *IdleBody) Close() error {
	if b.on {
		b.mu.Lock()
		b.timer.Stop()
		b.mu.Unlock()
	}
	err := b.ReadCloser.Close()
	if b.release != nil {
		b.release(nil)
	}
	return err
}
