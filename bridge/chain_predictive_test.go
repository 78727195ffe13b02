package bridge_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
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
)

// pageChain is an AG-UI page's way to the predictive-state agent
// (demo.Starter's predictive_state_updates) through both bridges: agui2aap in front of
// aap2agui in front of the agent, which aap2agui describes as an agent
// named "predictive" with no server tools.
type pageChain struct {
	URL      string // agui2aap's endpoint for the agent
	AgentURL string // the agent's own endpoint (the control)
	Agent    *bridgetest.Recorder
}

func newPageChain(t *testing.T, policy agui2aap.Policy, configure func(*aap2agui.Config)) *pageChain {
	t.Helper()
	agent := &bridgetest.Recorder{Agent: &demo.Starter{}}
	as := httptest.NewServer(agent)
	t.Cleanup(as.Close)
	cfg := aap2agui.Config{
		Upstream: as.URL + "/predictive_state_updates", Store: store.NewMemory(),
		Agent: aap.AgentInfo{Name: "predictive", Capabilities: aap2agui.DefaultAgent().Capabilities},
	}
	configure(&cfg)
	p, err := aap2agui.New(cfg)
	require.NoError(t, err)
	ps := httptest.NewServer(p)
	t.Cleanup(ps.Close)
	g, err := agui2aap.New(agui2aap.Config{Upstream: ps.URL, Store: store.NewMemory(), Policy: policy})
	require.NoError(t, err)
	gs := httptest.NewServer(g)
	t.Cleanup(gs.Close)
	return &pageChain{URL: gs.URL + "/agents/predictive", AgentURL: as.URL + "/predictive_state_updates", Agent: agent}
}

// run posts one run and returns its events, which pass the AG-UI client's
// rules.
func (pc *pageChain) run(t *testing.T, in *types.RunAgentInput) []events.Event {
	t.Helper()
	return runAt(t, pc.URL, in)
}

// runAt posts one run to url and returns its events, which pass the AG-UI
// client's rules.
func runAt(t *testing.T, url string, in *types.RunAgentInput) []events.Event {
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
	var evs []events.Event
	for f, err := range sse.Read(resp.Body, sse.ReadOptions{}) {
		require.NoError(t, err)
		ev, err := agui.DecodeEvent(f.Data)
		require.NoError(t, err)
		evs = append(evs, ev)
	}
	require.NoError(t, agui.Verify(evs))
	return evs
}

// pageConfirm is the page's confirm_changes, as CopilotKit's
// human-in-the-loop hook declares it.
var pageConfirm = types.Tool{Name: demo.StarterConfirmTool, Description: "Ask the user to confirm the changes.", Parameters: map[string]any{"type": "object", "properties": map[string]any{}}}

// The dojo's predictive state updates through the chain (page →
// agui2aap → aap2agui → the predictive-state agent): the agent's own
// write_document_local reaches the page as the call it is, with its
// document, beside the page's confirm_changes; the run finishes for the
// page's tool, without an interrupt (which @ag-ui/client would hold the
// thread to: "pending interrupt(s) not addressed by resume"), under every
// permission policy and whether or not aap2agui's configuration declares
// the tool permissions: none. The page's answer to confirm_changes is the
// next run, which the agent answers ("Ok!") having been sent its own call
// as it made it, without a result; a new message after it is taken too.
func TestChainAgentsOwnToolPredictiveState(t *testing.T) {
	configs := map[string]func(*aap2agui.Config){
		"no entry": func(*aap2agui.Config) {},
		"permissions none": func(c *aap2agui.Config) {
			c.OwnTools = []aap.ToolSpec{{Name: demo.StarterDocumentTool, Description: "Write the document.", Parameters: json.RawMessage(`{"type":"object"}`)}}
		},
	}
	for cfgName, configure := range configs {
		for _, policy := range []agui2aap.Policy{agui2aap.PolicyInterrupt, agui2aap.PolicyGrant, agui2aap.PolicyDeny} {
			t.Run(cfgName+"/"+string(policy), func(t *testing.T) {
				pc := newPageChain(t, policy, configure)
				user := types.Message{ID: "u1", Role: types.RoleUser, Content: "Write a story about a dog"}
				in := &types.RunAgentInput{ThreadID: "th-predictive", RunID: "run-1", Messages: []types.Message{user},
					Tools: []types.Tool{pageConfirm}, State: map[string]any{}, Context: []types.Context{}, ForwardedProps: map[string]any{}}

				evs := pc.run(t, in)
				assistant := pageMessage(t, evs)
				require.Len(t, assistant.ToolCalls, 2, "both calls reach the page")
				doc, confirm := assistant.ToolCalls[0], assistant.ToolCalls[1]
				assert.Equal(t, demo.StarterDocumentTool, doc.Function.Name)
				assert.JSONEq(t, `{"document":`+quote(demo.StarterStory(0))+`}`, doc.Function.Arguments)
				assert.Equal(t, demo.StarterConfirmTool, confirm.Function.Name)
				fin, ok := evs[len(evs)-1].(*events.RunFinishedEvent)
				require.True(t, ok, "the run finishes: %T", evs[len(evs)-1])
				assert.Nil(t, fin.Outcome, "no interrupt: the page runs its tool and starts a new run")

				in.RunID = "run-2"
				in.Messages = append(in.Messages, assistant,
					types.Message{ID: "t1", Role: types.RoleTool, ToolCallID: confirm.ID, Content: `{"accepted":true}`})
				evs = pc.run(t, in)
				assert.Equal(t, "Ok!", pageText(evs), "the next run is taken and answered")
				runs := pc.Agent.Inputs()
				require.Len(t, runs, 2)
				got := runs[1].Messages
				require.Len(t, got, 3, "the user, the agent's calls, the page's result")
				assert.Len(t, got[1].ToolCalls, 2)
				assert.Equal(t, confirm.ID, got[2].ToolCallID)

				in.RunID = "run-3"
				in.Messages = append(in.Messages, pageMessage(t, evs), types.Message{ID: "u2", Role: types.RoleUser, Content: "Another one"})
				evs = pc.run(t, in)
				assert.Len(t, pageMessage(t, evs).ToolCalls, 2, "a new message is taken: the agent writes again")
				assert.Len(t, pc.Agent.Inputs(), 3)
			})
		}
	}
}

