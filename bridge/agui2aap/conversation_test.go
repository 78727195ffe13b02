package agui2aap_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/agui2aap"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/internal/ident"
)

// Each run resends the whole history, with the ids the previous runs'
// events gave the agent's messages; the AAP session must see each user
// message once, and two identical messages with different ids are two
// turns.
func TestTextOverSeveralRuns(t *testing.T) {
	e := newEnv(t)
	c := e.conv("text")
	says := []string{"hello", "how are you", "yes", "yes"}
	for i, s := range says {
		c.say(s)
		r := c.run(t)
		assert.Equal(t, []string{demo.EchoText(s)}, r.Text, "run %d answers only its own message", i)
		assert.Equal(t, "success", r.outcome())
		assert.Len(t, c.Messages, 2*(i+1), "the client's history after run %d", i)
	}
	id := e.onlySession(t)
	hist := e.history(t, id)
	assert.Equal(t, says, userTexts(hist), "each user message reached the session once, in order")
	assert.Equal(t, []string{"user", "assistant", "user", "assistant", "user", "assistant", "user", "assistant"}, roles(hist))
	th := e.thread(t, "text")
	assert.Equal(t, id, th.SessionID)
	assert.Len(t, th.Delivered, 8, "the thread knows every message the session has seen")
}

// A reasoning run: REASONING_* events carry the thinking, then the answer.
// The reasoning message the client sends back with its history is not a
// new message.
func TestThinking(t *testing.T) {
	e := newEnv(t)
	c := e.conv("think")
	c.say("please think")
	r := c.run(t)
	assert.Equal(t, []string{demo.ThinkingText("please think")}, r.Reasoning)
	assert.Equal(t, []string{demo.DoneThinking}, r.Text)
	typ := r.types()
	assert.Equal(t, []string{"RUN_STARTED", "REASONING_START", "REASONING_MESSAGE_START"}, typ[:3])
	assert.Contains(t, typ, "REASONING_MESSAGE_END")
	assert.Contains(t, typ, "REASONING_END")
	require.Equal(t, types.RoleReasoning, c.Messages[1].Role, "the client keeps a reasoning message")

	c.say("and now?")
	r = c.run(t)
	assert.Equal(t, []string{demo.EchoText("and now?")}, r.Text)
	hist := e.history(t, e.onlySession(t))
	assert.Equal(t, []string{"please think", "and now?"}, userTexts(hist))
}

// A frontend tool: the run ends with the call and RUN_FINISHED without an
// outcome; the next run carries the tool message and gets the answer.
func TestFrontendToolRoundTrip(t *testing.T) {
	e := newEnv(t)
	c := e.conv("weather")
	c.Tools = []types.Tool{weatherTool}
	c.say("what is the weather in Paris?")
	r := c.run(t)
	require.Len(t, r.Calls, 1)
	call := r.Calls[0]
	assert.Equal(t, demo.WeatherTool, call.Name)
	assert.JSONEq(t, `{"location":"Paris"}`, call.Args)
	assert.Empty(t, r.Results, "a frontend tool has no result from the agent")
	require.NotNil(t, r.Finished)
	assert.Nil(t, r.Finished.Outcome, "RUN_FINISHED without an outcome: the client has tools to run")
	assert.Equal(t, []string{call.ID}, e.thread(t, "weather").ClientCalls)

	c.answer(call.ID, "Sunny")
	r = c.run(t)
	assert.Equal(t, []string{demo.WeatherText("Paris", "Sunny")}, r.Text)
	assert.Equal(t, "success", r.outcome())

	hist := e.history(t, e.onlySession(t))
	assert.Equal(t, []string{"what is the weather in Paris?"}, userTexts(hist), "the tool run did not resend the user message")
	assert.Equal(t, map[string][]string{call.ID: {"Sunny"}}, toolMessages(hist))
	assert.Empty(t, e.thread(t, "weather").ClientCalls)
}

