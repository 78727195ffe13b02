// Package edge is the HTTP edge both bridges stand behind: the engine and
// its guards (body limits and timeouts, Host, CORS), request logging and
// the request's logger, JSON bodies and error replies (Reply, the one map
// from a fault.Failure to a response), a request whose client left
// (ClientLeft: recorded as 499, never a 5xx), the per-key limits, the user
// behind a request (Scope) and the readiness probe's cache (Ready).
package edge
