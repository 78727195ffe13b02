package fault

import (
	"errors"
	"io"
	"os"

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

// WriteFailure names the cause of a failed write to a client:
// ErrClientStalled for a write past its deadline, else ErrClientGone.
func WriteFailure(err error) error {
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