// An untrusted server tool under the interrupt policy: the run ends with
// one interrupt per call, and a resume answers it, approved or denied.
// CopilotKit also appends a tool message for the interrupted call (its
// content the JSON payload) and resumes with the interrupted run's id: the
// AAP session must get the permission only, never a second tool result.
func TestServerToolInterrupt(t *testing.T) {
	cases := []struct {
		name       string
		approved   bool
		reason     string
		copilotKit bool
	}{
		{name: "approved", approved: true},
		{name: "denied with a reason", reason: "not today"},
		{name: "approved, CopilotKit style", approved: true, copilotKit: true},
		{name: "denied, CopilotKit style", reason: "no thanks", copilotKit: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			c := e.conv("search")
			c.say("search cats")
			r := c.runAs(t, "run-interrupted")
			require.Equal(t, "interrupt", r.outcome())
			require.Len(t, r.Calls, 1)
			call := r.Calls[0]
			assert.Equal(t, demo.SearchTool, call.Name)
			assert.JSONEq(t, `{"query":"cats"}`, call.Args)
			require.Len(t, r.interrupts(), 1)
			it := r.interrupts()[0]
			assert.Equal(t, "tool_call", it.Reason)
			assert.Equal(t, call.ID, it.ToolCallID)
			assert.NotEmpty(t, it.Message)
			assert.Equal(t, []any{"approved"}, it.ResponseSchema["required"])
			assert.Contains(t, it.ResponseSchema["properties"], "approved")
			assert.Contains(t, it.ResponseSchema["properties"], "reason")

			entry := approve(it.ID)
			if !tc.approved {
				entry = deny(it.ID, tc.reason)
			}
			runID := ""
			if tc.copilotKit {
				payload, err := json.Marshal(entry.Payload)
				require.NoError(t, err)
				c.answer(call.ID, string(payload))
				runID = "run-interrupted"
			}
			r = c.runAs(t, runID, entry)
			assert.Equal(t, "success", r.outcome())
			want := demo.SearchResult("cats")
			answer := demo.SearchAnswer(want)
			if !tc.approved {
				want, answer = demo.DeniedResult(tc.reason), demo.DeniedText(tc.reason)
			}
			assert.Equal(t, want, r.Results[call.ID], "TOOL_CALL_RESULT")
			assert.Equal(t, answer, r.lastText())
			assert.Empty(t, e.thread(t, "search").Interrupts, "nothing left open")

			hist := e.history(t, e.onlySession(t))
			assert.Equal(t, map[string][]string{call.ID: {want}}, toolMessages(hist), "one tool result upstream, the agent's own")
			assert.Equal(t, []string{"search cats"}, userTexts(hist))

			if tc.copilotKit {
				// CopilotKit keeps its own tool message for the call and
				// drops the TOOL_CALL_RESULT's: the history still extends
				// the session's (seen in a real browser, .ci/browser-test.sh).
				kept := c.Messages[:0]
				for _, m := range c.Messages {
					if m.ID != ident.ToolResultMessage(call.ID) {
						kept = append(kept, m)
					}
				}
				c.Messages = kept
			}
			c.say("thanks")
			r = c.run(t)
			assert.Equal(t, []string{demo.EchoText("thanks")}, r.Text, "the thread goes on")
			assert.Len(t, e.sessions(t), 1, "no new session")
		})
	}
}

// Permission policies for clients that cannot resume, and a trusted tool:
// the search finishes in one run.
func TestServerToolWithoutInterrupt(t *testing.T) {
	policyReason := "denied by the bridge's permission policy"
	cases := []struct {
		name      string
		configure func(*agui2aap.Config)
		result    string
		answer    string
	}{
		{
			name:      "policy grant",
			configure: func(c *agui2aap.Config) { c.Policy = agui2aap.PolicyGrant },
			result:    demo.SearchResult("cats"),
			answer:    demo.SearchAnswer(demo.SearchResult("cats")),
		},
		{
			name:      "policy deny",
			configure: func(c *agui2aap.Config) { c.Policy = agui2aap.PolicyDeny },
			result:    demo.DeniedResult(policyReason),
			answer:    demo.DeniedText(policyReason),
		},
		{
			name: "trusted server tool",
			configure: func(c *agui2aap.Config) {
				c.ServerTools = []agui2aap.ServerTool{{Name: demo.SearchTool, Trust: true}}
			},
			result: demo.SearchResult("cats"),
			answer: demo.SearchAnswer(demo.SearchResult("cats")),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.configure)
			c := e.conv("search")
			c.say("search cats")
			r := c.run(t)
			assert.Equal(t, "success", r.outcome())
			require.Len(t, r.Calls, 1)
			assert.Equal(t, demo.SearchTool, r.Calls[0].Name)
			assert.Equal(t, tc.result, r.Results[r.Calls[0].ID])
			assert.Equal(t, tc.answer, r.lastText())
			assert.Equal(t, 1, strings.Count(strings.Join(r.types(), " "), "RUN_STARTED"))

			th := e.thread(t, "search")
			assert.Empty(t, th.Interrupts)
			assert.Empty(t, th.ClientCalls)
			c.say("thanks")
			r = c.run(t)
			assert.Equal(t, []string{demo.EchoText("thanks")}, r.Text)
			assert.Len(t, e.sessions(t), 1, "the run's own messages were recognised on the next run")
		})
	}
}

