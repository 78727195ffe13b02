package bridge_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/bridge/agui2aap"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/internal/sse"
	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/translate"
)

// starterChain is one feature of the all-features starter's state agent
// (demo.Starter, with its extras) reached by a page two ways: straight
// (Direct, the control) and through agui2aap in front of aap2agui in
// front of the agent (Chained). AAP is aap2agui's own URL.
type starterChain struct {
	Direct, Chained, AAP string
	Agent                *bridgetest.Recorder
}

func newStarterChain(t *testing.T, feature string) *starterChain {
	t.Helper()
	agent := &bridgetest.Recorder{Agent: &demo.Starter{Extras: true}}
	as := httptest.NewServer(agent)
	t.Cleanup(as.Close)
	aapURL, chained := newBridgesTo(t, as.URL+"/"+feature, "starter")
	return &starterChain{Direct: as.URL + "/" + feature, Chained: chained, AAP: aapURL, Agent: agent}
}

// newBridgesTo starts aap2agui in front of the AG-UI agent at upstream,
// describing it as an agent named name, and agui2aap in front of that
// aap2agui (memory stores): it returns aap2agui's URL and agui2aap's
// endpoint for the agent.
func newBridgesTo(t *testing.T, upstream, name string) (aapURL, agentURL string) {
	t.Helper()
	p, err := aap2agui.New(aap2agui.Config{Upstream: upstream, Store: store.NewMemory(),
		Agent: aap.AgentInfo{Name: name, Capabilities: aap2agui.DefaultAgent().Capabilities}})
	require.NoError(t, err)
	ps := httptest.NewServer(p)
	t.Cleanup(ps.Close)
	g, err := agui2aap.New(agui2aap.Config{Upstream: ps.URL, Store: store.NewMemory()})
	require.NoError(t, err)
	gs := httptest.NewServer(g)
	t.Cleanup(gs.Close)
	return ps.URL, gs.URL + "/agents/" + name
}

// pageRun is what a page gets of one run: each event, and its JSON.
type pageRun struct {
	Events []events.Event
	JSON   []string
}

// carried is the JSON of the events of the run that AAP has no event for,
// in order (the run's end aside, whose result carries).
func (r pageRun) carried() []string {
	var out []string
	for i, ev := range r.Events {
		if _, end := ev.(*events.RunFinishedEvent); !end && translate.CarriedEvent(ev) {
			out = append(out, r.JSON[i])
		}
	}
	return out
}

func postRun(t *testing.T, url string, in *types.RunAgentInput) pageRun {
	t.Helper()
	body, err := agui.MarshalRunAgentInput(in)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), bridgetest.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var run pageRun
	for f, err := range sse.Read(resp.Body, sse.ReadOptions{}) {
		require.NoError(t, err)
		ev, err := agui.DecodeEvent(f.Data)
		require.NoError(t, err)
		run.Events, run.JSON = append(run.Events, ev), append(run.JSON, string(f.Data))
	}
	require.NoError(t, agui.Verify(run.Events), "the page's client takes the run")
	return run
}

func requireSameJSON(t *testing.T, want, got []string) {
	t.Helper()
	require.Len(t, got, len(want), "got %v", got)
	for i := range want {
		assert.JSONEq(t, want[i], got[i], "event %d", i)
	}
}

