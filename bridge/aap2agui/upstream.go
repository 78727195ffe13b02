package aap2agui

import (
	"fmt"
	"io"
	"mime"
	"net/http"

	"github.com/aapagui/aapagui/bridge/internal/fault"
	"github.com/aapagui/aapagui/internal/redact"
)

// upstreamError is a failure of the upstream call before its stream began.
type upstreamError struct {
	kind    fault.Kind // fault.KindUpstream (502) or fault.KindUpstreamTimeout (504)
	code    string     // stable error code
	message string     // safe for the client
	detail  error      // for the log only
}

// Error describes the failure.
func (e *upstreamError) Error() string { return e.message + ": " + e.detail.Error() }

// checkResponse refuses an agent's answer that is no event stream (its
// body closed): an HTTP error, or another content type. The start of an
// error's body is kept for the log with the credentials the request sent
// (UpstreamHeader) and any it names masked: an agent or proxy may echo
// the request's headers.
func checkResponse(resp *http.Response) error {
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		resp.Body.Close()
		var sent http.Header
		if resp.Request != nil {
			sent = resp.Request.Header
		}
		snippet := redact.Echoed(string(body), sent)
		return &upstreamError{fault.KindUpstream, "upstream_error", fmt.Sprintf("the agent answered HTTP %d", resp.StatusCode),
			fmt.Errorf("HTTP %d: %q", resp.StatusCode, snippet)}
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		resp.Body.Close()
		return &upstreamError{fault.KindUpstream, "upstream_not_sse", "the agent did not answer with an event stream", fmt.Errorf("content type %q", resp.Header.Get("Content-Type"))}
	}
	return nil
}
