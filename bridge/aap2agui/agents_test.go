package aap2agui_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/internal/testkit/metricstest"
	"github.com/aapagui/aapagui/store"
)

// threeAgents are the agents of a server in front of three upstreams, each
// of which answers every run with its own name: alpha (a secret option),
// beta (a key in a header of its own, a tool) and gamma (the session id as
// threadId).
type threeAgents struct {
	ups  map[string]*fakeUpstream
	cfgs []aap2agui.AgentConfig
}

func newThreeAgents(t *testing.T) *threeAgents {
	t.Helper()
	ta := &threeAgents{ups: map[string]*fakeUpstream{}}
	for _, name := range []string{"alpha", "beta", "gamma"} {
		ta.ups[name] = newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, _ int) {
			sseEvents(w, textRun(in, "m-"+name, "this is "+name)...)
		})
	}
	ta.cfgs = []aap2agui.AgentConfig{
		{Agent: aap.AgentInfo{Name: "alpha", Title: "Alpha", Version: "1.0.0", Capabilities: aap2agui.DefaultAgent().Capabilities,
			Options: []aap.AgentOption{{Type: aap.OptionSecret, Name: "api_key", Default: ""}}},
			Upstream: ta.ups["alpha"].URL},
		{Agent: aap.AgentInfo{Name: "beta", Title: "Beta", Version: "2.0.0", Capabilities: aap2agui.DefaultAgent().Capabilities,
			Tools: []aap.ToolSpec{{Name: "lookup", Description: "Looks up.", Parameters: json.RawMessage(`{"type":"object"}`)}}},
			Upstream: ta.ups["beta"].URL, UpstreamHeader: http.Header{"X-Agent-Key": {"beta-key"}}},
		{Agent: aap.AgentInfo{Name: "gamma", Title: "Gamma", Version: "3.0.0", Capabilities: aap2agui.DefaultAgent().Capabilities},
			Upstream: ta.ups["gamma"].URL, ThreadIDs: aap2agui.ThreadIDsSession},
	}
	return ta
}

// server starts aap2agui with the given agents on st.
func (ta *threeAgents) server(t *testing.T, st store.Store, agents []aap2agui.AgentConfig) *env {
	t.Helper()
	return newEnv(t, "", func(c *aap2agui.Config) {
		c.Upstream, c.Agent, c.Store, c.Agents = "", aap.AgentInfo{}, st, agents
	})
}

// Every session's turns go to the upstream of the agent it names, in every
// stream mode, with that agent's headers and thread ids; GET /meta lists
// the agents in their order; an agent no one serves is a 400 naming the
// agents that are.
func TestAgentsRouteSessions(t *testing.T) {
	ta := newThreeAgents(t)
	e := ta.server(t, store.NewMemory(), ta.cfgs)

	meta, err := e.Client.Meta(bridgetest.Context(t))
	require.NoError(t, err)
	var names []string
	for _, a := range meta.Agents {
		names = append(names, a.Name)
	}
	assert.Equal(t, []string{"alpha", "beta", "gamma"}, names)

	for _, mode := range []aap.StreamMode{aap.StreamDelta, aap.StreamMessage, aap.StreamNone} {
		for _, name := range names {
			t.Run(string(mode)+"/"+name, func(t *testing.T) {
				before := ta.ups[name].count()
				id := e.createSession(t, aap.PostSessionsRequest{Agent: aap.AgentConfig{Name: name}})
				said := sayHello(t, e, id, mode)
				assert.Contains(t, said, "this is "+name, "the answer comes from the session's agent")
				hist := e.history(t, id, aap.HistoryFull)
				require.Len(t, hist, 2)
				assert.Contains(t, hist[1], "this is "+name)
				require.Equal(t, before+1, ta.ups[name].count(), "one run, to the session's agent")
				in := ta.ups[name].input(t, before)
				assert.Equal(t, name == "beta", in.Header.Get("X-Agent-Key") == "beta-key", "each agent's own headers only")
				want := aap2agui.ThreadID(id)
				if name == "gamma" {
					want = id
				}
				assert.Equal(t, want, in.ThreadID, "each agent's thread ids")
			})
		}
	}

	r := doRaw(t, http.MethodPost, e.URL+"/sessions", "", `{"agent":{"name":"delta"}}`)
	requireJSONError(t, r, http.StatusBadRequest, "unknown_agent")
	for _, name := range names {
		assert.Contains(t, r.Body, `\"`+name+`\"`, "the error names the agents served")
	}
	r = doRaw(t, http.MethodPost, e.URL+"/sessions", "", `{"agent":{"name":"alpha","tools":[{"name":"lookup"}]}}`)
	requireJSONError(t, r, http.StatusBadRequest, "invalid_request")
	assert.Contains(t, r.Body, `not a server tool of agent \"alpha\"`, "one agent's tools are not another's")
}

