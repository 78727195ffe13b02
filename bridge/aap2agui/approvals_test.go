package aap2agui_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/translate"
)

// approvalTurn is what an AAP turn came to: its stop reason and all the
// text the agent said in it.
type approvalTurn struct {
	stop aap.StopReason
	text string
}

// say sends a turn in mode and reads its answer, whatever the mode.
func (e *env) say(t *testing.T, id string, mode aap.StreamMode, msgs ...aap.Message) (approvalTurn, error) {
	t.Helper()
	req := aap.PostSessionTurnRequest{Stream: mode, Messages: msgs}
	var evs []aap.Event
	if mode == aap.StreamNone {
		resp, err := e.Client.Turn(bridgetest.Context(t), id, &req)
		if err != nil {
			return approvalTurn{}, err
		}
		evs = translate.EventsFromResponse(resp)
	} else {
		var err error
		if evs, err = e.stream(t, id, req); err != nil {
			return approvalTurn{}, err
		}
	}
	var out approvalTurn
	var text strings.Builder
	for _, ev := range evs {
		switch ev := ev.(type) {
		case *aap.TextDelta:
			text.WriteString(ev.Delta)
		case *aap.Text:
			text.WriteString(ev.Text)
		case *aap.TurnStop:
			out.stop = ev.StopReason
		}
	}
	out.text = text.String()
	return out, nil
}

// askSearch opens an approval: "search x" makes the agent call web_search,
// which waits for a tool_permission; it returns the call's id.
func (e *env) askSearch(t *testing.T, id string, mode aap.StreamMode) string {
	t.Helper()
	got, err := e.say(t, id, mode, aap.UserText("search x"))
	require.NoError(t, err)
	require.Equal(t, aap.StopToolUse, got.stop)
	calls := translate.OpenCalls(slices.Values(e.historyMessages(t, id)))
	require.Len(t, calls, 1, "one call waits")
	require.Equal(t, demo.SearchTool, calls[0].Name)
	return calls[0].ToolCallID
}

// takesTurns checks the session goes on: a message is answered, and the
// history stays valid.
func (e *env) takesTurns(t *testing.T, id string, mode aap.StreamMode) {
	t.Helper()
	got, err := e.say(t, id, mode, aap.UserText("and now?"))
	require.NoError(t, err)
	assert.Equal(t, approvalTurn{stop: aap.StopEndTurn, text: "You said: and now?"}, got, "the session takes the next turn")
	assert.Empty(t, historyProblems(e.historyMessages(t, id)))
}

// resultOf is the content of call's result in the session's history.
func (e *env) resultOf(t *testing.T, id, call string) string {
	t.Helper()
	for _, m := range e.historyMessages(t, id) {
		if tm, ok := m.(*aap.ToolMessage); ok && tm.ToolCallID == call {
			return tm.Content.Text
		}
	}
	return ""
}

