package translate

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/internal/ident"
)

// The run planning of agui2aap: an AG-UI run carries the whole
// conversation, an AAP session holds it already; PlanRun works out what
// the run adds and how it reaches the session (its next turn, or a new
// session seeded with the client's history), under the AG-UI interrupt
// rules. Pure: the bridge gives it what the thread's session has seen
// (ThreadState) and acts on the RunPlan.

// Codes of the RUN_ERROR events of runs the interrupt rules refuse.
const (
	CodeInterruptsPending = "INTERRUPTS_PENDING"    // new input while interrupts are open, without resume
	CodeUnknownInterrupt  = "UNKNOWN_INTERRUPT"     // resume names an interrupt that is not open
	CodeResumeWithoutCall = "RESUME_WITHOUT_CALL"   // resume of an open interrupt, without the message holding its call
	CodePartialResume     = "PARTIAL_RESUME"        // resume leaves an open interrupt unanswered
	CodeInvalidResume     = "INVALID_RESUME"        // a resume payload that cannot be read
	CodeInputWithResume   = "NEW_INPUT_WITH_RESUME" // a user message together with resume
)

const (
	closingText        = aap.ToolCallNotAnswered + ": the conversation moved on."
	policyDeniedReason = "denied by the bridge's permission policy"
)

// Policy decides who answers untrusted AAP server tool calls.
type Policy string

// The permission policies.
const (
	// PolicyInterrupt ends the run with an AG-UI interrupt per call; the
	// client answers with resume (the default).
	PolicyInterrupt Policy = "interrupt"
	// PolicyGrant grants every call, for clients that cannot resume.
	PolicyGrant Policy = "grant"
	// PolicyDeny denies every call.
	PolicyDeny Policy = "deny"
)

// ThreadState is what a thread's AAP session has seen, as the planner
// needs it.
type ThreadState struct {
	SessionID string // the thread's AAP session ("" for none yet)
	Agent     string // the agent of that session
	// Delivered are the ids of the client's messages the session has.
	Delivered []string
	// ClientCalls are the client tool calls the session waits on.
	ClientCalls []string
	// Interrupts are the open interrupts (permissions the session waits on).
	Interrupts []types.Interrupt
}

// Refusal is a run the AG-UI interrupt rules refuse: the bridge answers it
// with RUN_STARTED then RUN_ERROR carrying Code.
type Refusal struct {
	Code    string
	Message string
}

func (e *Refusal) Error() string { return e.Code + ": " + e.Message }

func refuse(code, format string, args ...any) *Refusal {
	return &Refusal{Code: code, Message: fmt.Sprintf(format, args...)}
}

// InputError is a RunAgentInput that cannot be run (the bridge answers
// 400 invalid_input).
type InputError struct{ Message string }

func (e *InputError) Error() string { return e.Message }

func invalidInput(format string, args ...any) *InputError {
	return &InputError{Message: fmt.Sprintf(format, args...)}
}

// planner plans a run under a permission policy.
type planner struct{ policy Policy }

// RunPlan is what one AG-UI run sends to the AAP server (PlanRun).
type RunPlan struct {
	Fresh bool          // create a new session, seeded
	Seed  []aap.Message // its seed history
	Turn  []aap.Message // the turn's messages
	// Delivered are the ids of the client's messages this run delivers.
	Delivered []string
}

// PlanRun works out what an AG-UI run sends to the thread's AAP session
// (th, nil for a thread not seen before; agent, the agent the run names):
// what is new in the client's messages since the session last saw it, as
// the next turn, or a new session seeded with the client's history when
// the history no longer extends the session's. A run that cannot go ahead
// is an *InputError (an input that cannot be run) or a *Refusal (the
// AG-UI interrupt rules). policy says who answers untrusted server tool
// calls.
func PlanRun(th *ThreadState, in *types.RunAgentInput, agent string, policy Policy) (*RunPlan, error) {
	pl := planner{policy: policy}
	p, err := pl.planRun(th, in, agent)
	var ref *Refusal
	if errors.As(err, &ref) && ref.Code == CodeUnknownInterrupt {
		if missing := resumeWithoutCall(th, in, agent); missing != nil {
			return nil, missing
		}
	}
	return p, err
}

