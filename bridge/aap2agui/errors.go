package aap2agui

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/internal/edge"
	"github.com/aapagui/aapagui/bridge/internal/fault"
	"github.com/aapagui/aapagui/store"
)

// Handlers return errors; two functions here turn them into what the
// client sees. fail answers a request that failed before its answer
// began (a JSON error with its status, through failure); streamFailure
// names what cut a turn's stream short once its answer has begun, which
// then ends in-band, with an error stop (turnRun.conclude).
//
// The errors handlers return are of these kinds:
//
//   - *fault.Failure, a refusal already named: an invalid request (400), an
//     unknown agent or history type (404), a key over a limit (429), …;
//   - *upstreamError, the agent could not be called (502, 504; upstream.go);
//   - a start the store could not take in time, or a lock it could not
//     keep (fault.StoreCause: 503 store_busy, 503 lease_lost), whatever call
//     it cut short;
//   - the store's: *store.HeldError (409 turn_in_progress),
//     store.ErrNotFound (404 session_not_found), store.ErrLimit (429
//     too_many_sessions);
//   - anything else, a failure of the session store (500 store_error), the
//     one thing besides the agent a request calls before its answer.

// invalid is a request the bridge cannot serve as it is: 400 with code.
func invalid(code, message string) *fault.Failure {
	return fault.Fail(fault.KindInvalid, code, message)
}

// errUnauthorized is a request without a valid API key.
var errUnauthorized = fault.Fail(fault.KindUnauthorized, "unauthorized", "a valid API key is required: Authorization: Bearer <key>")

// namedStop names, in the turn_stop of an error stop (aap.TurnStop.Error),
// an end the client can act on: a lock another holder took (lease_lost:
// the turn stopped rather than run beside the one that took it). nil for
// any other err.
func namedStop(err error) *aap.TurnError {
	if errors.Is(err, store.ErrLeaseLost) {
		return &aap.TurnError{Code: "lease_lost", Message: "the turn's lock on the session was taken by another holder: the turn stopped"}
	}
	return nil
}

// errStore is what a client is told of a failed store operation.
var errStore = fault.Fail(fault.KindInternal, "store_error", "the session store failed")

// handle adapts a handler that returns its error to gin: the error is
// answered by fail.
func (s *Server) handle(h func(c *gin.Context) error) gin.HandlerFunc {
	return func(c *gin.Context) {
		if err := h(c); err != nil {
			s.fail(c, err)
		}
	}
}

// fail answers a request that failed before its answer began: the one
// place aap2agui turns an error into a status, a code and a message
// (failure), and adds its WWW-Authenticate to an unauthorized caller.
func (s *Server) fail(c *gin.Context, err error) {
	edge.ReplyAs(c, s.failure(c, err), "aap")
}

// failure maps err to what the client is told, logging a failed store
// operation (at error level, or at debug level when only a client that
// went away saw it, which edge.Reply answers 499). A failed upstream call
// was logged where it failed, with its session.
func (s *Server) failure(c *gin.Context, err error) *fault.Failure {
	var f *fault.Failure
	var ue *upstreamError
	var held *store.HeldError
	switch {
	case errors.As(err, &f):
		return f
	case fault.StoreCause(err) != nil:
		// Before the upstream's error: a call cut short by a lost lease
		// is not the upstream's failure.
		return fault.StoreCause(err)
	case errors.As(err, &ue):
		return fault.Fail(ue.kind, ue.code, ue.message)
	case errors.As(err, &held):
		return fault.Locked("turn_in_progress", fmt.Sprintf("a turn is already running in this session; wait for it to finish (its lock runs out in %.1f s unless the turn is still alive)", held.Left.Seconds()), held.Left)
	case errors.Is(err, store.ErrLimit):
		return fault.Throttled("too_many_sessions", fmt.Sprintf("this key holds %d sessions, its limit; delete one to create another", s.cfg.Limits.SessionsPerKey), sessionRetry)
	case errors.Is(err, store.ErrNotFound):
		msg := "no session with id " + strconv.Quote(c.Param("id"))
		if c.Param("id") == "" {
			// PUT /session (versions 1 and 2), whose path holds no id:
			// the session it made was deleted while the turn started.
			// An empty id in a path is refused before (checkSessionID).
			msg = "the session no longer exists"
		}
		return fault.Fail(fault.KindNotFound, "session_not_found", msg)
	}
	edge.FailureLog(c, edge.Logger(c)).Err(err).Msg("store")
	return errStore
}