// The page sees a call's arguments stream through the chain as the agent
// streams them (predictive state updates fill the document from them): the
// same TOOL_CALL_ARGS parts, in the same order, as the page pointed at the
// agent itself gets, each call started, given its arguments and ended
// once, under the chain's own message id; the thread's record, which a
// reload gives back, holds the calls with their arguments whole.
func TestChainStreamsToolArgumentsAsTheAgentDoes(t *testing.T) {
	control := newPageChain(t, agui2aap.PolicyInterrupt, func(*aap2agui.Config) {}) // (a fresh agent: the same story)
	pc := newPageChain(t, agui2aap.PolicyInterrupt, func(*aap2agui.Config) {})
	user := types.Message{ID: "u1", Role: types.RoleUser, Content: "Write a story about a dog"}
	in := &types.RunAgentInput{ThreadID: "th-args", RunID: "run-1", Messages: []types.Message{user},
		Tools: []types.Tool{pageConfirm}, State: map[string]any{}, Context: []types.Context{}, ForwardedProps: map[string]any{}}

	direct := callParts(runAt(t, control.AgentURL, in))
	chained := runAt(t, pc.URL, in)
	got := callParts(chained)
	require.Len(t, direct, 2, "the agent calls its own tool and the page's")
	assert.Greater(t, len(direct[demo.StarterDocumentTool]), 4, "the agent streams the document in parts")
	assert.Equal(t, direct, got, "each call's arguments in the parts the agent streamed")
	starts, ends := 0, 0
	for _, ev := range chained {
		switch e := ev.(type) {
		case *events.ToolCallStartEvent:
			starts++
			require.NotNil(t, e.ParentMessageID)
			assert.NotContains(t, *e.ParentMessageID, "starter", "the chain's own message id")
		case *events.ToolCallEndEvent:
			ends++
		}
	}
	assert.Equal(t, 2, starts)
	assert.Equal(t, 2, ends)

	in.RunID, in.Messages = "run-2", nil // a reload: the thread's record
	snap := runAt(t, pc.URL, in)
	var calls []types.ToolCall
	for _, ev := range snap {
		if e, ok := ev.(*events.MessagesSnapshotEvent); ok {
			for _, m := range e.Messages {
				calls = append(calls, m.ToolCalls...)
			}
		}
	}
	require.Len(t, calls, 2, "the reload gives the calls back")
	assert.JSONEq(t, `{"document":`+quote(demo.StarterStory(0))+`}`, calls[0].Function.Arguments)
}

// callParts are the TOOL_CALL_ARGS deltas of each call a run streamed, by
// the call's tool name.
func callParts(evs []events.Event) map[string][]string {
	names := map[string]string{}
	parts := map[string][]string{}
	for _, ev := range evs {
		switch e := ev.(type) {
		case *events.ToolCallStartEvent:
			names[e.ToolCallID] = e.ToolCallName
			parts[e.ToolCallName] = []string{}
		case *events.ToolCallArgsEvent:
			parts[names[e.ToolCallID]] = append(parts[names[e.ToolCallID]], e.Delta)
		}
	}
	return parts
}

// pageMessage is the assistant message a run streamed, as the page keeps
// it (its id, its text, its calls with their arguments).
func pageMessage(t *testing.T, evs []events.Event) types.Message {
	t.Helper()
	m := types.Message{Role: types.RoleAssistant}
	text := ""
	for _, ev := range evs {
		switch e := ev.(type) {
		case *events.TextMessageStartEvent:
			m.ID = e.MessageID
		case *events.TextMessageContentEvent:
			text += e.Delta
		case *events.ToolCallStartEvent:
			if e.ParentMessageID != nil && m.ID == "" {
				m.ID = *e.ParentMessageID
			}
			m.ToolCalls = append(m.ToolCalls, types.ToolCall{ID: e.ToolCallID, Type: types.ToolCallTypeFunction, Function: types.FunctionCall{Name: e.ToolCallName}})
		case *events.ToolCallArgsEvent:
			m.ToolCalls[len(m.ToolCalls)-1].Function.Arguments += e.Delta
		}
	}
	require.NotEmpty(t, m.ID, "the run streamed no assistant message")
	if text != "" {
		m.Content = text
	}
	return m
}

// pageText is the text a run streamed.
func pageText(evs []events.Event) string {
	text := ""
	for _, ev := range evs {
		if e, ok := ev.(*events.TextMessageContentEvent); ok {
			text += e.Delta
		}
	}
	return text
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