// resumeWithoutCall names what is missing when a resume names an
// interrupt that is open on the thread but the run's messages do not hold
// the assistant message with its tool call (a client that sent only the
// latest messages): without it the messages read as another conversation,
// in which the interrupt is not open. nil when that is not the case.
func resumeWithoutCall(th *ThreadState, in *types.RunAgentInput, agent string) *Refusal {
	if !onSession(th, agent) {
		return nil
	}
	calls := map[string]bool{}
	for _, m := range in.Messages {
		for _, c := range m.ToolCalls {
			calls[c.ID] = true
		}
	}
	for _, r := range in.Resume {
		for _, it := range th.Interrupts {
			if it.ID == r.InterruptID && it.ToolCallID != "" && !calls[it.ToolCallID] {
				return refuse(CodeResumeWithoutCall, "resume answers interrupt %q, which is open on this thread, but messages hold no assistant message with its tool call %q: send the thread's whole conversation (the messages the client has, the assistant message with that call included) with the resume", r.InterruptID, it.ToolCallID)
			}
		}
	}
	return nil
}

// planRun is makePlan without the diagnosis of resumeWithoutCall. A run
// continues the thread's session when the client's history extends what
// the session saw with something a turn can carry; otherwise it starts a
// new session seeded with the client's history (freshPlan).
func (pl planner) planRun(th *ThreadState, in *types.RunAgentInput, agent string) (*RunPlan, error) {
	msgs, err := agentMessages(in.Messages)
	if err != nil {
		return nil, err
	}
	if !onSession(th, agent) {
		return pl.freshPlan(msgs, in)
	}
	fresh, ok := newSince(th, msgs)
	if !ok {
		// An edit, a regenerate or a branch; or the client added an
		// assistant or system message.
		return pl.freshPlan(msgs, in)
	}
	p := &RunPlan{Delivered: ids(fresh)}
	if len(th.Interrupts) > 0 && pl.policy == PolicyInterrupt {
		return pl.resumeTurn(p, th, in, msgs, fresh)
	}
	if len(in.Resume) > 0 {
		return nil, refuse(CodeUnknownInterrupt, "resume was sent but no interrupt is open on this thread")
	}
	if rest, ok := abandoned(fresh, th.ClientCalls); ok && userOnly(rest) && len(th.Interrupts) == 0 {
		// The user moved on from open client tool calls: the user message
		// alone; the AAP server closes the calls it was waiting on.
		return p.withTurn(rest, in.Messages)
	}
	if !continuesTurn(th, fresh) {
		// Nothing new (a re-run), several user messages, or a user message
		// while tool calls are open: start over from the client's history.
		return pl.freshPlan(msgs, in)
	}
	if _, err := p.withTurn(fresh, in.Messages); err != nil {
		return nil, err
	}
	// Under a grant or deny policy, calls left waiting by a run that also
	// stopped for client tools are answered now, with their results.
	for _, it := range th.Interrupts {
		p.Turn = append(p.Turn, PolicyPermission(it.ToolCallID, pl.policy))
	}
	return p, nil
}

// agentMessages are the client's messages the agent sees (activity is UI
// only, never sent to the agent); each must have an id.
func agentMessages(all []types.Message) ([]types.Message, error) {
	msgs := make([]types.Message, 0, len(all))
	for i, m := range all {
		if m.Role == types.RoleActivity {
			continue
		}
		if m.ID == "" {
			return nil, invalidInput("messages[%d]: id is required", i)
		}
		msgs = append(msgs, m)
	}
	return msgs, nil
}

// onSession reports whether the thread has an AAP session of agent to
// continue.
func onSession(th *ThreadState, agent string) bool {
	return th != nil && th.SessionID != "" && th.Agent == agent
}