// SetAgents replaces the agents served, at once: GET /meta lists the new
// ones and a new session may name them; a session whose agent left gets
// 404 unknown_agent for its turns, and is served again, by the agent's
// new upstream, when an agent of its name comes back; a turn in flight
// ends with the agent it started with; a list with an error changes
// nothing.
func TestAgentsSetAgents(t *testing.T) {
	ta := newThreeAgents(t)
	started, release := make(chan struct{}, 1), make(chan struct{})
	slowBeta := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, _ int) {
		sseEvents(w, runStarted(in))
		started <- struct{}{}
		<-release
		sseEvents(w, concat(textMessage("m-slow", "this is the old beta"), []string{runFinished(in)})...)
	})
	cfgs := slices.Clone(ta.cfgs)
	cfgs[1].Upstream = slowBeta.URL
	e := ta.server(t, store.NewMemory(), cfgs[:2]) // alpha, beta
	alpha := e.createSession(t, aap.PostSessionsRequest{Agent: aap.AgentConfig{Name: "alpha"}})
	beta := e.createSession(t, aap.PostSessionsRequest{Agent: aap.AgentConfig{Name: "beta"}})

	inFlight := make(chan *aap.PostSessionTurnResponse, 1)
	go func() {
		resp, err := e.Client.Turn(bridgetest.Context(t), beta, &aap.PostSessionTurnRequest{Stream: aap.StreamNone,
			Messages: []aap.Message{&aap.UserMessage{Content: aap.TextContent("hello")}}})
		assert.NoError(t, err)
		inFlight <- resp
	}()
	<-started
	require.NoError(t, e.Server.SetAgents([]aap2agui.AgentConfig{ta.cfgs[0], ta.cfgs[2]})) // alpha, gamma
	metaNames := func() (names []string) {
		meta, err := e.Client.Meta(bridgetest.Context(t))
		require.NoError(t, err)
		for _, a := range meta.Agents {
			names = append(names, a.Name)
		}
		return names
	}
	assert.Equal(t, []string{"alpha", "gamma"}, metaNames())
	close(release)
	resp := <-inFlight
	require.NotNil(t, resp)
	assert.Equal(t, aap.StopEndTurn, resp.StopReason)
	assert.Equal(t, []string{assistantText("this is the old beta")}, messageLines(t, resp.Messages), "the turn in flight ends with its agent")

	gamma := e.createSession(t, aap.PostSessionsRequest{Agent: aap.AgentConfig{Name: "gamma"}})
	assert.Contains(t, sayHello(t, e, gamma, aap.StreamDelta), "this is gamma")
	assert.Contains(t, sayHello(t, e, alpha, aap.StreamDelta), "this is alpha")
	r := doRaw(t, http.MethodPost, e.URL+"/sessions/"+beta+"/turns", "", `{"stream":"none","messages":[{"role":"user","content":"still there?"}]}`)
	requireJSONError(t, r, http.StatusNotFound, "unknown_agent")
	r = doRaw(t, http.MethodPost, e.URL+"/sessions", "", `{"agent":{"name":"beta"}}`)
	requireJSONError(t, r, http.StatusBadRequest, "unknown_agent")
	assert.Len(t, e.history(t, beta, aap.HistoryFull), 2, "the session keeps its history")

	bad := []aap2agui.AgentConfig{ta.cfgs[0], ta.cfgs[0]}
	assert.ErrorContains(t, e.Server.SetAgents(bad), `the name "alpha" is another agent's too`)
	noURL := []aap2agui.AgentConfig{{Agent: aap.AgentInfo{Name: "delta"}}}
	assert.ErrorContains(t, e.Server.SetAgents(noURL), "not an http(s) URL")
	assert.Error(t, e.Server.SetAgents(nil))
	assert.Equal(t, []string{"alpha", "gamma"}, metaNames(), "a list with an error changes nothing")

	require.NoError(t, e.Server.SetAgents(ta.cfgs)) // beta is back, on its own upstream
	assert.Contains(t, sayHello(t, e, beta, aap.StreamMessage), "this is beta")
	assert.Equal(t, 1, slowBeta.count(), "the old upstream was called once, for the turn in flight")
}

