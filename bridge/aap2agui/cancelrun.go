package aap2agui

import (
	"fmt"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/aapagui/aapagui/translate"
)

// CancelRun says how a turn goes whose run carries a new user message
// together with cancelled resume entries: the user moved on while
// interrupts were open (Config.CancelRun, --cancel-run). Agents differ:
// the demo agent, agui2aap and CopilotKit's BuiltInAgent read the
// cancellation and the message in one run and answer the message;
// @ag-ui/langgraph and @ag-ui/mastra resume the run as cancelled and end
// it without reading the message.
type CancelRun string

const (
	// CancelRunAuto (the default, also the zero value): one run carries
	// both; when it ends without the agent having read the message, or
	// the agent refuses it before any output (see followUp), a second run
	// carries the message alone, in the same turn.
	CancelRunAuto CancelRun = "auto"
	// CancelRunSeparate: always two runs, the cancellation alone (its
	// events left out of the turn), then the message.
	CancelRunSeparate CancelRun = "separate"
	// CancelRunSingle: one run carries both, and that is all, as earlier
	// releases did.
	CancelRunSingle CancelRun = "single"
)

// ParseCancelRun reads a CancelRun; "" is CancelRunAuto.
func ParseCancelRun(s string) (CancelRun, error) {
	switch CancelRun(s) {
	case "", CancelRunAuto:
		return CancelRunAuto, nil
	case CancelRunSeparate, CancelRunSingle:
		return CancelRun(s), nil
	}
	return "", fmt.Errorf("cancel run %q: want %q, %q or %q", s, CancelRunAuto, CancelRunSeparate, CancelRunSingle)
}

// messageRun is in without its resume entries, as a run of its own: the
// new user message alone, on the whole history, in which each of closes
// (calls a cancelled resume entry answered in the run before, or would
// have) has the closing result translate.UnansweredCall: the other
// closing, for an agent that reads no resume entry here.
func messageRun(in *types.RunAgentInput, closes []string) *types.RunAgentInput {
	run := *in
	run.Resume = nil
	run.Messages = translate.CloseCalls(in.Messages, closes, translate.UnansweredCall)
	return &run
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