// newSince returns the messages the thread's session has not seen
// (reasoning aside). It reports false when the client's history no longer
// extends the session's (an edit, a regenerate or a branch: a delivered
// message is gone), or when what is new is not only user and tool
// messages.
func newSince(th *ThreadState, msgs []types.Message) ([]types.Message, bool) {
	present := make(map[string]bool, len(msgs))
	answered := map[string]bool{} // toolCallIds with a tool message
	for _, m := range msgs {
		present[m.ID] = true
		if m.Role == types.RoleTool {
			answered[m.ToolCallID] = true
		}
	}
	delivered := make(map[string]bool, len(th.Delivered))
	for _, id := range th.Delivered {
		delivered[id] = true
		// A result the bridge streamed for a call the client had already
		// answered itself (CopilotKit adds a tool message for an
		// interrupted call) is merged into the client's own message: its
		// id goes away without the history being rewritten.
		if call, ok := strings.CutPrefix(id, ident.ToolResultMessage("")); ok && answered[call] {
			continue
		}
		if !present[id] {
			return nil, false
		}
	}
	last := -1 // the last message the session has
	for i, m := range msgs {
		if delivered[m.ID] {
			last = i
		}
	}
	var fresh []types.Message
	for i, m := range msgs {
		if !delivered[m.ID] && m.Role != types.RoleReasoning && !(i < last && closedLater(m)) {
			fresh = append(fresh, m)
		}
	}
	for _, m := range fresh {
		if m.Role != types.RoleUser && m.Role != types.RoleTool {
			return nil, false
		}
	}
	return fresh, true
}

// closedLater reports a tool message that closes its call as not
// answered: one the client put in its history before messages the session
// has, after the session moved on from the call (aap2agui in front of
// agui2aap answers a call bound to its interrupt by the cancelled resume
// entry, and stores the closing result only once the run has ended). The
// session closed the call itself: it adds nothing.
func closedLater(m types.Message) bool {
	if m.Role != types.RoleTool {
		return false
	}
	s, ok := plainContent(m.Content)
	return ok && strings.HasPrefix(s, aap.ToolCallNotAnswered)
}

// continuesTurn reports whether what is new can be the session's next
// turn as it is: one user message on a thread with nothing open, or tool
// results.
func continuesTurn(th *ThreadState, fresh []types.Message) bool {
	switch {
	case userOnly(fresh) && len(th.ClientCalls) == 0 && len(th.Interrupts) == 0:
		return true
	case len(fresh) > 0 && allTool(fresh):
		return true
	}
	return false
}

// userOnly reports whether msgs is one user message.
func userOnly(msgs []types.Message) bool {
	return len(msgs) == 1 && msgs[0].Role == types.RoleUser
}

// withTurn makes msgs, in AAP form, the plan's turn (all is the client's
// messages, to name one that cannot be translated).
func (p *RunPlan) withTurn(msgs, all []types.Message) (*RunPlan, error) {
	turn, err := MessagesToAAP(msgs)
	if err != nil {
		return nil, inputError(err, all)
	}
	p.Turn = turn
	return p, nil
}

// PolicyPermission is the permission the grant or deny policy gives a
// call.
func PolicyPermission(toolCallID string, policy Policy) *aap.ToolPermissionMessage {
	granted := policy == PolicyGrant
	perm := &aap.ToolPermissionMessage{ToolCallID: toolCallID, Granted: granted}
	if !granted {
		perm.Reason = policyDeniedReason
	}
	return perm
}

// resumeTurn plans the run of a thread with open interrupts (under the
// interrupt policy): the resume must answer every one of them. Answered,
// they are the turn (with the client's tool results); all cancelled with
// a new user message, the user message alone is (see abandonTurn).
func (pl planner) resumeTurn(p *RunPlan, th *ThreadState, in *types.RunAgentInput, msgs, fresh []types.Message) (*RunPlan, error) {
	if err := checkResume(th.Interrupts, in.Resume); err != nil {
		return nil, err
	}
	if hasUser(fresh) {
		return pl.abandonTurn(p, th, in, msgs, fresh)
	}
	turn, err := TurnFromAGUI(fresh, in.Resume, th.Interrupts)
	if err != nil {
		return nil, refuse(CodeInvalidResume, "%v", err)
	}
	p.Turn = turn
	return p, nil
}

