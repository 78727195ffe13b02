package agui2aap_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/bridge/agui2aap"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/demo"
)

// hydrate runs thread with no messages, as a client that reconnects to a
// thread it no longer holds, and returns the snapshot and RUN_FINISHED.
func (c *conv) hydrate(t *testing.T, headers ...string) ([]types.Message, *events.RunFinishedEvent) {
	t.Helper()
	in := types.RunAgentInput{ThreadID: c.ThreadID, RunID: c.newID("hydrate"), State: map[string]any{},
		Messages: []types.Message{}, Tools: []types.Tool{}, Context: []types.Context{}, ForwardedProps: map[string]any{}}
	r := c.e.post(t, "/agents/demo", in, headers...)
	require.Equal(t, http.StatusOK, r.Status, r.Body)
	require.Equal(t, []string{"RUN_STARTED", "MESSAGES_SNAPSHOT", "RUN_FINISHED"}, r.types(), r.Body)
	return r.Events[1].(*events.MessagesSnapshotEvent).Messages, r.Events[2].(*events.RunFinishedEvent)
}

// conversational keeps what a client shows and sends back: every message
// but reasoning, with its id, role, text, tool calls and the call a tool
// message answers.
func conversational(t *testing.T, msgs []types.Message) string {
	t.Helper()
	type call struct{ ID, Name, Args string }
	type msg struct {
		ID, Role, ToolCallID string
		Content              any
		Calls                []call `json:",omitempty"`
	}
	var out []msg
	for _, m := range msgs {
		if m.Role == types.RoleReasoning {
			continue
		}
		content := m.Content
		if s, ok := content.(string); ok && s == "" {
			content = nil
		}
		mm := msg{ID: m.ID, Role: string(m.Role), ToolCallID: m.ToolCallID, Content: content}
		for _, tc := range m.ToolCalls {
			mm.Calls = append(mm.Calls, call{tc.ID, tc.Function.Name, tc.Function.Arguments})
		}
		out = append(out, mm)
	}
	b, err := json.MarshalIndent(out, "", " ")
	require.NoError(t, err)
	return string(b)
}

// A client that lost a thread gets it back from agui2aap with a run that
// has no messages: the whole conversation under the ids the client saw,
// the open permission again, and the next run continues the same AAP
// session.
func TestHydration(t *testing.T) {
	e := newEnv(t)
	c := e.conv("hydrated")
	c.Tools = append(c.Tools, weatherTool)
	c.Context = []types.Context{{Description: "page", Value: "the settings screen"}}
	c.say("hello there")
	c.run(t)
	c.say("think about the sea")
	c.run(t)
	c.say("weather in Paris")
	r := c.run(t)
	require.Len(t, r.Calls, 1)
	c.answer(r.Calls[0].ID, "Sunny, 21°C")
	c.run(t)
	c.say("search cats")
	r = c.run(t)
	require.Len(t, r.interrupts(), 1)
	open := r.interrupts()
	session := e.onlySession(t)

	// A reload: the client has nothing; agui2aap gives the thread back.
	msgs, finished := c.hydrate(t)
	assert.Equal(t, conversational(t, c.Messages), conversational(t, msgs), "the snapshot is what the client had, with the same ids")
	for _, m := range msgs {
		if m.Role == types.RoleUser {
			assert.NotContains(t, m.Content, "Context from the application", "context the bridge rendered into the turn is not shown")
		}
	}
	var reasoning []any
	for _, m := range msgs {
		if m.Role == types.RoleReasoning {
			reasoning = append(reasoning, m.Content)
		}
	}
	assert.Equal(t, []any{demo.ThinkingText("think about the sea")}, reasoning)
	require.NotNil(t, finished.Outcome)
	assert.Equal(t, events.RunFinishedOutcomeTypeInterrupt, finished.Outcome.Type)
	assert.Equal(t, open, finished.Outcome.Interrupts, "the pending approval is back")
	assert.Equal(t, session, e.onlySession(t), "no turn was run upstream")
	assert.Len(t, e.history(t, session), 10, "nothing was added to the session")

	// The client goes on from the snapshot alone: approve, then talk.
	c2 := e.conv("hydrated")
	c2.Tools, c2.Context, c2.Messages = c.Tools, c.Context, msgs
	r = c2.run(t, approve(open[0].ID))
	require.Nil(t, r.Error, r.Body)
	assert.Equal(t, []string{demo.SearchAnswer(demo.SearchResult("cats"))}, r.Text)
	c2.say("thanks")
	r = c2.run(t)
	assert.Equal(t, []string{demo.EchoText("thanks")}, r.Text)
	assert.Equal(t, session, e.onlySession(t), "the same AAP session, with its context")

	// A second hydration has it all, ids included, and nothing open.
	msgs, finished = c2.hydrate(t)
	assert.Equal(t, conversational(t, c2.Messages), conversational(t, msgs))
	assert.Equal(t, events.RunFinishedOutcomeTypeSuccess, finished.Outcome.Type)
	assert.Empty(t, finished.Outcome.Interrupts)
}