// TestApprovalsAcrossFrameworks: over an open approval (web_search waiting
// for a tool_permission), with the demo agent and the mirrors of
// pydantic-ai and Microsoft Agent Framework, in every stream mode and with
// both --cancel-run settings, the user moves on with a new message, denies
// with and without a reason, grants, or answers late; the agent gets one
// answer per call, in the shape its interrupt asks for, and the session
// takes turns afterwards in every case.
func TestApprovalsAcrossFrameworks(t *testing.T) {
	for _, ag := range approvalAgents() {
		for _, cancel := range []aap2agui.CancelRun{aap2agui.CancelRunAuto, aap2agui.CancelRunSeparate} {
			for _, mode := range []aap.StreamMode{aap.StreamDelta, aap.StreamMessage, aap.StreamNone} {
				t.Run(ag.name+"/"+string(cancel)+"/"+string(mode), func(t *testing.T) {
					t.Parallel()
					e := newEnv(t, serve(t, ag.handler(t)), func(c *aap2agui.Config) { c.CancelRun = cancel })
					session := aap.PostSessionsRequest{Agent: aap.AgentConfig{Tools: []aap.ServerToolRef{{Name: demo.SearchTool}}}}

					t.Run("a new message over the approval", func(t *testing.T) {
						id := e.createSession(t, session)
						call := e.askSearch(t, id, mode)
						got, err := e.say(t, id, mode, aap.UserText("never mind"))
						require.NoError(t, err)
						assert.Equal(t, aap.StopEndTurn, got.stop)
						assert.True(t, strings.HasSuffix(got.text, "You said: never mind"), "the message answered: %q", got.text)
						assert.NotEmpty(t, e.resultOf(t, id, call), "the call closed in history")
						e.takesTurns(t, id, mode)

						// A late answer to the call the user moved on from.
						_, err = e.say(t, id, mode, &aap.ToolPermissionMessage{ToolCallID: call, Granted: true})
						requireHTTPError(t, err, http.StatusBadRequest, "invalid_turn")
						e.takesTurns(t, id, mode)
					})
					t.Run("a denial with a reason", func(t *testing.T) {
						id := e.createSession(t, session)
						call := e.askSearch(t, id, mode)
						got, err := e.say(t, id, mode, &aap.ToolPermissionMessage{ToolCallID: call, Reason: "not now"})
						require.NoError(t, err)
						assert.Equal(t, aap.StopEndTurn, got.stop, "the denial answered: %q", got.text)
						res := e.resultOf(t, id, call)
						assert.NotEmpty(t, res)
						if ag.reasonSent {
							assert.Contains(t, res+got.text, "not now", "the agent read the reason")
						}
						e.takesTurns(t, id, mode)
					})
					t.Run("a denial without a reason", func(t *testing.T) {
						id := e.createSession(t, session)
						call := e.askSearch(t, id, mode)
						got, err := e.say(t, id, mode, &aap.ToolPermissionMessage{ToolCallID: call})
						require.NoError(t, err)
						assert.Equal(t, aap.StopEndTurn, got.stop, "the denial answered: %q", got.text)
						assert.NotEmpty(t, e.resultOf(t, id, call))
						e.takesTurns(t, id, mode)
					})
					t.Run("a tool result instead of the permission", func(t *testing.T) {
						// Microsoft Agent Framework names its approval
						// interrupt with the call's id; a result under that
						// id, with the interrupt's own answer and an edited
						// argument in it, is still no permission.
						id := e.createSession(t, session)
						call := e.askSearch(t, id, mode)
						before := e.sessionState(t, id)
						_, err := e.say(t, id, mode, &aap.ToolMessage{ToolCallID: call,
							Content: aap.TextContent(`{"accepted":true,"approved":true,"query":"production secrets"}`)})
						requireHTTPError(t, err, http.StatusBadRequest, "invalid_turn")
						assert.ErrorContains(t, err, "waiting for a tool_permission, not a result")
						assert.Equal(t, before, e.sessionState(t, id), "nothing stored")
						got, err := e.say(t, id, mode, &aap.ToolPermissionMessage{ToolCallID: call, Granted: true})
						require.NoError(t, err)
						assert.Equal(t, approvalTurn{stop: aap.StopEndTurn, text: demo.SearchAnswer(demo.SearchResult("x"))}, got, "the call ran with its own arguments")
					})
					t.Run("a grant", func(t *testing.T) {
						id := e.createSession(t, session)
						call := e.askSearch(t, id, mode)
						got, err := e.say(t, id, mode, &aap.ToolPermissionMessage{ToolCallID: call, Granted: true})
						require.NoError(t, err)
						assert.Equal(t, approvalTurn{stop: aap.StopEndTurn, text: demo.SearchAnswer(demo.SearchResult("x"))}, got)
						assert.Equal(t, demo.SearchResult("x"), e.resultOf(t, id, call))
						e.takesTurns(t, id, mode)
					})
				})
			}
		}
	}
}