// checkResume refuses a resume that does not answer exactly the open
// interrupts.
func checkResume(open []types.Interrupt, resume []types.ResumeEntry) error {
	if len(resume) == 0 {
		return refuse(CodeInterruptsPending, "the thread has %d open interrupt(s) (%s); answer them with resume, in a run of its own (status cancelled to move on)", len(open), interruptIDs(open))
	}
	waiting := indexInterrupts(open)
	answered := make(map[string]bool, len(resume))
	for _, r := range resume {
		if _, ok := waiting.withID(r.InterruptID); !ok {
			return refuse(CodeUnknownInterrupt, "resume names interrupt %q, which is not open on this thread", r.InterruptID)
		}
		answered[r.InterruptID] = true
	}
	for _, it := range open {
		if !answered[it.ID] {
			return refuse(CodePartialResume, "interrupt %q is open and not answered: resume must answer every open interrupt", it.ID)
		}
	}
	return nil
}

// abandonTurn plans new input that abandons the interrupts (AG-UI: new
// input on an interrupted thread comes with a resume that cancels them):
// the user message alone; the AAP server closes the calls it was waiting
// on. Answering an interrupt and saying something new at once is one AAP
// turn too many.
func (pl planner) abandonTurn(p *RunPlan, th *ThreadState, in *types.RunAgentInput, msgs, fresh []types.Message) (*RunPlan, error) {
	if !allCancelled(in.Resume) {
		return nil, refuse(CodeInputWithResume, "a new user message can only come with interrupts that are cancelled, not answered: answer them in a run of their own")
	}
	waiting := map[string]bool{}
	for _, it := range th.Interrupts {
		waiting[it.ToolCallID] = true
	}
	var rest []types.Message
	for _, m := range fresh {
		if m.Role == types.RoleTool && waiting[m.ToolCallID] {
			continue // the client's note on the abandoned call
		}
		rest = append(rest, m)
	}
	if r, ok := abandoned(rest, th.ClientCalls); ok {
		rest = r
	}
	if !userOnly(rest) {
		return pl.freshPlan(msgs, &types.RunAgentInput{Tools: in.Tools})
	}
	return p.withTurn(rest, in.Messages)
}

// PlanLostSession is the plan of a run whose AAP session the server no
// longer has: a new session seeded with the client's history, as for a
// rewritten history.
func PlanLostSession(in *types.RunAgentInput, policy Policy) (*RunPlan, error) {
	pl := planner{policy: policy}
	msgs, err := agentMessages(in.Messages) // planned before: every message has its id
	if err != nil {
		return nil, err
	}
	return pl.freshPlan(msgs, in)
}

