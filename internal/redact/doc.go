// Package redact renders URLs, PostgreSQL DSNs and the errors that quote
// them for logs and error messages, without what may be secret in them: a
// URL's password, every value of its query (a token, a signature, a
// password) and its fragment, and a key=value DSN's password. What is
// left (scheme, host, path, the query's keys) still tells an operator
// which address was meant. A place an upstream points to (Location) is
// shown by scheme, host and path alone, its path parameters left out.
// Echoed masks the credentials an upstream's answer echoes of the
// request it was sent.
package redact
