package aap2agui_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/demo"
)

// sessionState is everything stored about a session, as JSON: what the
// API shows and what the store keeps (AG-UI ids, state, interrupts).
func (e *env) sessionState(t *testing.T, id string) string {
	t.Helper()
	ctx := bridgetest.Context(t)
	sess, err := e.Store.GetSession(ctx, "", id)
	require.NoError(t, err)
	hist, err := e.Store.History(ctx, id)
	require.NoError(t, err)
	api := doRaw(t, http.MethodGet, e.URL+"/sessions/"+id, "", "")
	require.Equal(t, http.StatusOK, api.Status)
	b, err := json.Marshal(map[string]any{"session": sess, "history": hist, "api": json.RawMessage(api.Body)})
	require.NoError(t, err)
	return string(b)
}

// TestBadInput checks that every kind of bad request gets a 4xx naming the
// problem, reaches no agent, and changes nothing stored.
func TestBadInput(t *testing.T) {
	up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
		last := in.Messages[len(in.Messages)-1]
		switch last.Content {
		case "two calls":
			sseEvents(w, concat([]string{runStarted(in)},
				toolCallEvents("call_a", "get_weather", "m", `{"location":"Rome"}`),
				toolCallEvents("call_b", "get_weather", "m", `{"location":"Oslo"}`),
				[]string{runFinished(in)})...)
		case "perm":
			sseEvents(w, concat([]string{runStarted(in)},
				toolCallEvents("call_p", "web_search", "m", `{"query":"q"}`),
				[]string{fmt.Sprintf(`{"type":"RUN_FINISHED","threadId":%q,"runId":%q,"outcome":{"type":"interrupt","interrupts":[{"id":"perm-call_p","reason":"tool_call","toolCallId":"call_p"}]}}`, in.ThreadID, in.RunID)})...)
		default:
			sseEvents(w, textRun(in, fmt.Sprint("m", n), "ok")...)
		}
	})
	e := newEnv(t, up.URL, func(c *aap2agui.Config) { c.MaxBody = 4096 })
	setup := aap.PostSessionsRequest{
		Agent: aap.AgentConfig{Tools: []aap.ServerToolRef{{Name: demo.SearchTool}}, Options: map[string]string{"language": "French"}},
		Tools: []aap.ToolSpec{weatherSpec},
	}
	start := func(text string) string {
		id := e.createSession(t, setup)
		_, err := e.Client.Turn(bridgetest.Context(t), id, &aap.PostSessionTurnRequest{Messages: []aap.Message{aap.UserText(text)}})
		require.NoError(t, err)
		return id
	}
	idle, twoCalls, perm := start("hello"), start("two calls"), start("perm")

	user := func(content string) string { return `{"role":"user","content":` + content + `}` }
	turn := func(msgs ...string) string { return `{"messages":[` + strings.Join(msgs, ",") + `]}` }
	result := func(id string) string { return `{"role":"tool","toolCallId":"` + id + `","content":"done"}` }
	grant := func(id string) string { return `{"role":"tool_permission","toolCallId":"` + id + `","granted":true}` }

	tests := []struct {
		name       string
		session    string
		body       string
		wantStatus int
		wantCode   string
	}{
		{"malformed JSON", idle, `{"messages":[`, 400, "invalid_json"},
		{"empty body", idle, ``, 400, "invalid_body"},
		{"blank body", idle, " \n\t", 400, "invalid_body"},
		{"not an object", idle, `[` + user(`"hi"`) + `]`, 400, "invalid_request"},
		{"null", idle, `null`, 400, "invalid_request"},
		{"no messages", idle, `{}`, 400, "invalid_request"},
		{"empty messages", idle, `{"messages":[]}`, 400, "invalid_request"},
		{"messages of the wrong type", idle, `{"messages":"hi"}`, 400, "invalid_request"},
		{"content of the wrong type", idle, turn(user(`5`)), 400, "invalid_request"},
		{"stream of the wrong type", idle, `{"stream":1,"messages":[` + user(`"hi"`) + `]}`, 400, "invalid_request"},
		{"unknown stream mode", idle, `{"stream":"fast","messages":[` + user(`"hi"`) + `]}`, 400, "invalid_request"},
		{"unknown role", idle, turn(`{"role":"robot","content":"hi"}`), 400, "invalid_request"},
		{"no role", idle, turn(`{"content":"hi"}`), 400, "invalid_request"},
		{"assistant message in a turn", idle, turn(`{"role":"assistant","content":"hi"}`), 400, "invalid_request"},
		{"two user messages", idle, turn(user(`"a"`), user(`"b"`)), 400, "invalid_request"},
		{"oversized body", idle, turn(user(`"` + strings.Repeat("x", 5000) + `"`)), 413, "body_too_large"},
		{"a result for an unknown toolCallId", idle, turn(result("call_nope")), 400, "invalid_turn"},
		{"a permission for a call that is not waiting", idle, turn(grant("call_nope")), 400, "invalid_turn"},
		{"undeclared option", idle, `{"agent":{"options":{"temperature":"1"}},"messages":[` + user(`"hi"`) + `]}`, 400, "invalid_request"},
		{"select value not allowed", idle, `{"agent":{"options":{"model":"huge"}},"messages":[` + user(`"hi"`) + `]}`, 400, "invalid_request"},
		{"unknown server tool", idle, `{"agent":{"tools":[{"name":"rm_rf"}]},"messages":[` + user(`"hi"`) + `]}`, 400, "invalid_request"},
		{"another agent name", idle, `{"agent":{"name":"other"},"messages":[` + user(`"hi"`) + `]}`, 400, "invalid_request"},
		{
			"client tool named like a server tool", idle,
			`{"tools":[{"name":"web_search","description":"d","parameters":{"type":"object"}}],"messages":[` + user(`"hi"`) + `]}`, 400, "invalid_request",
		},
		{"a partial answer to two calls", twoCalls, turn(result("call_a")), 400, "invalid_turn"},
		{"a user message mixed with a tool result", twoCalls, turn(result("call_a"), result("call_b"), user(`"hi"`)), 400, "invalid_request"},
		{"a tool result before a user message", twoCalls, turn(result("call_a"), user(`"hi"`)), 400, "invalid_request"},
		{"the same call answered twice", twoCalls, turn(result("call_a"), result("call_a"), result("call_b")), 400, "invalid_request"},
		{"a permission for a client tool call", twoCalls, turn(grant("call_a"), result("call_b")), 400, "invalid_turn"},
		{"a result for a call waiting for permission", perm, turn(result("call_p")), 400, "invalid_turn"},
		{"a permission for another call", perm, turn(grant("call_a")), 400, "invalid_turn"},
		{"a permission and a result for an unknown call", perm, turn(grant("call_p"), result("call_x")), 400, "invalid_turn"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, runs := e.sessionState(t, tt.session), up.count()
			r := doRaw(t, http.MethodPost, e.URL+"/sessions/"+tt.session+"/turns", "", tt.body)
			requireJSONError(t, r, tt.wantStatus, tt.wantCode)
			assert.Equal(t, before, e.sessionState(t, tt.session), "nothing stored changed")
			assert.Equal(t, runs, up.count(), "the agent was not called")
		})
	}

	// The sessions still work: the rejected requests left nothing behind
	// (no half-taken turn lock either).
	t.Run("the sessions still take valid turns", func(t *testing.T) {
		for _, tc := range []struct {
			id   string
			msgs []aap.Message
		}{
			{idle, []aap.Message{aap.UserText("again")}},
			{twoCalls, []aap.Message{
				&aap.ToolMessage{ToolCallID: "call_a", Content: aap.TextContent("sunny")},
				&aap.ToolMessage{ToolCallID: "call_b", Content: aap.TextContent("snow")},
			}},
			{perm, []aap.Message{&aap.ToolPermissionMessage{ToolCallID: "call_p", Granted: true}}},
		} {
			_, err := e.Client.Turn(bridgetest.Context(t), tc.id, &aap.PostSessionTurnRequest{Messages: tc.msgs})
			require.NoError(t, err)
		}
	})
}

