package fault

import (
	"errors"
	"net/http"
	"os"
	"time"
)

// Kind is the class of a request's failure before its stream starts, as
// grpc-gateway's codes are: the kind alone picks the HTTP status (see
// Kind.Status, the one map from kinds to statuses), so that a bridge's
// error map names a kind and a stable code, never a status.
type Kind uint8

// The kinds of Failure. The zero Kind is not one: Reply answers it as
// KindInternal.
const (
	// KindInvalid (400): the request cannot be served as it is (a body
	// that is not what the route takes, an input the bridge cannot
	// translate, a bad query or path value).
	KindInvalid Kind = iota + 1
	// KindUnauthorized (401): no valid API key. The bridge adds its own
	// WWW-Authenticate header.
	KindUnauthorized
	// KindForbidden (403): the caller may not do this: a browser origin
	// or a Host the bridge does not serve, or a forwarded key the upstream
	// refused with 403.
	KindForbidden
	// KindNotFound (404): no such route, agent, thread or session.
	KindNotFound
	// KindMethodNotAllowed (405): the route exists, not with this method.
	KindMethodNotAllowed
	// KindBodyTimeout (408): the request body did not arrive in time.
	KindBodyTimeout
	// KindHeld (409): the session or thread is locked by a running turn.
	// Failure.Retry is the time left on the holder's lease: it goes in
	// Retry-After and, in milliseconds, in the body (leaseRemainingMs).
	KindHeld
	// KindTooLarge (413): the request body is over the limit.
	KindTooLarge
	// KindUnsupportedMediaType (415): a body that is not declared JSON.
	KindUnsupportedMediaType
	// KindTooMany (429): the key is over one of its limits; Failure.Retry
	// goes in Retry-After.
	KindTooMany
	// KindInternal (500): the bridge's own failure (its store, a panic).
	KindInternal
	// KindUpstream (502): the upstream failed, refused the bridge's
	// credentials, or answered what the bridge cannot use. The upstream's
	// own status is never passed on: a 404 or 400 of the upstream is the
	// bridge's fault (or the upstream's), not the caller's.
	KindUpstream
	// KindUnavailable (503): not ready (readiness probes), or the store
	// too busy to take a start within its bound (StoreCause); a
	// Failure.Retry goes in Retry-After.
	KindUnavailable
	// KindUpstreamTimeout (504): the upstream did not answer in time.
	KindUpstreamTimeout
)

// Status is the HTTP status of a failure of kind k; the zero Kind (or an
// unknown one) is a server error.
func (k Kind) Status() int {
	switch k {
	case KindInvalid:
		return http.StatusBadRequest
	case KindUnauthorized:
		return http.StatusUnauthorized
	case KindForbidden:
		return http.StatusForbidden
	case KindNotFound:
		return http.StatusNotFound
	case KindMethodNotAllowed:
		return http.StatusMethodNotAllowed
	case KindBodyTimeout:
		return http.StatusRequestTimeout
	case KindHeld:
		return http.StatusConflict
	case KindTooLarge:
		return http.StatusRequestEntityTooLarge
	case KindUnsupportedMediaType:
		return http.StatusUnsupportedMediaType
	case KindTooMany:
		return http.StatusTooManyRequests
	case KindUpstream:
		return http.StatusBadGateway
	case KindUnavailable:
		return http.StatusServiceUnavailable
	case KindUpstreamTimeout:
		return http.StatusGatewayTimeout
	default:
		return http.StatusInternalServerError
	}
}

// Failure is the shared error kind of both bridges: a request's failure
// as its client is told before any stream begins. Kind picks the status;
// Code (stable, snake_case) and Message go in the JSON error body
// {"error":{"code","message"}}; Retry, for KindHeld, KindTooMany and
// KindUnavailable, is how long until a retry may pass (Retry-After, in
// whole seconds rounded up, at least 1).
//
// A bridge's handlers return errors; its one error map turns each into a
// Failure (a Failure given to it is already one) and answers with Reply.
// Once a stream has started, failures go in-band instead (StreamFailure).
type Failure struct {
	Kind    Kind
	Code    string
	Message string
	Retry   time.Duration
}

// Error is the code and the message.
func (f *Failure) Error() string { return f.Code + ": " + f.Message }

// Fail returns the Failure of kind with code and message.
func Fail(kind Kind, code, message string) *Failure {
	return &Failure{Kind: kind, Code: code, Message: message}
}

// Locked is the Failure of a request whose session or thread is locked by
// a running turn (store.HeldError): 409 with code and message, and
// left, the time left on the holder's lease, in Retry-After and in the
// body. A client that retries then is either let in or told again; a
// holder that died is taken over at the latest then.
func Locked(code, message string, left time.Duration) *Failure {
	return &Failure{Kind: KindHeld, Code: code, Message: message, Retry: left}
}

// Throttled is the Failure of a request over one of its key's limits: 429
// with code and message (naming the limit), and retry, after which a retry
// may pass, in Retry-After.
func Throttled(code, message string, retry time.Duration) *Failure {
	return &Failure{Kind: KindTooMany, Code: code, Message: message, Retry: retry}
}

// BodyFailure names an error reading a request body: KindTooLarge for a
// body over the limit (*http.MaxBytesError), KindBodyTimeout for one that
// did not arrive in time (BodyTimeout), KindInvalid otherwise.
func BodyFailure(err error) *Failure {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return Fail(KindTooLarge, "body_too_large", "the request body is larger than the limit of "+itoa(mbe.Limit)+" bytes")
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return Fail(KindBodyTimeout, "body_timeout", "the request body did not arrive in time")
	}
	return Fail(KindInvalid, "invalid_body", "could not read the request body: "+err.Error())
}
