package userid

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode"

	"github.com/aapagui/aapagui/internal/ident"
)

// Options say where a request's user comes from. The zero value names no
// user: everything is scoped to the API key alone, as without this
// package.
type Options struct {
	// Header is the request header in which the trusted caller names the
	// user (for example X-User-Id). Set Header or JWTKeyFile, not both.
	Header string
	// JWTKeyFile is a file of the keys that sign user tokens: a JWKS (a
	// JSON object with "keys") or one JWK, the whole file; PEM public keys
	// or certificates (RS256, ES256), text around them skipped; or an
	// HS256 secret, marked: the file starts with HS256Prefix ("hs256:"),
	// the secret right after it (a final line break is ignored; at least
	// 32 bytes). A file is never read as a secret unless so marked, and a
	// file holding PEM or JWK that does not parse is refused.
	JWTKeyFile string
	// JWTHeader is the header that carries the token: "Authorization"
	// (the default, as "Bearer <token>") or another, holding the token
	// alone or as "Bearer <token>".
	JWTHeader string
	// JWTAudience must be among the token's "aud" values; required with
	// JWTKeyFile, so that a token made for another service is refused.
	JWTAudience string
	// JWTIssuer, when set, must be the token's "iss".
	JWTIssuer string
	// Now is the clock tokens are checked against (nil: time.Now).
	Now func() time.Time
}

// Users finds the user of a request. A nil *Users names no user.
type Users struct {
	header string
	jwt    *verifier
}

// MaxUserID is the longest user id a header may carry, in bytes.
const MaxUserID = 256

// New returns the Users for o, or nil when o names no user source.
// apiKeys says whether the server checks API keys: they are read from
// Authorization, so a token must then come in a header of its own.
func New(o Options, apiKeys bool) (*Users, error) {
	switch {
	case o.Header == "" && o.JWTKeyFile == "":
		if o.JWTHeader != "" || o.JWTAudience != "" || o.JWTIssuer != "" {
			return nil, errors.New("user scope: the JWT header, audience and issuer need a JWT key file")
		}
		return nil, nil
	case o.Header != "" && o.JWTKeyFile != "":
		return nil, errors.New("user scope: name the user by a header or by a JWT, not both (with a JWT no caller is trusted to name a user)")
	case o.Header != "":
		if err := checkHeaderName(o.Header); err != nil {
			return nil, err
		}
		if strings.EqualFold(o.Header, "Authorization") {
			return nil, errors.New("user scope: the user header cannot be Authorization, which carries the API key")
		}
		return &Users{header: http.CanonicalHeaderKey(o.Header)}, nil
	}
	v, err := newVerifier(o, apiKeys)
	if err != nil {
		return nil, err
	}
	return &Users{jwt: v}, nil
}

func checkHeaderName(name string) error {
	for _, r := range name {
		if r > unicode.MaxASCII || !(r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)) {
			return fmt.Errorf("user scope: %q is not a header name", name)
		}
	}
	return nil
}

// Describe says where the user comes from, for a start-up log line (no
// secret in it): "header X-User-Id", "JWT in Authorization", or "" for
// no user scope.
func (u *Users) Describe() string {
	switch {
	case u == nil:
		return ""
	case u.jwt != nil:
		return "JWT in " + u.jwt.header
	}
	return "header " + u.header
}

// JWT reports whether users are named by signed tokens.
func (u *Users) JWT() bool { return u != nil && u.jwt != nil }

// ErrMissing reports a request that names no user where one is required.
var ErrMissing = errors.New("no user")

// InvalidError reports a user header or token that cannot be accepted,
// and why. Its message never holds the header's value.
type InvalidError struct{ Reason string }

func (e *InvalidError) Error() string { return e.Reason }

// User returns the user of r: ("", nil) when u is nil, ErrMissing when
// the header or token is absent, an *InvalidError when it is not valid.
func (u *Users) User(r *http.Request) (string, error) {
	if u == nil {
		return "", nil
	}
	if u.jwt != nil {
		return u.jwt.user(r)
	}
	vals := r.Header.Values(u.header)
	switch {
	case len(vals) == 0 || vals[0] == "":
		return "", ErrMissing
	case len(vals) > 1:
		return "", &InvalidError{Reason: "the " + u.header + " header is given more than once"}
	}
	return vals[0], checkUser(u.header+" header", vals[0])
}

// checkUser refuses a user id that is too long or whose text is not
// what it shows: not UTF-8, control, zero-width or bidi characters,
// U+FFFD (ident.Check), so that two users that read alike are never two
// owners (where: what carried it, for the message).
func checkUser(where, user string) error {
	if len(user) > MaxUserID {
		return &InvalidError{Reason: fmt.Sprintf("the %s is longer than %d bytes", where, MaxUserID)}
	}
	if err := ident.Check(user); err != nil {
		return &InvalidError{Reason: "the " + where + " " + err.Error()}
	}
	return nil
}

// Header is the header the user comes from: the user header, or the one
// that carries the token.
func (u *Users) Header() string {
	if u.jwt != nil {
		return u.jwt.header
	}
	return u.header
}

// Scope is the owner id of (owner, user): owner itself for no user, else
// owner followed by a hash of the user, so that the store and the logs
// never hold the user id and two users of one key never share a thread or
// a session.
func Scope(owner, user string) string {
	if user == "" {
		return owner
	}
	sum := sha256.Sum256([]byte("aapagui user\x00" + user))
	return owner + "~" + hex.EncodeToString(sum[:16])
}
