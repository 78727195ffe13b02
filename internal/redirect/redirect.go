package redirect

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/aapagui/aapagui/internal/redact"
)

// Error is a redirect a client did not follow: the upstream's status and
// where it pointed.
type Error struct {
	// StatusCode is the redirect's status (301, 302, 303, 307, 308).
	StatusCode int
	// Location is the URL the redirect pointed to, resolved against the
	// request's, as redact.Location shows it: without its user
	// information, query, fragment or path parameters (which may hold
	// credentials or a session id).
	Location string
}

// Error describes the redirect.
func (e *Error) Error() string {
	return fmt.Sprintf("HTTP %d %s to %s: redirects are not followed", e.StatusCode, http.StatusText(e.StatusCode), e.Location)
}

// Refuse is an http.Client's CheckRedirect that follows no redirect: the
// client's Do returns an *Error (wrapped in a *url.Error whose URL is the
// redirect's whole Location: see Strip), with the redirect's body closed,
// and the place it points to gets no request.
func Refuse(req *http.Request, _ []*http.Request) error {
	e := &Error{Location: Location(req.URL)}
	if req.Response != nil {
		e.StatusCode = req.Response.StatusCode
	}
	return e
}

// Client returns c refusing redirects (Refuse): c itself when it has a
// CheckRedirect of its own, which its owner chose, else a copy of c with
// Refuse (sharing its Transport). A nil c stays nil.
func Client(c *http.Client) *http.Client {
	if c == nil || c.CheckRedirect != nil {
		return c
	}
	out := *c
	out.CheckRedirect = Refuse
	return &out
}

// Location is u as an error may show it (redact.Location): without user
// information, query, fragment or path parameters.
func Location(u *url.URL) string { return redact.Location(u) }

// Strip returns the *Error that err wraps, without the *url.Error that
// http.Client wraps it in (whose URL is the redirect's Location, query
// and credentials included), or err itself when it wraps none.
func Strip(err error) error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return err
}
