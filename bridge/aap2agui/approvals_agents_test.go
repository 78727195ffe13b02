package aap2agui_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/aapagui/aapagui/demo"
)

// AG-UI agents that mirror, event for event where it matters, how Python
// frameworks people put behind aap2agui handle a tool call that waits for
// approval. None of them can run in CI (no Python index): each handler
// below says which framework, version and source file it mirrors. They
// all play the same script: "search <q>" calls web_search, which waits
// for approval; any other user message is answered "You said: <text>".

// approvalAgent is an AG-UI agent under test: its handler, and how it
// answers.
type approvalAgent struct {
	name    string
	handler func(t testing.TB) http.Handler
	// reasonSent: a denial's reason reaches the agent in the resume
	// payload (its responseSchema has room for it).
	reasonSent bool
}

// approvalAgents are the framework mirrors, and the demo agent.
func approvalAgents() []approvalAgent {
	return []approvalAgent{
		{name: "demo", handler: func(testing.TB) http.Handler { return demo.AGUIAgent{} }, reasonSent: true},
		{name: "pydantic-ai", handler: func(testing.TB) http.Handler { return pydanticAIAgent{} }, reasonSent: true},
		{name: "agent-framework", handler: func(testing.TB) http.Handler { return newAgentFrameworkAgent() }},
	}
}

// readRun decodes a RunAgentInput; false (answered 400) when it does not.
func readRun(w http.ResponseWriter, r *http.Request) (*types.RunAgentInput, bool) {
	var in types.RunAgentInput
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return nil, false
	}
	return &in, true
}

// runOf is what the run events of in need.
type runOf struct{ in *types.RunAgentInput }

func (r runOf) started() string {
	return fmt.Sprintf(`{"type":"RUN_STARTED","threadId":%q,"runId":%q}`, r.in.ThreadID, r.in.RunID)
}

func (r runOf) finished() string {
	return fmt.Sprintf(`{"type":"RUN_FINISHED","threadId":%q,"runId":%q}`, r.in.ThreadID, r.in.RunID)
}

func (r runOf) interrupted(interrupt any) string {
	b, _ := json.Marshal([]any{interrupt})
	return fmt.Sprintf(`{"type":"RUN_FINISHED","threadId":%q,"runId":%q,"outcome":{"type":"interrupt","interrupts":%s}}`, r.in.ThreadID, r.in.RunID, b)
}

func (r runOf) failed(code, message string) string {
	b, _ := json.Marshal(message)
	if code == "" {
		return fmt.Sprintf(`{"type":"RUN_ERROR","message":%s}`, b)
	}
	return fmt.Sprintf(`{"type":"RUN_ERROR","message":%s,"code":%q}`, b, code)
}

func toolCallResult(msgID, callID, content string) string {
	b, _ := json.Marshal(content)
	return fmt.Sprintf(`{"type":"TOOL_CALL_RESULT","messageId":%q,"toolCallId":%q,"content":%s,"role":"tool"}`, msgID, callID, b)
}

// lastText is the text of a message ("" for none of text).
func lastText(m types.Message) string {
	s, _ := m.Content.(string)
	return s
}

// pendingCall is the last assistant message's call that has no tool
// message after it, with the index of that assistant message; -1 for
// none.
func pendingCall(msgs []types.Message) (types.ToolCall, int) {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != types.RoleAssistant || len(msgs[i].ToolCalls) == 0 {
			continue
		}
		for _, c := range msgs[i].ToolCalls {
			answered := false
			for _, m := range msgs[i+1:] {
				answered = answered || (m.Role == types.RoleTool && m.ToolCallID == c.ID)
			}
			if !answered {
				return c, i
			}
		}
		return types.ToolCall{}, -1
	}
	return types.ToolCall{}, -1
}

// queryOf is the "query" argument of a web_search call.
func queryOf(c types.ToolCall) string {
	var args map[string]string
	_ = json.Unmarshal([]byte(c.Function.Arguments), &args)
	return args["query"]
}

// searchOrEcho answers a user message: a web_search call (the call's id
// given) for "search <q>", else "You said: <text>".
func searchOrEcho(text string) (query string, search bool) {
	return strings.CutPrefix(text, "search ")
}

