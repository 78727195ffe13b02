package cli

import "github.com/aapagui/aapagui/internal/userid"

// UserFlags are the values of the flags that name the user behind a
// request (see BindUsers).
type UserFlags struct {
	header, jwt, jwtHeader, audience, issuer *string
}

// BindUsers defines --user-header and the --user-jwt flags, which scope
// what the program keeps (what: "sessions", "threads") to (key, user).
func (p *Program) BindUsers(what string) *UserFlags {
	f := p.Flags
	return &UserFlags{
		header: f.String("user-header", "", "request header in which the trusted caller (an application server, a CopilotKit runtime) names the user: "+
			what+" are then scoped to (API key, user), and a request without it is refused; set it on the server side only, never from a browser"),
		jwt: f.String("user-jwt", "", "file of the keys that sign user tokens (JWKS, JWK, PEM public keys or certificates, or an HS256 secret written after \"hs256:\" at the file's start): the user is the token's sub, "+
			what+" are scoped to (API key, user), and no caller is trusted to name a user"),
		jwtHeader: f.String("user-jwt-header", "", "header carrying the user token (default Authorization, as Bearer; another header when --api-key is set)"),
		audience:  f.String("user-jwt-audience", "", "audience (aud) a user token must be made for; required with --user-jwt"),
		issuer:    f.String("user-jwt-issuer", "", "issuer (iss) a user token must come from (empty: any)"),
	}
}

// Options are the flags' values as the bridges' Config.Users takes them.
func (u *UserFlags) Options() userid.Options {
	return userid.Options{Header: *u.header, JWTKeyFile: *u.jwt, JWTHeader: *u.jwtHeader, JWTAudience: *u.audience, JWTIssuer: *u.issuer}
}

// Tokens reports whether users are named by signed tokens, which then
// authenticate callers as API keys do.
func (u *UserFlags) Tokens() bool { return *u.jwt != "" }
