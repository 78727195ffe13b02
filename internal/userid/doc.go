// Package userid names the person behind a request, beside its API key.
//
// A server that many people reach through one caller (a CopilotKit
// runtime, an application server), all holding one API key, scopes what it
// stores to the pair (key, user). The user comes either from a header that
// the trusted caller sets (Options.Header) or from a signed JSON Web Token
// whose "sub" claim names the user (Options.JWTKeyFile), verified with
// go-jose; then no caller is trusted to name a user.
//
// A user id is never stored or logged as it is: Scope turns it into a hash
// that is appended to the key's owner id.
package userid
