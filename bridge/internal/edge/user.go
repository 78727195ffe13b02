package edge

import (
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/aapagui/aapagui/bridge/internal/fault"
	"github.com/aapagui/aapagui/internal/userid"
)

// Scope is the owner that r acts as: owner (its API key's) scoped to the
// user that users finds in r, or the failure that answers a request naming
// no valid user: 401 unauthorized for a user token (the token is the
// credential), 400 user_required or invalid_user for the header a trusted
// caller sets. A nil users scopes nothing: owner itself.
func Scope(users *userid.Users, owner string, r *http.Request) (string, error) {
	user, err := users.User(r)
	if err != nil {
		return "", userFailure(users, err)
	}
	return userid.Scope(owner, user), nil
}

func userFailure(users *userid.Users, err error) *fault.Failure {
	h := users.Header()
	switch {
	case users.JWT() && errors.Is(err, userid.ErrMissing):
		return fault.Fail(fault.KindUnauthorized, "unauthorized", "a user token is required: "+h+": Bearer <token>")
	case users.JWT():
		return fault.Fail(fault.KindUnauthorized, "unauthorized", err.Error())
	case errors.Is(err, userid.ErrMissing):
		return fault.Fail(fault.KindInvalid, "user_required", "this server keeps each user's conversations apart: the "+h+" header must name the user")
	}
	return fault.Fail(fault.KindInvalid, "invalid_user", err.Error())
}

// SetOwner is how a bridge's authentication leaves the request's owner
// (the key, or the key and its user: Scope) for the handlers after it
// (Owner).
func SetOwner(c *gin.Context, owner string) {
	if w := served(c); w != nil {
		w.owner = owner
		return
	}
	c.Set(ownerKey, owner) // (a request RequestLog does not serve)
}

// Owner is the request's owner, as its authentication left it (SetOwner).
func Owner(c *gin.Context) string {
	if w := served(c); w != nil {
		return w.owner
	}
	return c.GetString(ownerKey)
}

const ownerKey = "owner"
