package aap2agui

import (
	"errors"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/internal/fault"
	"github.com/aapagui/aapagui/store"
)

// Handlers return errors, which become what the client sees in one of two
// places: before a request's answer began, Server.fail answers it (a JSON
// error with its status, through Server.failure, server.go); once a
// turn's answer has begun, what cut its stream short is named by
// turns.Turn.Cut (fault.StreamFailure) and the turn ends in-band, with
// an error stop (turnRun.ended, turnRun.acknowledge). Here are the errors
// of this package's own.
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