// pydanticAIAgent mirrors pydantic-ai 2.33 (pydantic_ai_slim) behind its
// AG-UI adapter (AGUIAdapter), a tool declared requires_approval=True:
//   - ui/ag_ui/_interrupt.py approval_to_interrupt: the pending call is an
//     interrupt {id "int-<toolCallId>", reason "tool_call", toolCallId,
//     responseSchema {approved (boolean), editedArgs (object), reason
//     (string); required [approved]}};
//   - resume_entry_to_approval: status cancelled → ToolDenied("Cancelled by
//     user."); a payload that does not validate (approved not a strict
//     boolean) → ToolDenied() ("The tool call was denied."); approved
//     false → ToolDenied(reason) when reason is not empty;
//   - _agent_graph.py _handle_deferred_tool_results: a resumed call that
//     the last model request already holds a result for raises UserError
//     "Tool call 'X' was already executed and its result cannot be
//     overridden.", which the adapter's stream reports as RUN_ERROR after
//     RUN_STARTED; otherwise the denial or result goes to the model as the
//     call's tool return, streamed as TOOL_CALL_RESULT, and the model
//     answers the user prompt that follows it, if any.
//
// Its scripted model, as the model providers do, refuses a history in
// which a tool call has no result and no resume answers it.
type pydanticAIAgent struct{}

const pydanticApprovalSchema = `{"type":"object","properties":{"approved":{"type":"boolean"},"editedArgs":{"type":"object"},"reason":{"type":"string"}},"required":["approved"]}`

func (pydanticAIAgent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	in, ok := readRun(w, r)
	if !ok {
		return
	}
	run := runOf{in}
	msgs := in.Messages
	if len(in.Resume) > 0 {
		sseEvents(w, pydanticResume(run)...)
		return
	}
	if c, at := pendingCall(msgs); at >= 0 {
		sseEvents(w, run.started(), run.failed("", fmt.Sprintf("status_code: 400, model_name: scripted, body: tool call %s has no result", c.ID)))
		return
	}
	last := msgs[len(msgs)-1]
	q, search := searchOrEcho(lastText(last))
	if !search {
		sseEvents(w, concat([]string{run.started()}, textMessage("pyd-"+last.ID, "You said: "+lastText(last)), []string{run.finished()})...)
		return
	}
	id := "pyd_call_" + last.ID
	args, _ := json.Marshal(map[string]string{"query": q})
	var schema map[string]any
	_ = json.Unmarshal([]byte(pydanticApprovalSchema), &schema)
	sseEvents(w, concat([]string{run.started()}, toolCallEvents(id, demo.SearchTool, "pyd-"+last.ID, string(args)),
		[]string{run.interrupted(map[string]any{"id": "int-" + id, "reason": "tool_call", "toolCallId": id,
			"message": "Approve " + demo.SearchTool + "(" + string(args) + ")?", "responseSchema": schema})})...)
}

// pydanticResume answers a run with resume entries.
func pydanticResume(run runOf) []string {
	msgs := run.in.Messages
	c, at := pendingCall(msgs)
	evs := []string{run.started()}
	reply := ""
	for _, e := range run.in.Resume {
		callID, ok := strings.CutPrefix(e.InterruptID, "int-")
		if !ok {
			return append(evs, run.failed("", fmt.Sprintf("ResumeEntry.interrupt_id %q does not start with the expected 'int-' prefix; cannot map it back to a tool call id.", e.InterruptID)))
		}
		for _, m := range msgs {
			if m.Role == types.RoleTool && m.ToolCallID == callID {
				return append(evs, run.failed("", fmt.Sprintf("Tool call '%s' was already executed and its result cannot be overridden.", callID)))
			}
		}
		if at < 0 || c.ID != callID {
			return append(evs, run.failed("", "Tool call results were provided, but the message history does not contain any unprocessed tool calls."))
		}
		result := pydanticApproval(e, queryOf(c))
		evs = append(evs, toolCallResult("pyd-result-"+callID, callID, result))
		reply = "Not searched: " + result
		if result == demo.SearchResult(queryOf(c)) {
			reply = demo.SearchAnswer(result)
		}
	}
	if last := msgs[len(msgs)-1]; last.Role == types.RoleUser && at >= 0 {
		reply = "You said: " + lastText(last)
	}
	return concat(evs, textMessage("pyd-answer-"+run.in.RunID, reply), []string{run.finished()})
}

// pydanticApproval is the tool return resume_entry_to_approval leads to.
func pydanticApproval(e types.ResumeEntry, query string) string {
	if e.Status == types.ResumeStatusCancelled {
		return "Cancelled by user."
	}
	p, _ := e.Payload.(map[string]any)
	approved, ok := p["approved"].(bool)
	switch {
	case !ok:
		return "The tool call was denied."
	case approved:
		return demo.SearchResult(query)
	}
	if reason, _ := p["reason"].(string); reason != "" {
		return reason
	}
	return "The tool call was denied."
}

