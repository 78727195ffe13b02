// Package reqbody gives an HTTP request a body whose bytes are let go once
// they are no longer needed.
//
// net/http's Transport keeps a request, and so its body, until the
// response's body has been read to its end. For a request answered with an
// event stream that is the whole turn: a bytes.Reader body (and the GetBody
// that http.NewRequest sets for it) would keep the request's bytes, which
// grow with the conversation, for as long as the stream stays open.
package reqbody
