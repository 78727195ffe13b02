// Package redirect keeps an HTTP client from following redirects.
//
// The bridges call an upstream they were configured with, sending it the
// whole conversation and the headers that authenticate them (an agent's
// secret headers, an AAP server's bearer key). Go's http.Client follows up
// to ten redirects and, for 307 and 308, sends the request's body and most
// of its headers on to wherever the answer points: an upstream (or whoever
// answers in its name) could send both to another host. Refuse stops the
// client at the first redirect, naming it in an *Error.
package redirect
