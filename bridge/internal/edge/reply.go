package edge

import "github.com/aapagui/aapagui/bridge/internal/fault"

import "github.com/gin-gonic/gin"

// Reply answers the request with f and aborts it. A server error (5xx)
// for a client that went away is answered 499 client_closed_request
// instead (see StatusClientClosedRequest).
func Reply(c *gin.Context, f *fault.Failure) {
	switch f.Kind {
	case fault.KindHeld:
		held(c, f.Code, f.Message, f.Retry)
	case fault.KindTooMany:
		tooMany(c, f.Code, f.Message, f.Retry)
	case fault.KindUnavailable:
		if f.Retry > 0 && !ClientLeft(c) {
			retryAfter(c, f.Retry)
		}
		writeError(c, f.Kind.Status(), f.Code, f.Message)
	default:
		writeError(c, f.Kind.Status(), f.Code, f.Message)
	}
}

// ReplyAs is Reply for a bridge that names itself realm: a 401 carries
// WWW-Authenticate: Bearer with it (RFC 6750), as both bridges answer.
func ReplyAs(c *gin.Context, f *fault.Failure, realm string) {
	if f.Kind == fault.KindUnauthorized {
		c.Header("WWW-Authenticate", `Bearer realm="`+realm+`"`)
	}
	Reply(c, f)
}