// TestBadCreate checks that rejected POST /sessions requests create
// nothing.
func TestBadCreate(t *testing.T) {
	e := newEnv(t, demoAgent(t), func(c *aap2agui.Config) { c.MaxBody = 1024 })
	tests := []struct {
		name       string
		body       string
		wantStatus int
		wantCode   string
	}{
		{"malformed JSON", `{"agent":{"name":"agent"}`, 400, "invalid_json"},
		{"empty body", ``, 400, "invalid_body"},
		{"agent of the wrong type", `{"agent":"agent"}`, 400, "invalid_request"},
		{"tools of the wrong type", `{"agent":{"name":"agent"},"tools":{}}`, 400, "invalid_request"},
		{"a seed message with an unknown role", `{"agent":{"name":"agent"},"messages":[{"role":"robot","content":"x"}]}`, 400, "invalid_request"},
		{"a tool without parameters", `{"agent":{"name":"agent"},"tools":[{"name":"t","description":"d"}]}`, 400, "invalid_request"},
		{"oversized body", `{"agent":{"name":"agent"},"messages":[{"role":"system","content":"` + strings.Repeat("x", 2000) + `"}]}`, 413, "body_too_large"},
		{"a seed tool result for an unknown call", `{"agent":{"name":"agent"},"messages":[{"role":"user","content":"hi"},` + seedCall("c1") + `,{"role":"tool","toolCallId":"c9","content":"x"}]}`, 400, "invalid_request"},
		{"a seed tool result before its call", `{"agent":{"name":"agent"},"messages":[{"role":"user","content":"hi"},{"role":"tool","toolCallId":"c1","content":"x"},` + seedCall("c1") + `]}`, 400, "invalid_request"},
		{"a seed with duplicate toolCallIds", `{"agent":{"name":"agent"},"messages":[{"role":"user","content":"hi"},` + seedCall("c1") + `,` + seedCall("c1") + `]}`, 400, "invalid_request"},
		{"a seed message making two calls with one id", `{"agent":{"name":"agent"},"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","toolCallId":"c1","name":"get_weather","input":{}},{"type":"tool_use","toolCallId":"c1","name":"get_weather","input":{}}]}]}`, 400, "invalid_request"},
		{"a seed answering a call twice", `{"agent":{"name":"agent"},"messages":[{"role":"user","content":"hi"},` + seedCall("c1") + `,{"role":"tool","toolCallId":"c1","content":"x"},{"role":"tool","toolCallId":"c1","content":"y"}]}`, 400, "invalid_request"},
		{"a seed data: image that does not decode", `{"agent":{"name":"agent"},"messages":[{"role":"user","content":[{"type":"image","url":"data:image/png;base64,@@not base64@@"}]}]}`, 400, "invalid_request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			requireJSONError(t, doRaw(t, http.MethodPost, e.URL+"/sessions", "", tt.body), tt.wantStatus, tt.wantCode)
		})
	}
	page, err := e.Client.ListSessions(bridgetest.Context(t), "")
	require.NoError(t, err)
	assert.Empty(t, page.Sessions)
}

// seedCall is an assistant seed message calling get_weather with id.
func seedCall(id string) string {
	return `{"role":"assistant","content":[{"type":"tool_use","toolCallId":"` + id + `","name":"get_weather","input":{}}]}`
}