// freshPlan seeds a new session with the client's history up to its last
// Turn: the last user message, or the tool results after the last
// assistant message. Tool calls the history leaves unanswered are closed
// with a tool message, so the seed is a valid history.
func (pl planner) freshPlan(msgs []types.Message, in *types.RunAgentInput) (*RunPlan, error) {
	if resolved := resolvedOnly(in.Resume); len(resolved) > 0 {
		return pl.resumePlan(msgs, resolved, in.Messages)
	}
	last := len(msgs) - 1
	if last < 0 {
		return nil, invalidInput("messages is empty: there is nothing to answer")
	}
	// Every message the client has counts as delivered, even those a
	// re-answer below leaves out: the client keeps them in its history.
	var delivered []string
	for _, m := range msgs {
		if m.Role != types.RoleReasoning {
			delivered = append(delivered, m.ID)
		}
	}
	cut := last
	switch msgs[last].Role {
	case types.RoleUser:
	case types.RoleTool:
		for cut > 0 && msgs[cut-1].Role == types.RoleTool {
			cut--
		}
		// Tool results the client did not produce (the agent's own server
		// tools) cannot be a Turn: AAP takes results only for client tools.
		// Answer the last user message again instead.
		clientTools := map[string]bool{}
		for _, t := range in.Tools {
			clientTools[t.Name] = true
		}
		names := callNames(msgs[:cut])
		for _, m := range msgs[cut:] {
			if !clientTools[names[m.ToolCallID]] {
				u := lastUser(msgs)
				if u < 0 {
					return nil, invalidInput("the history ends with results of the agent's own tools and has no user message to answer")
				}
				cut, last = u, u
				msgs = msgs[:u+1]
				break
			}
		}
	default:
		return nil, invalidInput("the last message is %q: a run needs a new user message or tool results at the end", msgs[last].Role)
	}
	seed, err := MessagesToAAP(msgs[:cut])
	if err != nil {
		return nil, inputError(err, in.Messages)
	}
	turn, err := MessagesToAAP(msgs[cut:])
	if err != nil {
		return nil, inputError(err, in.Messages)
	}
	answered := map[string]bool{}
	for _, m := range turn {
		if tm, ok := m.(*aap.ToolMessage); ok {
			answered[tm.ToolCallID] = true
		}
	}
	return &RunPlan{Fresh: true, Seed: closeDangling(seed, answered), Turn: turn, Delivered: delivered}, nil
}

// resumePlan answers, on a new session, permissions for tool calls the
// client's history leaves waiting at its end (a thread this bridge never
// interrupted, e.g. a history built elsewhere): the whole history is the
// seed and the permissions are the turn. Resume entries must name calls
// by the bridge's interrupt ids (InterruptID).
func (pl planner) resumePlan(msgs []types.Message, resume []types.ResumeEntry, all []types.Message) (*RunPlan, error) {
	waiting := map[string]bool{}
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			waiting[c.ID] = true
		}
		if m.Role == types.RoleTool {
			delete(waiting, m.ToolCallID)
		}
	}
	answered := map[string]bool{}
	for _, r := range resume {
		id, ok := ident.ToolCallFromInterrupt(r.InterruptID)
		if !ok || !waiting[id] {
			return nil, refuse(CodeUnknownInterrupt, "resume names interrupt %q, which is not open on this thread", r.InterruptID)
		}
		answered[id] = true
	}
	var seedMsgs []types.Message
	for _, m := range msgs {
		if m.Role == types.RoleTool && answered[m.ToolCallID] {
			continue // the client's note on the call: the permission answers it
		}
		seedMsgs = append(seedMsgs, m)
	}
	seed, err := MessagesToAAP(seedMsgs)
	if err != nil {
		return nil, inputError(err, all)
	}
	turn, err := TurnFromAGUI(nil, resume, nil)
	if err != nil {
		return nil, refuse(CodeInvalidResume, "%v", err)
	}
	var delivered []string
	for _, m := range msgs {
		if m.Role != types.RoleReasoning {
			delivered = append(delivered, m.ID)
		}
	}
	p := &RunPlan{Fresh: true, Seed: seed, Turn: turn, Delivered: delivered}
	return p, nil
}

// abandoned takes out of msgs the tool messages that close the open client
// tool calls as not answered (an AAP client of aap2agui that sent a new
// message instead closes them so, as agui2aap itself does): every call
// must be closed so, and something must follow. It reports false when
// there are no open calls or they are not all closed so.
func abandoned(msgs []types.Message, calls []string) ([]types.Message, bool) {
	if len(calls) == 0 {
		return msgs, false
	}
	open := map[string]bool{}
	for _, id := range calls {
		open[id] = true
	}
	var rest []types.Message
	for _, m := range msgs {
		if m.Role == types.RoleTool && open[m.ToolCallID] {
			if s, ok := plainContent(m.Content); !ok || !strings.HasPrefix(s, aap.ToolCallNotAnswered) {
				return msgs, false // a real result
			}
			delete(open, m.ToolCallID)
			continue
		}
		rest = append(rest, m)
	}
	return rest, len(open) == 0 && len(rest) > 0
}