func TestHydrationOfUnknownThreads(t *testing.T) {
	e := newEnv(t, func(cfg *agui2aap.Config) { cfg.APIKeys = []string{"key-a", "key-b"} })
	c := e.conv("mine")
	c.Headers = []string{"Authorization", "Bearer key-a"}
	c.say("hello there")
	c.run(t)

	t.Run("never seen", func(t *testing.T) {
		msgs, finished := e.conv("nobody").hydrate(t, "Authorization", "Bearer key-a")
		assert.Empty(t, msgs)
		assert.NotNil(t, msgs, "an empty list, not null")
		assert.Equal(t, events.RunFinishedOutcomeTypeSuccess, finished.Outcome.Type)
		assert.Len(t, e.sessions(t), 1, "no session created")
	})
	t.Run("another key's thread", func(t *testing.T) {
		msgs, _ := e.conv("mine").hydrate(t, "Authorization", "Bearer key-b")
		assert.Empty(t, msgs)
	})
	t.Run("the owner's", func(t *testing.T) {
		msgs, _ := e.conv("mine").hydrate(t, "Authorization", "Bearer key-a")
		assert.Equal(t, conversational(t, c.Messages), conversational(t, msgs))
	})
}

// With SnapshotAfterRuns every run that finishes sends, right before
// RUN_FINISHED, a MESSAGES_SNAPSHOT equal to the thread as the client
// holds it after applying the run's events; without it, none.
func TestSnapshotAfterRuns(t *testing.T) {
	snapshot := func(t *testing.T, r *result) []types.Message {
		t.Helper()
		evs := r.Events
		require.GreaterOrEqual(t, len(evs), 2)
		require.IsType(t, &events.RunFinishedEvent{}, evs[len(evs)-1])
		snap, ok := evs[len(evs)-2].(*events.MessagesSnapshotEvent)
		require.True(t, ok, "the event before RUN_FINISHED is %s", evs[len(evs)-2].Type())
		for _, ev := range evs[:len(evs)-2] {
			require.NotEqual(t, events.EventTypeMessagesSnapshot, ev.Type(), "one snapshot, at the end")
		}
		return snap.Messages
	}
	e := newEnv(t, func(cfg *agui2aap.Config) { cfg.SnapshotAfterRuns = true })
	c := e.conv("authoritative")
	c.Tools = append(c.Tools, weatherTool)
	for _, step := range []func() *result{
		func() *result { c.say("hello there"); return c.run(t) },
		func() *result { c.say("think about the sea"); return c.run(t) },
		func() *result { c.say("weather in Paris"); return c.run(t) },
		func() *result { c.answer(c.Messages[len(c.Messages)-1].ToolCalls[0].ID, "Sunny"); return c.run(t) },
		func() *result { c.say("search cats"); return c.run(t) },
	} {
		r := step()
		msgs := snapshot(t, r)
		assert.Equal(t, conversational(t, c.Messages), conversational(t, msgs))
		var reasoning int
		for _, m := range msgs {
			if m.Role == types.RoleReasoning {
				reasoning++
			}
		}
		assert.Equal(t, countRole(c.Messages, types.RoleReasoning), reasoning, "reasoning kept")
	}

	plain := newEnv(t).conv("plain")
	plain.say("hello there")
	r := plain.run(t)
	assert.NotContains(t, r.types(), "MESSAGES_SNAPSHOT")
}

func countRole(msgs []types.Message, role types.Role) int {
	n := 0
	for _, m := range msgs {
		if m.Role == role {
			n++
		}
	}
	return n
}

// When the AAP server no longer has the thread's session (it expired, or
// restarted without a store), a hydration gives the conversation back from
// agui2aap's own record: what the client held, with the same ids
// (reasoning aside: it is not recorded); and the client goes on from it
// on a new session. A thread moved to a new session (another tab's copy)
// has its record rewritten from where the copies part.
func TestHydrationFromOwnRecord(t *testing.T) {
	e := newEnv(t)
	c := e.conv("recorded")
	c.Tools = append(c.Tools, weatherTool)
	c.say("hello there")
	c.run(t)
	c.say("think about the sea")
	c.run(t)
	c.say("weather in Paris")
	r := c.run(t)
	require.Len(t, r.Calls, 1)
	c.answer(r.Calls[0].ID, "Sunny, 21°C")
	c.run(t)
	require.NoError(t, e.AAPClient.DeleteSession(bridgetest.Context(t), e.onlySession(t)))

	msgs, finished := c.hydrate(t)
	assert.Equal(t, conversational(t, c.Messages), conversational(t, msgs), "the conversation from agui2aap's record")
	assert.Equal(t, events.RunFinishedOutcomeTypeSuccess, finished.Outcome.Type)

	// The client goes on from the snapshot: a new session, seeded with it.
	c.Messages = msgs
	c.say("and now?")
	r = c.run(t)
	require.Nil(t, r.Error, r.Body)
	assert.Equal(t, []string{demo.EchoText("and now?")}, r.Text)
	msgs, _ = c.hydrate(t)
	assert.Equal(t, conversational(t, c.Messages), conversational(t, msgs))

	// Another tab's copy (the conversation up to the first answer) moves
	// the thread; the record follows that copy.
	tab := e.conv("recorded")
	tab.Tools, tab.Messages, tab.n = c.Tools, slices.Clone(c.Messages[:2]), 100
	tab.say("a different question")
	tab.run(t)
	for _, s := range e.sessions(t) {
		require.NoError(t, e.AAPClient.DeleteSession(bridgetest.Context(t), s.SessionID))
	}
	msgs, _ = tab.hydrate(t)
	assert.Equal(t, conversational(t, tab.Messages), conversational(t, msgs), "the record of the moved thread")
}