// A session stays with its agent across a restart; a session whose agent
// is no longer configured keeps its history but runs no turn, and shows no
// option's value.
func TestAgentsAcrossRestart(t *testing.T) {
	ta := newThreeAgents(t)
	st := store.NewMemory()
	first := ta.server(t, st, ta.cfgs)
	ids := map[string]string{}
	for _, name := range []string{"alpha", "gamma"} {
		ids[name] = first.createSession(t, aap.PostSessionsRequest{Agent: aap.AgentConfig{Name: name, Options: map[string]string{}}})
		_, err := first.Client.Turn(bridgetest.Context(t), ids[name], &aap.PostSessionTurnRequest{Stream: aap.StreamNone,
			Messages: []aap.Message{&aap.UserMessage{Content: aap.TextContent("first")}}})
		require.NoError(t, err)
	}
	secret := first.createSession(t, aap.PostSessionsRequest{Agent: aap.AgentConfig{Name: "alpha", Options: map[string]string{"api_key": "s3cret"}}})

	// The next process serves alpha and beta only, in another order.
	second := ta.server(t, st, []aap2agui.AgentConfig{ta.cfgs[1], ta.cfgs[0]})
	before := ta.ups["alpha"].count()
	_, err := second.Client.Turn(bridgetest.Context(t), ids["alpha"], &aap.PostSessionTurnRequest{Stream: aap.StreamNone,
		Messages: []aap.Message{&aap.UserMessage{Content: aap.TextContent("again")}}})
	require.NoError(t, err)
	assert.Equal(t, before+1, ta.ups["alpha"].count(), "alpha's session still goes to alpha")

	gammaRuns := ta.ups["gamma"].count()
	_, err = second.Client.Turn(bridgetest.Context(t), ids["gamma"], &aap.PostSessionTurnRequest{Stream: aap.StreamNone,
		Messages: []aap.Message{&aap.UserMessage{Content: aap.TextContent("again")}}})
	requireHTTPError(t, err, http.StatusNotFound, "unknown_agent")
	assert.Equal(t, gammaRuns, ta.ups["gamma"].count())
	hist := second.history(t, ids["gamma"], aap.HistoryFull)
	require.Len(t, hist, 2, "the history of a session whose agent left is still served")
	assert.Contains(t, hist[1], "this is gamma")

	info, err := second.Client.GetSession(bridgetest.Context(t), secret)
	require.NoError(t, err)
	assert.Equal(t, "***", info.Agent.Options["api_key"])
}

// Config.Agents and the one-agent fields exclude each other; an agent
// without a name or with a bad upstream is named in the error.
func TestAgentsConfigErrors(t *testing.T) {
	up := "http://127.0.0.1:1/agent"
	for _, tc := range []struct {
		name string
		cfg  aap2agui.Config
		says string
	}{
		{"both forms", aap2agui.Config{Upstream: up, Agents: []aap2agui.AgentConfig{{Agent: aap.AgentInfo{Name: "a"}, Upstream: up}}}, "exclude each other"},
		{"no name", aap2agui.Config{Agents: []aap2agui.AgentConfig{{Upstream: up}}}, "Config.Agents[0] (): the agent needs a name"},
		{"bad upstream", aap2agui.Config{Agents: []aap2agui.AgentConfig{{Agent: aap.AgentInfo{Name: "a"}, Upstream: up}, {Agent: aap.AgentInfo{Name: "b"}, Upstream: "ftp://x"}}}, `Config.Agents[1] (b): Config.Upstream "ftp://x" is not an http(s) URL`},
		{"same name", aap2agui.Config{Agents: []aap2agui.AgentConfig{{Agent: aap.AgentInfo{Name: "a"}, Upstream: up}, {Agent: aap.AgentInfo{Name: "a"}, Upstream: up}}}, `Config.Agents[1]: the name "a" is another agent's too`},
		{"bad header", aap2agui.Config{Agents: []aap2agui.AgentConfig{{Agent: aap.AgentInfo{Name: "a"}, Upstream: up, UpstreamHeader: http.Header{"X-Key": {"a\r\nb"}}}}}, "Config.Agents[0] (a): Config.UpstreamHeader: the value of X-Key holds a control character"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Store = store.NewMemory()
			_, err := aap2agui.New(tc.cfg)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.says)
		})
	}
}

