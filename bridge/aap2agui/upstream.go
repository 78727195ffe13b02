package aap2agui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/bridge/internal/fault"
	"github.com/aapagui/aapagui/bridge/internal/upstream"
	"github.com/aapagui/aapagui/internal/redact"
	"github.com/aapagui/aapagui/internal/redirect"
	"github.com/aapagui/aapagui/internal/reqbody"
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

// post sends the run to the upstream agent and returns its SSE body. The
// request derives from ctx, so a client that leaves cancels it. calls are
// the encrypted values of the run's tool calls (toolCallId → value),
// which the SDK's ToolCall cannot carry: they are added to its JSON
// (encrypted.go).
func (a *agent) post(ctx context.Context, in *types.RunAgentInput, calls map[string]string) (*upstream.IdleBody, error) {
	data, err := agui.MarshalRunAgentInput(in)
	if err == nil && len(calls) > 0 {
		data, err = agui.PatchToolCallValues(data, calls)
	}
	if err != nil {
		return nil, &upstreamError{fault.KindUpstream, "upstream_request", "could not encode the run for the agent", err}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.cfg.Upstream, nil)
	if err != nil {
		return nil, &upstreamError{fault.KindUpstream, "upstream_request", "could not build the request to the agent", err}
	}
	// The run holds the whole conversation: its bytes go once the answer
	// has begun, not when the stream ends.
	rb := reqbody.Set(req, data)
	for k, vs := range a.cfg.UpstreamHeader {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")

	// The wait for response headers only is bounded: the stream itself
	// may run for as long as the agent takes.
	body, err := upstream.Dial(ctx, a.cfg.ConnectTimeout, a.cfg.IdleTimeout, func(ctx context.Context) (io.ReadCloser, error) {
		resp, err := a.s.cfg.HTTPClient.Do(req.WithContext(ctx))
		rb.Release()
		if err != nil {
			// A refused redirect without the URL it pointed to in full; any other
			// error quotes the URL, maybe a token in its query.
			return nil, redact.Error(redirect.Strip(err))
		}
		if err := checkResponse(resp); err != nil {
			return nil, err
		}
		return resp.Body, nil
	})
	var ue *upstreamError
	switch {
	case err == nil:
		return body, nil
	case !errors.Is(err, upstream.ErrConnectTimeout) && errors.As(err, &ue):
		return nil, ue
	}
	f := upstream.Failure(err, "the agent", a.cfg.ConnectTimeout)
	return nil, &upstreamError{f.Kind, f.Code, f.Message, err}
}

// checkResponse refuses an agent's answer that is no event stream (its
// body closed): an HTTP error, or another content type.
func checkResponse(resp *http.Response) error {
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		resp.Body.Close()
		return &upstreamError{fault.KindUpstream, "upstream_error", fmt.Sprintf("the agent answered HTTP %d", resp.StatusCode),
			fmt.Errorf("HTTP %d: %q", resp.StatusCode, snippet)}
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		resp.Body.Close()
		return &upstreamError{fault.KindUpstream, "upstream_not_sse", "the agent did not answer with an event stream", fmt.Errorf("content type %q", resp.Header.Get("Content-Type"))}
	}
	return nil
}
