package edge

import (
	"context"
	"errors"

	"github.com/gin-gonic/gin"
	"github.com/rs/zerolog"

	"github.com/aapagui/aapagui/bridge/internal/fault"
)

// StatusClientClosedRequest is the status recorded for a request whose
// client went away before it was answered: nginx's 499 "client closed
// request". It is no server error: the request log shows it at info
// level, and the request metrics count it under its own status, never as
// a 5xx.
const StatusClientClosedRequest = 499

// ClientLeft reports whether the request's client went away: net/http cancelled
// the request's context (its cause is context.Canceled), or a write to the
// client failed (ErrClientGone, ErrClientStalled). What the request had
// started then fails with the cancellation, through no fault of the
// server or of what it calls.
func ClientLeft(c *gin.Context) bool { return ClientGone(c.Request.Context()) }

// ClientGone is ClientLeft for the context of a request (or of a turn derived from
// it, which ends with the same causes).
func ClientGone(ctx context.Context) bool {
	cause := context.Cause(ctx)
	return cause == context.Canceled || errors.Is(cause, fault.ErrClientGone) || errors.Is(cause, fault.ErrClientStalled)
}

// FailureLog is the log event for an operation of a request that failed:
// at error level, or at debug level when its client went away (ClientLeft), so
// that a client that leaves never raises an error-level line.
func FailureLog(c *gin.Context, log *zerolog.Logger) *zerolog.Event {
	if ClientLeft(c) {
		return log.Debug().Bool("client_left", true)
	}
	return log.Error()
}

// clientClosed is what writeError answers instead of a server error when the
// client went away: nobody reads it, but the status is what the request
// log and metrics record.
func clientClosed(status int, code, message string, c *gin.Context) (int, string, string) {
	if status >= 500 && ClientLeft(c) {
		return StatusClientClosedRequest, "client_closed_request", "the client closed the request before it was answered"
	}
	return status, code, message
}