// The dojo's shared state through the chain, with the page pointed at
// the agent as the control: the page's state, context and forwarded
// props reach the agent as the page sent them, and the agent's
// STATE_SNAPSHOT (and an ACTIVITY_SNAPSHOT beside it) reach the page as
// the agent sent them, in order. The next run's state is the page's
// again.
func TestChainCarriesSharedState(t *testing.T) {
	sc := newStarterChain(t, "shared_state")
	in := &types.RunAgentInput{ThreadID: "th-shared", RunID: "run-1",
		Messages:       []types.Message{{ID: "u1", Role: types.RoleUser, Content: "Make it spicy"}},
		Tools:          []types.Tool{},
		State:          map[string]any{"recipe": map[string]any{"title": "Page's wraps", "cooking_time": "5 min"}},
		Context:        []types.Context{{Description: "The page", Value: "/recipes/42"}},
		ForwardedProps: map[string]any{"copilotkit": map[string]any{"threadMetadata": map[string]any{"pinned": true}}}}

	direct := postRun(t, sc.Direct, in)
	chained := postRun(t, sc.Chained, in)
	require.Len(t, direct.carried(), 2)
	requireSameJSON(t, direct.carried(), chained.carried())
	assert.JSONEq(t, `{"type":"STATE_SNAPSHOT","snapshot":`+demo.StarterRecipe+`}`, chained.carried()[1])
	_, ok := chained.Events[len(chained.Events)-1].(*events.RunFinishedEvent)
	require.True(t, ok)
	assert.Contains(t, chained.JSON[len(chained.JSON)-1], `"result":{"saved":true,"servings":2.50}`, "the run's result as the agent wrote it")

	runs := sc.Agent.Inputs()
	require.Len(t, runs, 2)
	sent, got := runs[0], runs[1]
	for name, pair := range map[string][2]any{"state": {sent.State, got.State}, "context": {sent.Context, got.Context}} {
		want, err := json.Marshal(pair[0])
		require.NoError(t, err)
		have, err := json.Marshal(pair[1])
		require.NoError(t, err)
		assert.JSONEq(t, string(want), string(have), name)
	}
	props, ok := got.ForwardedProps.(map[string]any)
	require.True(t, ok, "forwardedProps: %#v", got.ForwardedProps)
	assert.Equal(t, sent.ForwardedProps.(map[string]any)["copilotkit"], props["copilotkit"], "the page's forwarded props")
	assert.Contains(t, props, translate.ForwardedPropsKey, "beside the bridge's own")
	for _, m := range got.Messages {
		if s, ok := m.Content.(string); ok {
			assert.NotContains(t, s, "/recipes/42", "the context reaches the agent as context, not as text")
		}
	}

	// The page's next run holds the activity message as the page keeps it
	// (its client made it of the ACTIVITY_SNAPSHOT); the agent gets the
	// conversation it last had: the activity message once, at its place.
	activity := types.Message{ID: "act-1", Role: types.RoleActivity, ActivityType: "recipe-card", Content: map[string]any{"title": "Spicy wraps"}}
	in.RunID = "run-2"
	in.Messages = append(in.Messages, activity, types.Message{ID: "u2", Role: types.RoleUser, Content: "Less salt"})
	in.State = map[string]any{"recipe": map[string]any{"title": "Page's wraps, less salt"}}
	postRun(t, sc.Chained, in)
	runs = sc.Agent.Inputs()
	require.Len(t, runs, 3)
	state, _ := json.Marshal(runs[2].State)
	assert.JSONEq(t, `{"recipe":{"title":"Page's wraps, less salt"}}`, string(state), "each run's state is the page's")
	roles := func(msgs []types.Message) (out []string) {
		for _, m := range msgs {
			out = append(out, string(m.Role)+":"+m.ID)
		}
		return out
	}
	sentBack := runs[2].Messages
	require.Len(t, sentBack, 3, "%v", roles(sentBack))
	assert.Equal(t, types.RoleUser, sentBack[0].Role)
	assert.Equal(t, "act-1", sentBack[1].ID, "the activity message, at its place")
	assert.Equal(t, "recipe-card", sentBack[1].ActivityType)
	content, _ := json.Marshal(sentBack[1].Content)
	assert.JSONEq(t, `{"title":"Spicy wraps"}`, string(content))
	assert.Equal(t, types.RoleUser, sentBack[2].Role)

	// A reload: the page hydrates the thread and gets its messages, the
	// activity message among them where the agent made it, and the state
	// the agent left, as the agent sent it.
	hydrated := postRun(t, sc.Chained, &types.RunAgentInput{ThreadID: "th-shared", RunID: "run-3", Messages: []types.Message{},
		Tools: []types.Tool{}, State: map[string]any{}, Context: []types.Context{}, ForwardedProps: map[string]any{}})
	require.Len(t, hydrated.Events, 4, "RUN_STARTED, MESSAGES_SNAPSHOT, STATE_SNAPSHOT, RUN_FINISHED")
	require.IsType(t, &events.MessagesSnapshotEvent{}, hydrated.Events[1])
	snap := hydrated.Events[1].(*events.MessagesSnapshotEvent).Messages
	assert.Equal(t, []string{"user:u1", "activity:act-1", "user:u2"}, roles(snap), "the two user messages and the activity between them")
	assert.Contains(t, hydrated.JSON[1], `{"id":"act-1","role":"activity","content":{"title":"Spicy wraps"},"activityType":"recipe-card"}`, "as the page first saw it")
	assert.JSONEq(t, `{"type":"STATE_SNAPSHOT","snapshot":`+demo.StarterRecipe+`}`, hydrated.JSON[2])
	assert.Len(t, sc.Agent.Inputs(), 3, "a hydration runs no agent")
}

