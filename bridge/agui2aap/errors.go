package agui2aap

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/internal/web"
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
var errStore = web.Fail(web.KindInternal, "store_error", "the thread store failed")

// upstreamError is a failed call to the AAP server before the run's
// stream began: logged, and answered as upstreamFailure names it.
type upstreamError struct{ err error }

func (e *upstreamError) Error() string { return e.err.Error() }
func (e *upstreamError) Unwrap() error { return e.err }

// badInput is a RunAgentInput the bridge cannot run: 400 invalid_input.
func badInput(format string, args ...any) *web.Failure {
	return web.Fail(web.KindInvalid, "invalid_input", fmt.Sprintf(format, args...))
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
	web.ReplyAs(c, s.failure(c, err), "agui2aap")
}

// failure maps err to what the client is told, logging what the server
// should know of: a failed store operation (at error level) and a failed
// upstream call (a warning). A failure that only a client that went away
// saw is logged at debug level, and answered 499 (web.Reply).
func (s *Server) failure(c *gin.Context, err error) *web.Failure {
	var f *web.Failure
	var se *storeError
	var ue *upstreamError
	var ie *translate.InputError
	switch {
	case errors.As(err, &f):
		return f
	case errors.As(err, &ie):
		return badInput("%s", ie.Message)
	case web.StoreCause(err) != nil:
		// A call cut short by a lost lease is neither the store's
		// failure nor the upstream's.
		return web.StoreCause(err)
	case errors.As(err, &se):
		web.FailureLog(c, web.Logger(c)).Err(se.err).Msg("store: " + se.op)
		return errStore
	case errors.As(err, &ue):
		if web.Left(c) {
			web.Logger(c).Debug().Err(ue.err).Bool("client_left", true).Msg("upstream call ended: the client went away")
		} else {
			web.Logger(c).Warn().Err(ue.err).Msg("upstream call failed")
		}
		return s.upstreamFailure(ue.err)
	default:
		web.FailureLog(c, web.Logger(c)).Err(err).Msg("request failed")
		return web.Fail(web.KindInternal, "internal", "internal error")
	}
}

// upstreamFailure names a failed upstream call: its kind, the stable
// code the client gets (also the call's result in the metrics) and the
// message.
func (s *Server) upstreamFailure(err error) *web.Failure {
	var he *aap.HTTPError
	switch {
	case errors.As(err, &he) && s.cfg.ForwardAuth && (he.StatusCode == http.StatusUnauthorized || he.StatusCode == http.StatusForbidden):
		// The caller's own key was refused: tell the caller, with the
		// AAP server's own status.
		kind := web.KindUnauthorized
		if he.StatusCode == http.StatusForbidden {
			kind = web.KindForbidden
		}
		return web.Fail(kind, "unauthorized", "the AAP server refused the API key")
	case errors.As(err, &he) && (he.StatusCode == http.StatusUnauthorized || he.StatusCode == http.StatusForbidden):
		return web.Fail(web.KindUpstream, "upstream_unauthorized", "the AAP server refused the bridge's credentials")
	case errors.As(err, &he):
		return web.Fail(web.KindUpstream, "upstream_error", "the AAP server answered HTTP "+http.StatusText(he.StatusCode))
	case errors.Is(err, aap.ErrUnsupportedVersion):
		return web.Fail(web.KindUpstream, "upstream_unsupported_version", "the AAP server speaks a protocol version agui2aap does not")
	case errors.Is(err, aap.ErrNotEventStream):
		return web.Fail(web.KindUpstream, "upstream_not_sse", "the AAP server did not answer with an event stream")
	}
	return web.UpstreamFailure(err, "the AAP server", s.cfg.ConnectTimeout)
}

// inBand is the one map of a run's failures once its stream has begun,
// and of the interrupt rules' refusals, to the message and code of the
// RUN_ERROR that ends the run (the order translate's Fail takes them in).
// A failure of the upstream's stream is named by web.StreamFailure, its
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
	code, msg := web.StreamFailure(err)
	return msg + ".", strings.ToUpper(code)
}
