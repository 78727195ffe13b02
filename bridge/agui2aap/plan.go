package agui2aap

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/translate"
)

// Error codes of the RUN_ERROR events the bridge itself emits: those of
// the AG-UI interrupt rules (translate.PlanRun refuses the run), and the
// bridge's own.
const (
	CodeInterruptsPending = translate.CodeInterruptsPending // new input while interrupts are open, without resume
	CodeUnknownInterrupt  = translate.CodeUnknownInterrupt  // resume names an interrupt that is not open
	CodeResumeWithoutCall = translate.CodeResumeWithoutCall // resume of an open interrupt, without the message holding its call
	CodePartialResume     = translate.CodePartialResume     // resume leaves an open interrupt unanswered
	CodeInvalidResume     = translate.CodeInvalidResume     // a resume payload that cannot be read
	CodeInputWithResume   = translate.CodeInputWithResume   // a user message together with resume
	CodeUpstreamError     = "UPSTREAM_ERROR"                // the AAP server failed a follow-up turn
	CodeTooManyFollowUps  = "TOO_MANY_FOLLOW_UPS"           // the permission policy looped
	CodeStoreError        = "STORE_ERROR"                   // the run could not be stored: it did not finish
	CodeRunInterrupted    = "RUN_INTERRUPTED"               // the run's process is gone: a rejoining client ended its log
)

// makePlan plans the run against what the thread's session has seen
// (translate.PlanRun): a run that cannot go ahead is a
// *translate.InputError (answered 400) or a *translate.Refusal (the AG-UI
// interrupt rules: RUN_STARTED then RUN_ERROR).
func (cfg *Config) makePlan(th *store.Thread, in *types.RunAgentInput, agent string) (*translate.RunPlan, error) {
	return translate.PlanRun(threadState(th), in, agent, cfg.Policy)
}

// threadState is what the planner reads of a thread; nil for none.
func threadState(th *store.Thread) *translate.ThreadState {
	if th == nil {
		return nil
	}
	return &translate.ThreadState{SessionID: th.SessionID, Agent: th.Agent, Delivered: th.Delivered, ClientCalls: th.ClientCalls, Interrupts: th.Interrupts}
}

// digest identifies a JSON-encodable value (tools, context) compactly.
func digest(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12])
}