// plainContent is a message's content when it is a string (as decoded,
// or still raw JSON).
func plainContent(c any) (string, bool) {
	switch v := c.(type) {
	case string:
		return v, true
	case json.RawMessage:
		var s string
		if json.Unmarshal(v, &s) == nil {
			return s, true
		}
	}
	return "", false
}

func resolvedOnly(resume []types.ResumeEntry) []types.ResumeEntry {
	var out []types.ResumeEntry
	for _, r := range resume {
		if r.Status != types.ResumeStatusCancelled {
			out = append(out, r)
		}
	}
	return out
}

func allCancelled(resume []types.ResumeEntry) bool {
	return len(resolvedOnly(resume)) == 0
}

func hasUser(msgs []types.Message) bool {
	for _, m := range msgs {
		if m.Role == types.RoleUser {
			return true
		}
	}
	return false
}

// closeDangling adds a tool message for every tool call of the history
// that has no result, before the next user message (or at the end), unless
// the coming turn answers it.
func closeDangling(hist []aap.Message, answered map[string]bool) []aap.Message {
	var out []aap.Message
	closing := func(calls []*aap.ToolUseBlock, atEnd bool) {
		for _, tu := range calls {
			if atEnd && answered[tu.ToolCallID] {
				continue
			}
			out = append(out, &aap.ToolMessage{ToolCallID: tu.ToolCallID, Content: aap.TextContent(closingText)})
		}
	}
	var c Calls
	for _, m := range hist {
		closing(c.Read(m), false)
		out = append(out, m)
	}
	closing(c.Open(), true)
	return out
}

// inputError reports a message the bridge cannot translate, naming its
// position in the client's messages (the translator only knows its
// position in the slice it was given).
func inputError(err error, all []types.Message) error {
	var me *MessageError
	if errors.As(err, &me) && me.ID != "" {
		for i, m := range all {
			if m.ID == me.ID {
				me.Index = i
				break
			}
		}
		return invalidInput("%v", me)
	}
	return invalidInput("%v", err)
}

// callNames maps the toolCallIds of assistant messages to tool names.
func callNames(msgs []types.Message) map[string]string {
	out := map[string]string{}
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			out[c.ID] = c.Function.Name
		}
	}
	return out
}

func lastUser(msgs []types.Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == types.RoleUser {
			return i
		}
	}
	return -1
}

func ids(msgs []types.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.ID
	}
	return out
}

func allTool(msgs []types.Message) bool {
	for _, m := range msgs {
		if m.Role != types.RoleTool {
			return false
		}
	}
	return true
}

func interruptIDs(open []types.Interrupt) string {
	out := make([]string, len(open))
	for i, it := range open {
		out[i] = it.ID
	}
	return strings.Join(out, ", ")
}

// ContextHeader begins the text block that carries AG-UI context in a user
// message (WithContext).
const ContextHeader = "Context from the application:"

// WithContext renders AG-UI context into a user message: a text block
// before the user's own content. AAP has no context field; the agent reads
// it as part of what the user said.
func WithContext(m *aap.UserMessage, ctx []types.Context) *aap.UserMessage {
	var sb strings.Builder
	sb.WriteString(ContextHeader)
	for _, c := range ctx {
		sb.WriteString("\n- ")
		if c.Description != "" {
			sb.WriteString(c.Description)
			sb.WriteString(": ")
		}
		sb.WriteString(c.Value)
	}
	blocks := []aap.ContentBlock{&aap.TextBlock{Text: sb.String()}}
	if m.Content.IsBlocks() {
		blocks = append(blocks, m.Content.Blocks...)
	} else {
		blocks = append(blocks, &aap.TextBlock{Text: m.Content.Text})
	}
	return &aap.UserMessage{Content: aap.BlockContent(blocks...)}
}
