package aap2agui

import (
	"context"
	"io"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/aapagui/aapagui/internal/ident"
)

// postTurn sends a turn's run to the agent (calls: the encrypted values of
// its tool calls, see post) and returns the SSE body whose events answer
// the turn. With Config.SeparateCancelRun, a run that
// carries a new user message together with cancelled resume entries (the
// user moved on while interrupts were open) goes as two runs: first the
// cancellation alone (the history without the new message, the resume
// entries), whose events are read to their end and left out of the turn,
// then the message (the whole history, no resume), which answers the
// turn. Frameworks that resume a run as cancelled and end it without
// reading new messages (@ag-ui/langgraph, @ag-ui/mastra) then answer the
// message; what they said of the cancellation reaches history only
// through a MESSAGES_SNAPSHOT of theirs.
func (s *Server) postTurn(ctx context.Context, in *types.RunAgentInput, calls map[string]string) (*upstreamBody, error) {
	if !s.cfg.SeparateCancelRun || !cancelsWithMessage(in) {
		return s.post(ctx, in, calls)
	}
	cancelRun := *in
	cancelRun.RunID = ident.Random("run-")
	cancelRun.Messages = in.Messages[:len(in.Messages)-1]
	body, err := s.post(ctx, &cancelRun, calls)
	if err != nil {
		return nil, err
	}
	_, err = io.Copy(io.Discard, body)
	body.Close()
	if err != nil && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	// A cancellation the agent failed on goes no further: the message's
	// run says what the agent makes of it.
	messageRun := *in
	messageRun.Resume = nil
	return s.post(ctx, &messageRun, calls)
}

// cancelsWithMessage reports whether a run carries a new user message (its
// last) with resume entries that all cancel.
func cancelsWithMessage(in *types.RunAgentInput) bool {
	if len(in.Resume) == 0 || len(in.Messages) == 0 || in.Messages[len(in.Messages)-1].Role != types.RoleUser {
		return false
	}
	for _, r := range in.Resume {
		if r.Status != types.ResumeStatusCancelled {
			return false
		}
	}
	return true
}