// The dojo's agentic generative UI through the chain: the snapshot of the
// steps, a step, a STATE_DELTA per completed step and the last snapshot
// reach the page as they reach it from the agent itself.
func TestChainCarriesAgenticGenerativeUI(t *testing.T) {
	sc := newStarterChain(t, "agentic_generative_ui")
	in := &types.RunAgentInput{ThreadID: "th-steps", RunID: "run-1",
		Messages: []types.Message{{ID: "u1", Role: types.RoleUser, Content: "Plan a trip"}},
		Tools:    []types.Tool{}, State: map[string]any{}, Context: []types.Context{}, ForwardedProps: map[string]any{}}
	direct := postRun(t, sc.Direct, in)
	chained := postRun(t, sc.Chained, in)
	require.Len(t, direct.carried(), 14, "snapshot, step started, 10 deltas, step finished, snapshot")
	requireSameJSON(t, direct.carried(), chained.carried())
}

// aap2agui's own AAP clients: one that does not ask for the extension
// sees plain AAP (no agui event, no grant) and has its "agui" member
// refused before anything is stored; the session still keeps the agent's
// state. One that asks is granted it and gets the agent's events.
func TestAAPClientsSeeTheExtensionOnlyWhenAsked(t *testing.T) {
	sc := newStarterChain(t, "agentic_generative_ui")
	ctx, cancel := context.WithTimeout(context.Background(), bridgetest.Timeout)
	defer cancel()

	plain := aap.NewClient(sc.AAP, aap.ClientOptions{})
	meta, err := plain.Meta(ctx)
	require.NoError(t, err)
	assert.False(t, meta.Grants(aap.ExtensionAGUI))
	created, err := plain.CreateSession(ctx, &aap.PostSessionsRequest{Agent: aap.AgentConfig{Name: "starter"}})
	require.NoError(t, err)
	var names []aap.EventName
	for ev, err := range plain.StreamTurn(ctx, created.SessionID, &aap.PostSessionTurnRequest{Stream: aap.StreamDelta, Messages: []aap.Message{aap.UserText("go")}}) {
		require.NoError(t, err)
		names = append(names, ev.EventName())
	}
	assert.Equal(t, []aap.EventName{aap.EventTurnStart, aap.EventTurnStop}, names, "nothing foreign")

	_, err = plain.Turn(ctx, created.SessionID, &aap.PostSessionTurnRequest{Messages: []aap.Message{aap.UserText("again")},
		AGUI: &aap.AGUIInput{State: json.RawMessage(`{"x":1}`)}})
	var he *aap.HTTPError
	require.ErrorAs(t, err, &he)
	assert.Equal(t, http.StatusBadRequest, he.StatusCode)
	assert.Contains(t, he.Message, "agui")
	assert.Contains(t, he.Message, aap.ExtensionsHeader)

	asking := aap.NewClient(sc.AAP, aap.ClientOptions{Header: http.Header{aap.ExtensionsHeader: {aap.ExtensionAGUI}}})
	meta, err = asking.Meta(ctx)
	require.NoError(t, err)
	assert.True(t, meta.Grants(aap.ExtensionAGUI))
	var carried []string
	for ev, err := range asking.StreamTurn(ctx, created.SessionID, &aap.PostSessionTurnRequest{Stream: aap.StreamMessage,
		Messages: []aap.Message{aap.UserText("once more")}, AGUI: &aap.AGUIInput{State: json.RawMessage(`{"steps":[]}`)}}) {
		require.NoError(t, err)
		if e, ok := ev.(*aap.AGUIEvent); ok {
			carried = append(carried, string(e.Data))
		}
	}
	require.Len(t, carried, 14)
	assert.True(t, strings.HasPrefix(carried[0], `{"type":"STATE_SNAPSHOT"`), carried[0])
	runs := sc.Agent.Inputs()
	require.Len(t, runs, 2, "the refused turn reached no agent")
	state, _ := json.Marshal(runs[1].State)
	assert.JSONEq(t, `{"steps":[]}`, string(state), "the asking client's state is the run's")
}