// TestApprovalAnswerFollowsResponseSchema: Microsoft Agent Framework's
// interrupt names its boolean "accepted" and allows no property but the
// call's arguments: a denial with a reason goes as {"accepted":false}
// (with the reason it answers APPROVAL_RESUME_INVALID), the reason kept in
// the stored result when the agent writes none; pydantic-ai's takes
// {"approved":false,"reason"}.
func TestApprovalAnswerFollowsResponseSchema(t *testing.T) {
	for _, tc := range []struct {
		name    string
		agent   http.Handler
		payload string
	}{
		{"agent-framework", newAgentFrameworkAgent(), `{"accepted":false}`},
		{"pydantic-ai", pydanticAIAgent{}, `{"approved":false,"reason":"not now"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var resume json.RawMessage
			up := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				r2, body := teeBody(t, r)
				var in struct {
					Resume json.RawMessage `json:"resume"`
				}
				_ = json.Unmarshal(body, &in)
				if len(in.Resume) > 0 {
					resume = in.Resume
				}
				tc.agent.ServeHTTP(w, r2)
			}))
			e := newEnv(t, up)
			id := e.createSession(t, aap.PostSessionsRequest{Agent: aap.AgentConfig{Tools: []aap.ServerToolRef{{Name: demo.SearchTool}}}})
			call := e.askSearch(t, id, aap.StreamNone)
			got, err := e.say(t, id, aap.StreamNone, &aap.ToolPermissionMessage{ToolCallID: call, Reason: "not now"})
			require.NoError(t, err)
			assert.Equal(t, aap.StopEndTurn, got.stop)
			var entries []struct {
				Payload json.RawMessage `json:"payload"`
			}
			require.NoError(t, json.Unmarshal(resume, &entries))
			require.Len(t, entries, 1)
			assert.JSONEq(t, tc.payload, string(entries[0].Payload))
		})
	}
}

// TestUnanswerableResponseSchema: an interrupt whose responseSchema no
// tool_permission satisfies (it requires a property an approval does not
// give) refuses the turn with a 400 naming the interrupt, before any run;
// the interrupt stays open and a new message moves on from it.
func TestUnanswerableResponseSchema(t *testing.T) {
	up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
		if n == 0 {
			sseEvents(w, concat([]string{runStarted(in)}, toolCallEvents("c1", demo.SearchTool, "m0", `{"query":"x"}`),
				[]string{interruptFinish(in, `[{"id":"c1","toolCallId":"c1","reason":"tool_call","responseSchema":{"type":"object","properties":{"accepted":{"type":"boolean"},"steps":{"type":"array"}},"required":["accepted","steps"]}}]`)})...)
			return
		}
		sseEvents(w, textRun(in, "m1", "You said: "+lastText(in.Messages[len(in.Messages)-1]))...)
	})
	e := newEnv(t, up.URL)
	id := e.createSession(t, aap.PostSessionsRequest{Agent: aap.AgentConfig{Tools: []aap.ServerToolRef{{Name: demo.SearchTool}}}})
	call := e.askSearch(t, id, aap.StreamDelta)
	_, err := e.say(t, id, aap.StreamDelta, &aap.ToolPermissionMessage{ToolCallID: call, Granted: true})
	requireHTTPError(t, err, http.StatusBadRequest, "invalid_turn")
	assert.ErrorContains(t, err, `interrupt "c1": its responseSchema cannot be answered with a tool_permission: it requires "steps"`)
	assert.Equal(t, 1, up.count(), "no run sent")
	e.takesTurns(t, id, aap.StreamDelta)
}

// TestAgentLostItsApproval: Microsoft Agent Framework keeps its pending
// approvals in memory; restarted, it answers a resume for one
// APPROVAL_RESUME_NOT_FOUND. The tool_permission's turn ends with an error
// stop and the approval stays open on the session; a new message then
// moves on (the cancelled resume refused too, the message follows on its
// own with the call closed in its history), and the session goes on.
func TestAgentLostItsApproval(t *testing.T) {
	for _, cancel := range []aap2agui.CancelRun{aap2agui.CancelRunAuto, aap2agui.CancelRunSeparate} {
		t.Run(string(cancel), func(t *testing.T) {
			af := newAgentFrameworkAgent()
			e := newEnv(t, serve(t, af), func(c *aap2agui.Config) { c.CancelRun = cancel })
			id := e.createSession(t, aap.PostSessionsRequest{Agent: aap.AgentConfig{Tools: []aap.ServerToolRef{{Name: demo.SearchTool}}}})
			call := e.askSearch(t, id, aap.StreamDelta)
			af.forget()
			got, err := e.say(t, id, aap.StreamDelta, &aap.ToolPermissionMessage{ToolCallID: call, Granted: true})
			require.NoError(t, err)
			assert.Equal(t, aap.StopError, got.stop)

			got, err = e.say(t, id, aap.StreamDelta, aap.UserText("never mind"))
			require.NoError(t, err)
			assert.Equal(t, approvalTurn{stop: aap.StopEndTurn, text: "You said: never mind"}, got)
			assert.Equal(t, translate.UnansweredCall, e.resultOf(t, id, call))
			e.takesTurns(t, id, aap.StreamDelta)
		})
	}
}

// teeBody reads r's body and puts it back, for a handler to read again.
func teeBody(t *testing.T, r *http.Request) (*http.Request, []byte) {
	t.Helper()
	body, err := io.ReadAll(r.Body)
	require.NoError(t, err)
	r.Body = io.NopCloser(bytes.NewReader(body))
	return r, body
}

// TestAgentFrameworkConfirmChanges pins what the README says of Microsoft
// Agent Framework's default endpoint (require_confirmation=True): beside
// the call waiting for approval the application gets its synthetic
// confirm_changes call, not mapped, which it would have to answer in the
// same turn; served with require_confirmation=False (the other tests), the
// approval alone waits.
func TestAgentFrameworkConfirmChanges(t *testing.T) {
	af := newAgentFrameworkAgent()
	af.confirmChanges = true
	e := newEnv(t, serve(t, af))
	id := e.createSession(t, aap.PostSessionsRequest{Agent: aap.AgentConfig{Tools: []aap.ServerToolRef{{Name: demo.SearchTool}}}})
	got, err := e.say(t, id, aap.StreamMessage, aap.UserText("search x"))
	require.NoError(t, err)
	assert.Equal(t, aap.StopToolUse, got.stop)
	var names []string
	for _, c := range translate.OpenCalls(slices.Values(e.historyMessages(t, id))) {
		names = append(names, c.Name)
	}
	assert.Equal(t, []string{demo.SearchTool, "confirm_changes"}, names)
}