// agentFrameworkAgent mirrors Microsoft Agent Framework
// (agent-framework-core 1.13.0, agent-framework-ag-ui 1.0.1), a function
// tool with approval_mode="always_require" behind
// add_agent_framework_fastapi_endpoint, its default in-memory approval
// state:
//   - _run_common.py _approval_interrupt_for_function_call and
//     _approval_response_schema: the interrupt {id and toolCallId the
//     call's id, reason "tool_call", message "Approve running <tool>?",
//     responseSchema {accepted (boolean) and each of the call's arguments;
//     required [accepted]; additionalProperties false}}, after a CUSTOM
//     function_approval_request; with require_confirmation=True (the
//     default) a synthetic confirm_changes tool call beside it; the run
//     ends with a MESSAGES_SNAPSHOT (afSnapshot);
//   - _agent_run.py _canonical_approval_resume_messages, with the pending
//     approvals of the thread: none pending and a resume holding a
//     decision (a cancelled entry, or accepted/approved) →
//     APPROVAL_RESUME_NOT_FOUND; pending and no resume →
//     APPROVAL_RESUME_REQUIRED; a cancelled entry → the pending approval
//     consumed and APPROVAL_RESUME_CANCELLED; a payload whose
//     accepted (or approved) is not a boolean, or with a key that is not
//     one of the call's arguments (read as an edited argument) →
//     APPROVAL_RESUME_INVALID; each after RUN_STARTED, before any output.
//   - core _tools.py: a rejected call's result is "Error: Tool call
//     invocation was rejected by user.".
type agentFrameworkAgent struct {
	confirmChanges bool // require_confirmation=True

	mu      sync.Mutex
	pending map[string]map[string]types.ToolCall // threadId → interruptId → its call
}

func newAgentFrameworkAgent() *agentFrameworkAgent {
	return &agentFrameworkAgent{pending: map[string]map[string]types.ToolCall{}}
}

// forget drops every pending approval, as a restart of the server does
// (the default store is in memory).
func (a *agentFrameworkAgent) forget() {
	a.mu.Lock()
	defer a.mu.Unlock()
	clear(a.pending)
}

func (a *agentFrameworkAgent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	in, ok := readRun(w, r)
	if !ok {
		return
	}
	run := runOf{in}
	a.mu.Lock()
	defer a.mu.Unlock()
	pending := a.pending[in.ThreadID]
	if code, msg, answered := a.checkResume(in, pending); code != "" {
		sseEvents(w, run.started(), run.failed(code, msg))
		return
	} else if answered != nil {
		sseEvents(w, a.resumed(run, answered)...)
		return
	}
	last := in.Messages[len(in.Messages)-1]
	q, search := searchOrEcho(lastText(last))
	if !search {
		text := types.Message{ID: "af-" + last.ID, Role: types.RoleAssistant, Content: "You said: " + lastText(last)}
		sseEvents(w, concat([]string{run.started()}, textMessage(text.ID, lastText(text)), []string{afSnapshot(in, text), run.finished()})...)
		return
	}
	id := "af_call_" + last.ID
	args, _ := json.Marshal(map[string]string{"query": q})
	call := types.ToolCall{ID: id, Type: "function", Function: types.FunctionCall{Name: demo.SearchTool, Arguments: string(args)}}
	if a.pending[in.ThreadID] == nil {
		a.pending[in.ThreadID] = map[string]types.ToolCall{}
	}
	a.pending[in.ThreadID][id] = call
	evs := concat([]string{run.started()}, toolCallEvents(id, demo.SearchTool, "af-"+last.ID, string(args)),
		[]string{fmt.Sprintf(`{"type":"CUSTOM","name":"function_approval_request","value":{"id":%q,"function_call":{"call_id":%q,"name":%q,"arguments":%s}}}`, id, id, demo.SearchTool, args)})
	if a.confirmChanges {
		confirm, _ := json.Marshal(map[string]any{"function_name": demo.SearchTool, "function_call_id": id,
			"function_arguments": json.RawMessage(args), "steps": []any{map[string]string{"description": "Execute " + demo.SearchTool, "status": "enabled"}}})
		evs = append(evs, toolCallEvents("confirm_"+id, "confirm_changes", "af-"+last.ID, string(confirm))...)
	}
	calls := []types.ToolCall{call}
	if a.confirmChanges {
		calls = append(calls, types.ToolCall{ID: "confirm_" + id, Type: "function", Function: types.FunctionCall{Name: "confirm_changes"}})
	}
	evs = append(evs, afSnapshot(in, types.Message{ID: "af-" + last.ID, Role: types.RoleAssistant, ToolCalls: calls}))
	evs = append(evs, run.interrupted(map[string]any{"id": id, "reason": "tool_call", "toolCallId": id,
		"message": "Approve running " + demo.SearchTool + "?",
		"responseSchema": map[string]any{"type": "object", "required": []string{"accepted"}, "additionalProperties": false,
			"properties": map[string]any{
				"accepted": map[string]any{"type": "boolean", "description": "Whether the requested tool call is approved."},
				"query":    map[string]any{"type": "string", "description": "Optional edited value for the 'query' tool argument."},
			}}}))
	sseEvents(w, evs...)
}