// A turn whose stream carried agui events is rejoined only by a client
// granted the extension, which gets them again; a plain AAP client is
// refused, naming the header, rather than sent a foreign event.
func TestRejoinOfACarryingTurnAsksForTheExtension(t *testing.T) {
	sc := newStarterChain(t, "agentic_generative_ui")
	ctx, cancel := context.WithTimeout(context.Background(), bridgetest.Timeout)
	defer cancel()
	asking := http.Header{aap.ExtensionsHeader: {aap.ExtensionAGUI}}
	created, err := aap.NewClient(sc.AAP, aap.ClientOptions{Header: asking}).CreateSession(ctx, &aap.PostSessionsRequest{Agent: aap.AgentConfig{Name: "starter"}})
	require.NoError(t, err)
	do := func(method, path, body string, h http.Header) (int, string) {
		req, err := http.NewRequestWithContext(ctx, method, sc.AAP+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header = h.Clone()
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var b strings.Builder
		_, err = io.Copy(&b, resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, b.String()
	}
	status, stream := do(http.MethodPost, "/sessions/"+created.SessionID+"/turns", `{"stream":"delta","messages":[{"role":"user","content":"go"}]}`, asking)
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, 14, strings.Count(stream, "event: agui\n"), stream)
	first := ""
	for line := range strings.SplitSeq(stream, "\n") {
		if id, ok := strings.CutPrefix(line, "id: "); ok {
			first = id
			break
		}
	}
	require.NotEmpty(t, first, "the stream's events have ids")

	status, body := do(http.MethodGet, "/sessions/"+created.SessionID+"/turn", "", http.Header{"Last-Event-ID": {first}})
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, body, "extension_required")
	assert.Contains(t, body, aap.ExtensionsHeader)

	again := asking.Clone()
	again.Set("Last-Event-ID", first)
	status, body = do(http.MethodGet, "/sessions/"+created.SessionID+"/turn", "", again)
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, 14, strings.Count(body, "event: agui\n"), "the carried events again")
}

// An agent that answers with a MESSAGES_SNAPSHOT holding an activity
// message (an A2UI surface, as CopilotKit's A2UI agents keep them): through
// the chain the page gets the answer's text and the activity, as an
// ACTIVITY_SNAPSHOT that makes the same message on the page.
func TestChainCarriesSnapshotActivities(t *testing.T) {
	surface := `{"surfaceId":"s1","components":[{"id":"root","component":{"Text":{"text":{"literalString":"Booked"}}}}]}`
	agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		in, err := agui.DecodeRunAgentInput(mustRead(t, r))
		require.NoError(t, err)
		run := `"threadId":"` + in.ThreadID + `","runId":"` + in.RunID + `"`
		w.Header().Set("Content-Type", "text/event-stream")
		var out []byte
		for _, ev := range []string{`{"type":"RUN_STARTED",` + run + `}`,
			`{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"u1","role":"user","content":"Book it"},` +
				`{"id":"act-9","role":"activity","activityType":"a2ui-surface","content":` + surface + `},` +
				`{"id":"a1","role":"assistant","content":"Done."}]}`,
			`{"type":"RUN_FINISHED",` + run + `}`} {
			out = sse.AppendEvent(out, "", []byte(ev))
		}
		_, _ = w.Write(out)
	}))
	t.Cleanup(agent.Close)
	_, chained := newBridgesTo(t, agent.URL, "a2ui")

	run := postRun(t, chained, &types.RunAgentInput{ThreadID: "th-a2ui", RunID: "run-1",
		Messages: []types.Message{{ID: "u1", Role: types.RoleUser, Content: "Book it"}},
		Tools:    []types.Tool{}, State: map[string]any{}, Context: []types.Context{}, ForwardedProps: map[string]any{}})
	assert.Equal(t, "Done.", pageText(run.Events))
	var activity *events.ActivitySnapshotEvent
	for _, ev := range run.Events {
		if a, ok := ev.(*events.ActivitySnapshotEvent); ok {
			activity = a
		}
	}
	require.NotNil(t, activity, "the activity reaches the page")
	assert.Equal(t, "act-9", activity.MessageID)
	assert.Equal(t, "a2ui-surface", activity.ActivityType)
	content, _ := json.Marshal(activity.Content)
	assert.JSONEq(t, surface, string(content))
}

func mustRead(t *testing.T, r *http.Request) []byte {
	b, err := io.ReadAll(r.Body)
	require.NoError(t, err)
	return b
}