// A history that no longer extends what the session has seen (a
// regenerate drops the last answer; an edit changes an earlier message)
// moves the thread to a new session seeded with the client's history.
func TestHistoryRewritten(t *testing.T) {
	t.Run("regenerate", func(t *testing.T) {
		e := newEnv(t)
		c := e.conv("regen")
		c.say("first")
		c.run(t)
		c.say("second")
		c.run(t)
		old := e.onlySession(t)
		c.dropLast()
		r := c.run(t)
		assert.Equal(t, []string{demo.EchoText("second")}, r.Text)
		ss := e.sessions(t)
		require.Len(t, ss, 2, "a new session")
		fresh := ss[1].SessionID
		assert.NotEqual(t, old, fresh)
		assert.Equal(t, fresh, e.thread(t, "regen").SessionID)
		hist := e.history(t, fresh)
		assert.Equal(t, []string{"first", "second"}, userTexts(hist))
		assert.Equal(t, []string{"user", "assistant", "user", "assistant"}, roles(hist))

		c.say("third")
		r = c.run(t)
		assert.Equal(t, []string{demo.EchoText("third")}, r.Text)
		assert.Len(t, e.sessions(t), 2, "the thread continues on the new session")
		assert.Equal(t, []string{"first", "second", "third"}, userTexts(e.history(t, fresh)))
	})
	t.Run("regenerate after a frontend tool result", func(t *testing.T) {
		e := newEnv(t)
		c := e.conv("regen-tool")
		c.Tools = []types.Tool{weatherTool}
		c.say("weather in Paris")
		r := c.run(t)
		callID := r.Calls[0].ID
		c.answer(callID, "Sunny")
		c.run(t)
		c.dropLast()
		r = c.run(t)
		assert.Equal(t, []string{demo.WeatherText("Paris", "Sunny")}, r.Text, "the answer to the same tool result")
		ss := e.sessions(t)
		require.Len(t, ss, 2)
		hist := e.history(t, ss[1].SessionID)
		assert.Equal(t, []string{"weather in Paris"}, userTexts(hist))
		assert.Equal(t, []string{"Sunny"}, toolMessages(hist)[callID])
	})
	t.Run("regenerate after a server tool result", func(t *testing.T) {
		e := newEnv(t)
		c := e.conv("regen-search")
		c.say("search cats")
		r := c.run(t)
		it := r.interrupts()[0]
		c.run(t, approve(it.ID))
		c.dropLast()
		in := c.input("", nil)
		resp := e.post(t, "/agents/demo", in)
		require.Equal(t, 200, resp.Status, "%s", resp.Body)
		res := summarize(resp)
		assert.Nil(t, res.Error, "a regenerate is not an error")
		assert.NotNil(t, res.Finished)
		ss := e.sessions(t)
		require.Len(t, ss, 2)
		assert.Equal(t, []string{"search cats"}, userTexts(e.history(t, ss[1].SessionID)))
	})
	t.Run("edit of an earlier message", func(t *testing.T) {
		e := newEnv(t)
		c := e.conv("edit")
		c.say("first")
		c.run(t)
		c.say("second")
		c.run(t)
		// The user edits "first": the client replaces it (new id) and
		// drops everything after it.
		c.Messages = nil
		c.say("first, edited")
		r := c.run(t)
		assert.Equal(t, []string{demo.EchoText("first, edited")}, r.Text)
		ss := e.sessions(t)
		require.Len(t, ss, 2)
		assert.Equal(t, []string{"first, edited"}, userTexts(e.history(t, ss[1].SessionID)))
		c.say("next")
		c.run(t)
		assert.Len(t, e.sessions(t), 2)
	})
	t.Run("a changed id of an earlier message", func(t *testing.T) {
		e := newEnv(t)
		c := e.conv("reid")
		c.say("first")
		c.run(t)
		c.Messages[0].ID = "renamed"
		c.say("second")
		r := c.run(t)
		assert.Equal(t, []string{demo.EchoText("second")}, r.Text)
		ss := e.sessions(t)
		require.Len(t, ss, 2)
		hist := e.history(t, ss[1].SessionID)
		assert.Equal(t, []string{"first", "second"}, userTexts(hist), "seeded with the client's history")
	})
}