// checkResume applies _canonical_approval_resume_messages: an error code
// and message, or the decisions of a valid resume (interruptId →
// accepted), nil when the run resumes nothing.
func (a *agentFrameworkAgent) checkResume(in *types.RunAgentInput, pending map[string]types.ToolCall) (code, msg string, answered map[string]bool) {
	if len(pending) == 0 {
		for _, e := range in.Resume {
			p, _ := e.Payload.(map[string]any)
			_, accepted := p["accepted"]
			_, approved := p["approved"]
			if e.Status == types.ResumeStatusCancelled || accepted || approved {
				return "APPROVAL_RESUME_NOT_FOUND", fmt.Sprintf("No pending approval interrupt found for resume interruptId '%s'.", e.InterruptID), nil
			}
		}
		return "", "", nil
	}
	if in.Resume == nil {
		return "APPROVAL_RESUME_REQUIRED", "Pending interrupts require a resume entry for every interruptId.", nil
	}
	seen := map[string]bool{}
	for _, e := range in.Resume {
		if _, ok := pending[e.InterruptID]; !ok {
			return "APPROVAL_RESUME_NOT_FOUND", fmt.Sprintf("No pending interrupt found for resume interruptId '%s'.", e.InterruptID), nil
		}
		seen[e.InterruptID] = true
	}
	for id := range pending {
		if !seen[id] {
			return "APPROVAL_RESUME_MISSING_INTERRUPT", fmt.Sprintf("Resume omitted pending interruptId '%s'.", id), nil
		}
	}
	for _, e := range in.Resume {
		if e.Status == types.ResumeStatusCancelled {
			for _, c := range in.Resume {
				if c.Status == types.ResumeStatusCancelled {
					delete(pending, c.InterruptID)
				}
			}
			return "APPROVAL_RESUME_CANCELLED", fmt.Sprintf("Approval resume for interruptId '%s' was cancelled.", e.InterruptID), nil
		}
	}
	answered = map[string]bool{}
	for _, e := range in.Resume {
		p, ok := e.Payload.(map[string]any)
		if !ok {
			return "APPROVAL_RESUME_INVALID", fmt.Sprintf("Approval resume for interruptId '%s' must include an object payload.", e.InterruptID), nil
		}
		v, ok := p["accepted"]
		if !ok {
			v = p["approved"]
		}
		accepted, ok := v.(bool)
		if !ok {
			return "APPROVAL_RESUME_INVALID", fmt.Sprintf("Approval resume for interruptId '%s' must include a boolean accepted value.", e.InterruptID), nil
		}
		var args map[string]any
		_ = json.Unmarshal([]byte(pending[e.InterruptID].Function.Arguments), &args)
		for k := range p {
			if _, arg := args[k]; !arg && k != "accepted" && k != "approved" {
				return "APPROVAL_RESUME_INVALID", fmt.Sprintf("Approval resume for interruptId '%s' includes unsupported edited arguments.", e.InterruptID), nil
			}
		}
		answered[e.InterruptID] = accepted
	}
	return "", "", answered
}

// resumed runs the answered calls (consumed from the pending approvals).
func (a *agentFrameworkAgent) resumed(run runOf, answered map[string]bool) []string {
	pending := a.pending[run.in.ThreadID]
	evs := []string{run.started()}
	reply := "Not searched."
	var own []types.Message
	for id, accepted := range answered {
		call := pending[id]
		delete(pending, id)
		result := "Error: Tool call invocation was rejected by user."
		if accepted {
			result = demo.SearchResult(queryOf(call))
			reply = demo.SearchAnswer(result)
		}
		evs = append(evs, toolCallResult("af-result-"+id, id, result))
		own = append(own, types.Message{ID: "af-result-" + id, Role: types.RoleTool, ToolCallID: id, Content: result})
	}
	own = append(own, types.Message{ID: "af-answer-" + run.in.RunID, Role: types.RoleAssistant, Content: reply})
	return concat(evs, textMessage("af-answer-"+run.in.RunID, reply), []string{afSnapshot(run.in, own...), run.finished()})
}

// afSnapshot is the MESSAGES_SNAPSHOT Agent Framework ends a run with when
// it has tool calls, results or text (_agent_run.py _build_messages_snapshot):
// the run's input messages, then its own. (The real one also holds, after
// a resume, the approval response it synthesizes from the resume entry;
// it is left out here.)
func afSnapshot(in *types.RunAgentInput, own ...types.Message) string {
	msgs := append(in.Messages[:len(in.Messages):len(in.Messages)], own...)
	b, _ := json.Marshal(msgs)
	return `{"type":"MESSAGES_SNAPSHOT","messages":` + string(b) + `}`
}