// GET /readyz says which upstreams answer; one that does not leaves the
// server ready for the others. Metrics count turns by agent.
func TestAgentsReadinessAndMetrics(t *testing.T) {
	ta := newThreeAgents(t)
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close()
	cfgs := append([]aap2agui.AgentConfig(nil), ta.cfgs...)
	cfgs[2].Upstream = downURL + "/agent"
	e := ta.server(t, store.NewMemory(), cfgs)

	r := doRaw(t, http.MethodGet, e.Root+"/readyz", "", "")
	require.Equal(t, http.StatusOK, r.Status, r.Body)
	var ready struct {
		Status    string
		Upstreams []struct{ Agent, Status, Error string }
	}
	require.NoError(t, json.Unmarshal([]byte(r.Body), &ready), r.Body)
	assert.Equal(t, "ok", ready.Status)
	require.Len(t, ready.Upstreams, 3)
	for i, name := range []string{"alpha", "beta", "gamma"} {
		assert.Equal(t, name, ready.Upstreams[i].Agent)
		assert.Equal(t, map[bool]string{true: "unreachable", false: "ok"}[name == "gamma"], ready.Upstreams[i].Status, r.Body)
	}
	assert.NotContains(t, r.Body, "/agent", "no upstream URL in the answer")
	assert.Contains(t, ready.Upstreams[2].Error, "refused")

	for _, name := range []string{"alpha", "alpha", "beta", "gamma"} {
		id := e.createSession(t, aap.PostSessionsRequest{Agent: aap.AgentConfig{Name: name}})
		_, _ = e.Client.Turn(bridgetest.Context(t), id, &aap.PostSessionTurnRequest{Stream: aap.StreamNone,
			Messages: []aap.Message{&aap.UserMessage{Content: aap.TextContent("hi")}}})
	}
	m := metricstest.Scrape(t, e.Root+"/metrics", "")
	assert.Equal(t, 2.0, m.Value("aap2agui_upstream_requests_total", "call", "turn", "agent", "alpha", "outcome", "ok"))
	assert.Equal(t, 1.0, m.Value("aap2agui_upstream_requests_total", "call", "turn", "agent", "beta", "outcome", "ok"))
	assert.Equal(t, 1.0, m.Value("aap2agui_upstream_requests_total", "call", "turn", "agent", "gamma", "outcome", "error", "code", "upstream_unreachable"))
	assert.Equal(t, 2.0, m.Value("aap2agui_turn_duration_seconds", "agent", "alpha", "mode", "none"))
}

// sayHello runs a turn saying "hello" in the given mode and returns what
// the client received, as JSON.
func sayHello(t *testing.T, e *env, id string, mode aap.StreamMode) string {
	t.Helper()
	req := aap.PostSessionTurnRequest{Stream: mode, Messages: []aap.Message{&aap.UserMessage{Content: aap.TextContent("hello")}}}
	if mode == aap.StreamNone {
		resp, err := e.Client.Turn(bridgetest.Context(t), id, &req)
		require.NoError(t, err)
		require.Equal(t, aap.StopEndTurn, resp.StopReason)
		return strings.Join(messageLines(t, resp.Messages), "\n")
	}
	evs, err := e.stream(t, id, req)
	require.NoError(t, err)
	return strings.Join(eventLines(t, evs), "\n")
}