// context[] is rendered into the user turn as a text block, and sent again
// only when it changes.
func TestContextRendering(t *testing.T) {
	e := newEnv(t)
	c := e.conv("ctx")
	c.Context = []types.Context{{Description: "page", Value: "/home"}}
	c.say("one")
	c.run(t)
	c.say("two")
	c.run(t)
	c.Context = []types.Context{{Description: "page", Value: "/settings"}}
	c.say("three")
	c.run(t)

	var users []*aap.UserMessage
	for _, m := range e.history(t, e.onlySession(t)) {
		if u, ok := m.(*aap.UserMessage); ok {
			users = append(users, u)
		}
	}
	require.Len(t, users, 3)
	contextOf := func(u *aap.UserMessage) string {
		if !u.Content.IsBlocks() {
			return ""
		}
		tb, ok := u.Content.Blocks[0].(*aap.TextBlock)
		if !ok || !strings.HasPrefix(tb.Text, "Context from the application:") {
			return ""
		}
		return tb.Text
	}
	assert.Equal(t, "Context from the application:\n- page: /home", contextOf(users[0]))
	require.Len(t, users[0].Content.Blocks, 2)
	assert.Equal(t, "one", users[0].Content.Blocks[1].(*aap.TextBlock).Text, "the user's own text follows")
	assert.Empty(t, contextOf(users[1]), "unchanged context is not sent again")
	assert.Equal(t, "two", users[1].Content.PlainText())
	assert.Equal(t, "Context from the application:\n- page: /settings", contextOf(users[2]))
}

// Tools that change between runs are sent as the turn's tools.
func TestToolsChangedBetweenRuns(t *testing.T) {
	e := newEnv(t)
	c := e.conv("tools")
	c.say("hello")
	c.run(t)
	id := e.onlySession(t)
	info, err := e.AAPClient.GetSession(bridgetest.Context(t), id)
	require.NoError(t, err)
	assert.Empty(t, info.Tools)

	c.Tools = []types.Tool{weatherTool}
	c.say("weather in Rome")
	r := c.run(t)
	require.Len(t, r.Calls, 1, "the agent saw get_weather")
	info, err = e.AAPClient.GetSession(bridgetest.Context(t), id)
	require.NoError(t, err)
	require.Len(t, info.Tools, 1)
	assert.Equal(t, demo.WeatherTool, info.Tools[0].Name)
	assert.Equal(t, weatherTool.Description, info.Tools[0].Description)

	c.answer(r.Calls[0].ID, "Rainy")
	c.run(t)
	c.Tools = nil
	c.say("weather in Oslo")
	r = c.run(t)
	assert.Equal(t, []string{demo.NoWeatherTool}, r.Text, "the tool was withdrawn")
	info, err = e.AAPClient.GetSession(bridgetest.Context(t), id)
	require.NoError(t, err)
	assert.Empty(t, info.Tools)
	assert.Len(t, e.sessions(t), 1)
}

// forwardedProps.aap.agent overrides the session's options and server
// tools, on the first run and on later ones.
func TestForwardedPropsAgent(t *testing.T) {
	e := newEnv(t)
	c := e.conv("fwd")
	c.ForwardedProps = map[string]any{"aap": map[string]any{"agent": map[string]any{
		"options": map[string]any{"language": "French"},
		"tools":   []any{map[string]any{"name": demo.SearchTool, "trust": true}},
	}}}
	c.say("search dogs")
	r := c.run(t)
	assert.Equal(t, "success", r.outcome(), "trusted through forwardedProps: no interrupt")
	assert.Equal(t, demo.SearchAnswer(demo.SearchResult("dogs")), r.lastText())
	id := e.onlySession(t)
	info, err := e.AAPClient.GetSession(bridgetest.Context(t), id)
	require.NoError(t, err)
	assert.Equal(t, "French", info.Agent.Options["language"])
	assert.Equal(t, []aap.ServerToolRef{{Name: demo.SearchTool, Trust: true}}, info.Agent.Tools)

	c.ForwardedProps = map[string]any{"aap": map[string]any{"agent": map[string]any{"options": map[string]any{"language": "German"}}}}
	c.say("hello")
	c.run(t)
	info, err = e.AAPClient.GetSession(bridgetest.Context(t), id)
	require.NoError(t, err)
	assert.Equal(t, "German", info.Agent.Options["language"], "a later run's override")
	assert.Len(t, e.sessions(t), 1)
}

// The events of a stopped-for-tools run leave the thread as the client
// will send it back: RUN_FINISHED names the run.
func TestRunFinishedNamesTheRun(t *testing.T) {
	e := newEnv(t)
	c := e.conv("names")
	c.say("hello")
	r := c.runAs(t, "run-42")
	require.NotNil(t, r.Finished)
	assert.Equal(t, "names", r.Finished.ThreadID())
	assert.Equal(t, "run-42", r.Finished.RunID())
	_, ok := r.Events[len(r.Events)-1].(*events.RunFinishedEvent)
	assert.True(t, ok, "RUN_FINISHED is last")
}
