// Package web is the HTTP plumbing the two bridges share: the kinds of
// failure and their one map to HTTP statuses (Kind, Failure, Reply), the
// guards in front of every route (body limits and timeouts, Host, CORS),
// request logging, the upstream client and its connect timeout, and an SSE
// response writer that coalesces frames and flushes when the upstream has
// nothing more buffered.
package web
