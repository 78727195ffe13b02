package agui2aap

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/internal/edge"
	"github.com/aapagui/aapagui/bridge/internal/fault"
	"github.com/aapagui/aapagui/bridge/internal/upstream"
	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/translate"
)

// Handlers return errors; two functions here turn them into what the
// client sees. fail answers a request that failed before its stream
// began (a JSON error with its status, through failure); inBand names a
// run's failure once its stream has begun, or a run the AG-UI interrupt
// rules refuse (a RUN_ERROR's message and code).

// storeError is a failed thread-store operation: logged (op names it),
// and answered 500 store_error.
type storeError struct {
	op  string // "lock thread", "get thread", …
	err error
}

func (e *storeError) Error() string { return "store: " + e.op + ": " + e.err.Error() }
func (e *storeError) Unwrap() error { return e.err }

// errStore is what a client is told of a failed store operation.
var errStore = fault.Fail(fault.KindInternal, "store_error", "the thread store failed")

// upstreamError is a failed call to the AAP server before the run's
// stream began: logged, and answered as upstreamFailure names it.
type upstreamError struct{ err error }

func (e *upstreamError) Error() string { return e.err.Error() }
func (e *upstreamError) Unwrap() error { return e.err }

// badInput is a RunAgentInput the bridge cannot run: 400 invalid_input.
func badInput(format string, args ...any) *fault.Failure {
	return fault.Fail(fault.KindInvalid, "invalid_input", fmt.Sprintf(format, args...))
}

// errTooManyFollowUps ends a run whose permission policy kept answering
// tool calls (Config.MaxFollowUps).
var errTooManyFollowUps = errors.New("the permission policy answered too many tool calls in one run")

// followUpError is a follow-up turn the AAP server refused.
type followUpError struct{ err error }

func (e *followUpError) Error() string { return "follow-up turn refused: " + e.err.Error() }
func (e *followUpError) Unwrap() error { return e.err }

// errRunNotStored ends a run whose thread could not be saved: it does
// not finish.
var errRunNotStored = errors.New("the run could not be stored")

// fail answers a request that failed before its stream began: the one
// place agui2aap turns an error into a status, a code and a message
// (failure), and adds its WWW-Authenticate to an unauthorized caller.
func (s *Server) fail(c *gin.Context, err error) {
	edge.ReplyAs(c, s.failure(c, err), "agui2aap")
}

// failure maps err to what the client is told, logging what the server
// should know of: a failed store operation (at error level) and a failed
// upstream call (a warning). A failure that only a client that went away
// saw is logged at debug level, and answered 499 (edge.Reply).
func (s *Server) failure(c *gin.Context, err error) *fault.Failure {
	var f *fault.Failure
	var se *storeError
	var ue *upstreamError
	var ie *translate.InputError
	switch {
	case errors.As(err, &f):
		return f
	case errors.As(err, &ie):
		return badInput("%s", ie.Message)
	case fault.StoreCause(err) != nil:
		// A call cut short by a lost lease is neither the store's
		// failure nor the upstream's.
		return fault.StoreCause(err)
	case errors.As(err, &se):
		edge.FailureLog(c, edge.Logger(c)).Err(se.err).Msg("store: " + se.op)
		return errStore
	case errors.As(err, &ue):
		if edge.ClientLeft(c) {
			edge.Logger(c).Debug().Err(ue.err).Bool("client_left", true).Msg("upstream call ended: the client went away")
		} else {
			edge.Logger(c).Warn().Err(ue.err).Msg("upstream call failed")
		}
		return s.cfg.upstreamFailure(ue.err)
	default:
		edge.FailureLog(c, edge.Logger(c)).Err(err).Msg("request failed")
		return fault.Fail(fault.KindInternal, "internal", "internal error")
	}
}

// upstreamFailure names a failed upstream call: its kind, the stable
// code the client gets (also the call's result in the metrics) and the
// message.
func (cfg *Config) upstreamFailure(err error) *fault.Failure {
	var he *aap.HTTPError
	switch {
	case errors.As(err, &he) && cfg.ForwardAuth && (he.StatusCode == http.StatusUnauthorized || he.StatusCode == http.StatusForbidden):
		// The caller's own key was refused: tell the caller, with the
		// AAP server's own status.
		kind := fault.KindUnauthorized
		if he.StatusCode == http.StatusForbidden {
			kind = fault.KindForbidden
		}
		return fault.Fail(kind, "unauthorized", "the AAP server refused the API key")
	case errors.As(err, &he) && (he.StatusCode == http.StatusUnauthorized || he.StatusCode == http.StatusForbidden):
		return fault.Fail(fault.KindUpstream, "upstream_unauthorized", "the AAP server refused the bridge's credentials")
	case errors.As(err, &he):
		return fault.Fail(fault.KindUpstream, "upstream_error", "the AAP server answered HTTP "+http.StatusText(he.StatusCode))
	case errors.Is(err, aap.ErrUnsupportedVersion):
		return fault.Fail(fault.KindUpstream, "upstream_unsupported_version", "the AAP server speaks a protocol version agui2aap does not")
	case errors.Is(err, aap.ErrNotEventStream):
		return fault.Fail(fault.KindUpstream, "upstream_not_sse", "the AAP server did not answer with an event stream")
	}
	return upstream.Failure(err, "the AAP server", cfg.HeaderTimeout)
}

// inBand is the one map of a run's failures once its stream has begun,
// and of the interrupt rules' refusals, to the message and code of the
// RUN_ERROR that ends the run (the order translate's Fail takes them in).
// A failure of the upstream's stream is named by fault.StreamFailure, its
// code in upper case as AG-UI's codes are.
func inBand(err error) (message, code string) {
	var ref *translate.Refusal
	var fu *followUpError
	switch {
	case errors.As(err, &ref):
		return ref.Message, ref.Code
	case errors.Is(err, errTooManyFollowUps):
		return "the permission policy answered too many tool calls in one run", CodeTooManyFollowUps
	case errors.As(err, &fu):
		return "the AAP server refused a follow-up turn", CodeUpstreamError
	case errors.Is(err, store.ErrLeaseLost):
		return "the run's lock on the thread could not be kept.", "LEASE_LOST"
	case errors.Is(err, errRunNotStored):
		return "the run could not be stored; send it again", CodeStoreError
	}
	code, msg := fault.StreamFailure(err)
	return msg + ".", strings.ToUpper(code)
}
