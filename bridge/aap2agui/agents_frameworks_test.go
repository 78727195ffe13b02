package aap2agui_test

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/demo"
)

// Several real agents behind one aap2agui: the conversations of the
// one-agent tests (copilotkit_test.go, mastra_test.go, turn_test.go),
// played with each agent of a server that serves several.

// playedStep is one turn of a conversation with one agent of the server.
type playedStep struct {
	send func() []aap.Message
	want []part
	stop aap.StopReason
	// recorded are the history entries the turn adds before the run's own
	// messages; produced are the run's messages (the none-mode response).
	recorded, produced []string
}

// playedConversation is a conversation with one agent: play makes its
// steps afresh, bound to the id normalizer they share (lines).
type playedConversation struct {
	name    string
	session aap.PostSessionsRequest
	play    func() (steps []playedStep, lines func([]string) []string)
}

// runCounter counts the runs (POSTs) each upstream is sent.
type runCounter struct {
	mu sync.Mutex
	n  map[string]int
}

// wrap counts h's runs under name.
func (c *runCounter) wrap(name string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			c.mu.Lock()
			c.n[name]++
			c.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	})
}

func (c *runCounter) snapshot() map[string]int {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.n)
}

// servedAgent is one agent of the server under test; runs, where each
// agent has an upstream of its own, counts what each upstream was sent.
type servedAgent struct {
	e    *env
	name string
	runs *runCounter
}

// playAll plays each conversation with the agent in every stream mode.
func (a servedAgent) playAll(t *testing.T, convs []playedConversation) {
	t.Helper()
	for _, conv := range convs {
		for _, mode := range []aap.StreamMode{aap.StreamDelta, aap.StreamMessage, aap.StreamNone} {
			t.Run(a.name+"/"+conv.name+"/"+string(mode), func(t *testing.T) { a.play(t, conv, mode) })
		}
	}
}

// play checks every turn's events (or none-mode response), that only the
// agent's upstream ran it, that the stored history is exactly the
// conversation, and that it is valid AAP.
func (a servedAgent) play(t *testing.T, conv playedConversation, mode aap.StreamMode) {
	session := conv.session
	session.Agent.Name = a.name
	id := a.e.createSession(t, session)
	info, err := a.e.Client.GetSession(testContext(t), id)
	require.NoError(t, err)
	require.Equal(t, a.name, info.Agent.Name)
	steps, lines := conv.play()
	var conversation []string
	for i, st := range steps {
		before := a.runs.snapshot()
		msgs := a.turn(t, id, mode, st, lines, i)
		if before != nil {
			after := a.runs.snapshot()
			for name := range after {
				if name == a.name {
					assert.Greater(t, after[name], before[name], "step %d: the session's agent ran the turn", i)
				} else {
					assert.Equal(t, before[name], after[name], "step %d: agent %s was not sent the turn", i, name)
				}
			}
		}
		conversation = append(conversation, st.recorded...)
		for _, m := range msgs {
			if m.Role() != aap.RoleToolPermission {
				conversation = append(conversation, lines(messageLines(t, []aap.Message{m}))...)
			}
		}
		conversation = append(conversation, st.produced...)
		assert.Equal(t, conversation, lines(a.e.history(t, id, aap.HistoryFull)), "step %d: full history", i)
		assert.Empty(t, historyProblems(a.e.historyMessages(t, id)), "step %d", i)
	}
}

// turn sends one step's messages in mode, checks what came back, and
// returns the messages sent.
func (a servedAgent) turn(t *testing.T, id string, mode aap.StreamMode, st playedStep, lines func([]string) []string, i int) []aap.Message {
	t.Helper()
	msgs := st.send()
	req := aap.PostSessionTurnRequest{Stream: mode, Messages: msgs}
	if mode == aap.StreamNone {
		resp, err := a.e.Client.Turn(testContext(t), id, &req)
		require.NoError(t, err, "step %d", i)
		assert.Equal(t, st.stop, resp.StopReason, "step %d", i)
		produced := st.produced
		if produced == nil {
			produced = []string{}
		}
		assert.Equal(t, produced, lines(messageLines(t, resp.Messages)), "step %d: response messages", i)
		return msgs
	}
	evs, err := a.e.stream(t, id, req)
	require.NoError(t, err, "step %d", i)
	assert.Equal(t, eventsOf(t, mode, st.want, st.stop), lines(eventLines(t, evs)), "step %d: events", i)
	return msgs
}

// fromUpstream plays conversations written for runUpstreamConversations.
func fromUpstream(convs []upstreamConversation, newIDs func() *ids) []playedConversation {
	out := make([]playedConversation, len(convs))
	for k, conv := range convs {
		out[k] = playedConversation{name: conv.name, session: conv.session, play: func() ([]playedStep, func([]string) []string) {
			n := newIDs()
			steps := make([]playedStep, len(conv.steps))
			for i, st := range conv.steps {
				steps[i] = playedStep{send: func() []aap.Message { return st.send(n) }, want: st.want, stop: st.stop,
					recorded: st.recorded, produced: st.produced}
			}
			return steps, n.lines
		}}
	}
	return out
}

// fromMastra plays the conversations of TestMastraAgent with these names.
func fromMastra(t *testing.T, names ...string) []playedConversation {
	t.Helper()
	var out []playedConversation
	for _, conv := range mastraConversations() {
		if !slices.Contains(names, conv.name) {
			continue
		}
		out = append(out, playedConversation{name: conv.name, session: conv.session, play: func() ([]playedStep, func([]string) []string) {
			n := &mastraIDs{}
			steps := make([]playedStep, len(conv.steps))
			for i, st := range conv.steps {
				steps[i] = playedStep{send: func() []aap.Message { return st.send(n) }, want: st.want, stop: st.stop,
					recorded: st.recorded, produced: st.produced}
			}
			return steps, n.lines
		}})
	}
	require.Len(t, out, len(names), "every conversation named is one of TestMastraAgent's")
	return out
}

// fromDemo plays a conversation with the demo AG-UI agent (turn_test.go's
// steps).
func fromDemo(name string, session aap.PostSessionsRequest, steps []step) playedConversation {
	return playedConversation{name: name, session: session, play: func() ([]playedStep, func([]string) []string) {
		var norm idNormalizer
		out := make([]playedStep, len(steps))
		for i, st := range steps {
			out[i] = playedStep{send: func() []aap.Message { return st.send(norm.ids) }, want: st.want, stop: st.stop, produced: st.produced}
		}
		return out, norm.lines
	}}
}

// namedConversations are those of convs with these names, in that order.
func namedConversations(t *testing.T, convs []upstreamConversation, names ...string) []upstreamConversation {
	t.Helper()
	out := make([]upstreamConversation, 0, len(names))
	for _, name := range names {
		k := slices.IndexFunc(convs, func(c upstreamConversation) bool { return c.name == name })
		require.GreaterOrEqual(t, k, 0, "no conversation %q", name)
		out = append(out, convs[k])
	}
	return out
}

// metaNames are the names of the agents of GET /meta, in order.
func metaNames(t *testing.T, e *env) []string {
	t.Helper()
	meta, err := e.Client.Meta(testContext(t))
	require.NoError(t, err)
	var names []string
	for _, a := range meta.Agents {
		names = append(names, a.Name)
	}
	return names
}

// copilotKitRuntimeConfig is the several-agent --agent-config of the two
// agents of interop/copilotkit-agent's runtime: one upstream, whose URL
// names the agent, used by both.
const copilotKitRuntimeConfig = `
upstreams:
  runtime:
    url: RUNTIME/api/copilotkit/agent/{agent}/run
agents:
  - name: demo
    title: CopilotKit demo
    version: 1.0.0
    capabilities: &caps
      history: {compacted: {}, full: {}}
      stream: {delta: {}, message: {}, none: {}}
      application: {tools: {}}
    tools:
      - name: delete_file
        description: Delete a file, once the user approves it.
        parameters: {type: object, properties: {name: {type: string}}}
      - name: web_search
        description: Search the web.
        parameters: {type: object, properties: {query: {type: string}}}
        permissions: none
    upstream: runtime
  - name: helper
    title: CopilotKit helper
    version: 1.0.0
    capabilities: *caps
    tools:
      - name: archive_file
        description: Archive a file, once the user approves it.
        parameters: {type: object, properties: {name: {type: string}}}
      - name: doc_lookup
        description: Look a query up in the documentation.
        parameters: {type: object, properties: {query: {type: string}}}
        permissions: none
    upstream: runtime
`

// copilotKitHelperConversations are those of the runtime's second agent,
// helper: its own words, its own tool run at once (doc_lookup), its own
// interrupt tool (archive_file).
func copilotKitHelperConversations() []upstreamConversation {
	const lookupResult = "Docs for golang tips: two pages mention golang tips."
	lookupJSON, _ := json.Marshal(lookupResult) // BuiltInAgent sends a tool's result as JSON
	askArchive := upstreamStep{
		send: userSays("archive notes.txt"),
		want: []part{call("call#1", "archive_file", `{"name":"notes.txt"}`)}, stop: aap.StopToolUse,
		produced: []string{toolUse("call#1", "archive_file", `{"name":"notes.txt"}`)},
	}
	archiveSession := aap.PostSessionsRequest{Agent: aap.AgentConfig{Tools: []aap.ServerToolRef{{Name: "archive_file"}}}}
	return []upstreamConversation{
		{
			name: "echo",
			steps: []upstreamStep{{
				send: userSays("hello there"), want: []part{say("Helper here. You said: hello there")}, stop: aap.StopEndTurn,
				produced: []string{assistantText("Helper here. You said: hello there")},
			}},
		},
		{
			name: "search: the agent's own doc_lookup",
			steps: []upstreamStep{{
				send: userSays("search golang tips"),
				want: []part{
					call("call#1", "doc_lookup", `{"query":"golang tips"}`),
					result("call#1", string(lookupJSON)),
					say("From the docs: " + lookupResult),
				},
				stop: aap.StopEndTurn,
				produced: []string{
					toolUse("call#1", "doc_lookup", `{"query":"golang tips"}`),
					toolMessage("call#1", string(lookupJSON)),
					assistantText("From the docs: " + lookupResult),
				},
			}},
		},
		{
			name:    "archive: an interrupt tool, granted",
			session: archiveSession,
			steps: []upstreamStep{askArchive, {
				send:     answerCall(func(id string) aap.Message { return &aap.ToolPermissionMessage{ToolCallID: id, Granted: true} }),
				want:     []part{say("Archived notes.txt.")},
				stop:     aap.StopEndTurn,
				recorded: []string{toolMessage("call#1", "Tool call granted; the agent did not report its result.")},
				produced: []string{assistantText("Archived notes.txt.")},
			}},
		},
		{
			name:    "archive: an interrupt tool, denied",
			session: archiveSession,
			steps: []upstreamStep{askArchive, {
				send: answerCall(func(id string) aap.Message {
					return &aap.ToolPermissionMessage{ToolCallID: id, Reason: "not now"}
				}),
				want:     []part{say("Not archived: not now")},
				stop:     aap.StopEndTurn,
				recorded: []string{toolMessage("call#1", "Tool call denied: not now")},
				produced: []string{assistantText("Not archived: not now")},
			}},
		},
	}
}

// TestAgentsCopilotKitRuntime serves the two agents of one CopilotKit
// runtime (demo and helper) behind one aap2agui, configured as the
// several-agent --agent-config with one upstream whose URL names the
// agent ({agent}): GET /meta lists both, and each session, in every stream
// mode, is answered by its own agent, with its own words and tools, the
// history exactly what was streamed.
func TestAgentsCopilotKitRuntime(t *testing.T) {
	runtime := strings.TrimSuffix(startCopilotKitAgent(t), "/api/copilotkit/agent/demo/run")
	js, err := yaml.YAMLToJSON([]byte(strings.Replace(copilotKitRuntimeConfig, "RUNTIME", runtime, 1)))
	require.NoError(t, err)
	require.True(t, aap2agui.IsAgentsConfig(js))
	agents, err := aap2agui.LoadAgentsConfig(js, func(string) string { return "" })
	require.NoError(t, err)
	require.Len(t, agents, 2)
	for _, a := range agents {
		require.Equal(t, runtime+"/api/copilotkit/agent/"+a.Agent.Name+"/run", a.Upstream)
	}
	e := newEnv(t, "", func(c *aap2agui.Config) { c.Upstream, c.Agent, c.Agents = "", aap.AgentInfo{}, agents })
	assert.Equal(t, []string{"demo", "helper"}, metaNames(t, e))

	// The same words reach the other agent: each answers its own way.
	demoConvs := namedConversations(t, copilotKitConversations(),
		"echo, twice", "search: the agent's own tool, streamed as an unexposed server tool",
		"delete: an interrupt tool (id = toolCallId), granted", "weather: a client tool round trip")
	servedAgent{e: e, name: "demo"}.playAll(t, fromUpstream(demoConvs, newCopilotKitIDs))
	servedAgent{e: e, name: "helper"}.playAll(t, fromUpstream(copilotKitHelperConversations(), newCopilotKitIDs))

	// One agent's tools are not the other's.
	_, err = e.Client.CreateSession(testContext(t), &aap.PostSessionsRequest{
		Agent: aap.AgentConfig{Name: "helper", Tools: []aap.ServerToolRef{{Name: "delete_file"}}}})
	requireHTTPError(t, err, http.StatusBadRequest, "invalid_request")
}

// demoSearchConversations are those of a demo AG-UI agent whose search
// goes by the name tool: its words, and its server tool run inline when
// trusted, after the user's permission otherwise, or not at all when the
// session does not enable it.
func demoSearchConversations(tool string) []playedConversation {
	searchResult := demo.SearchResult("golang tips")
	args := `{"query":"golang tips"}`
	ask := step{
		send: user("search golang tips"), want: []part{call("call#1", tool, args)}, stop: aap.StopToolUse,
		produced: []string{toolUse("call#1", tool, args)},
	}
	enabled := func(trust bool) aap.PostSessionsRequest {
		return aap.PostSessionsRequest{Agent: aap.AgentConfig{Tools: []aap.ServerToolRef{{Name: tool, Trust: trust}}}}
	}
	notEnabled := strings.Replace(demo.NoSearchTool, demo.SearchTool, tool, 1)
	return []playedConversation{
		fromDemo("echo", aap.PostSessionsRequest{}, []step{{
			send: user("hello there"), want: []part{say("You said: hello there")}, stop: aap.StopEndTurn,
			produced: []string{assistantText("You said: hello there")},
		}}),
		fromDemo("search trusted: the server tool runs inline", enabled(true), []step{{
			send: user("search golang tips"),
			want: []part{call("call#1", tool, args), result("call#1", searchResult), say(demo.SearchAnswer(searchResult))},
			stop: aap.StopEndTurn,
			produced: []string{toolUse("call#1", tool, args), toolMessage("call#1", searchResult),
				assistantText(demo.SearchAnswer(searchResult))},
		}}),
		fromDemo("search untrusted, permission granted", enabled(false), []step{ask, {
			send: permission(true, ""),
			want: []part{result("call#1", searchResult), say(demo.SearchAnswer(searchResult))}, stop: aap.StopEndTurn,
			produced: []string{toolMessage("call#1", searchResult), assistantText(demo.SearchAnswer(searchResult))},
		}}),
		fromDemo("search untrusted, permission denied", enabled(false), []step{ask, {
			send: permission(false, "not now"),
			want: []part{result("call#1", demo.DeniedResult("not now")), say(demo.DeniedText("not now"))}, stop: aap.StopEndTurn,
			produced: []string{toolMessage("call#1", demo.DeniedResult("not now")), assistantText(demo.DeniedText("not now"))},
		}}),
		fromDemo("search not enabled", aap.PostSessionsRequest{}, []step{{
			send: user("search golang tips"), want: []part{say(notEnabled)}, stop: aap.StopEndTurn,
			produced: []string{assistantText(notEnabled)},
		}}),
	}
}

// TestAgentsThreeFrameworks serves three agents on three upstreams behind
// one aap2agui (Config.Agents): the demo AG-UI agent (web_search), the
// Mastra agent, and a second demo agent whose search is doc_search. Each
// session, in every stream mode, is run by its own agent's upstream alone
// and answered by it: text, and each one's own server tools (the demos'
// permission flow under each one's tool name; Mastra's own web_search, a
// client tool, and its tool that suspends for approval); the history is
// exactly what was streamed, and valid.
func TestAgentsThreeFrameworks(t *testing.T) {
	mastraURL, err := url.Parse(startMastraAgent(t))
	require.NoError(t, err)
	runs := &runCounter{n: map[string]int{"demo": 0, "mastra": 0, "docs": 0}}
	docs := demo.AGUIAgent{SearchTool: "doc_search"}
	caps := aap2agui.DefaultAgent().Capabilities
	agents := []aap2agui.AgentConfig{
		{Agent: aap.AgentInfo{Name: "demo", Title: "Demo", Capabilities: caps, Tools: []aap.ToolSpec{demo.SearchToolSpec}},
			Upstream: serve(t, runs.wrap("demo", demo.AGUIAgent{}))},
		{Agent: aap.AgentInfo{Name: "mastra", Title: "Mastra", Capabilities: caps}, OwnTools: mastraTools,
			Upstream: serve(t, runs.wrap("mastra", httputil.NewSingleHostReverseProxy(mastraURL)))},
		{Agent: aap.AgentInfo{Name: "docs", Title: "Docs", Capabilities: caps, Tools: []aap.ToolSpec{docs.SearchSpec()}},
			Upstream: serve(t, runs.wrap("docs", docs))},
	}
	e := newEnv(t, "", func(c *aap2agui.Config) { c.Upstream, c.Agent, c.Agents = "", aap.AgentInfo{}, agents })
	assert.Equal(t, []string{"demo", "mastra", "docs"}, metaNames(t, e))

	servedAgent{e: e, name: "demo", runs: runs}.playAll(t, demoSearchConversations(demo.SearchTool))
	servedAgent{e: e, name: "mastra", runs: runs}.playAll(t, fromMastra(t, "echo", "think: reasoning, then text",
		"weather: a client tool round trip", "search: the agent's own tool, streamed as an unexposed server tool",
		"publish: suspended for approval, granted with a tool_permission"))
	servedAgent{e: e, name: "docs", runs: runs}.playAll(t, demoSearchConversations("doc_search"))

	// One demo's tool is not the other's.
	for agent, tool := range map[string]string{"demo": "doc_search", "docs": demo.SearchTool, "mastra": demo.SearchTool} {
		_, err = e.Client.CreateSession(testContext(t), &aap.PostSessionsRequest{
			Agent: aap.AgentConfig{Name: agent, Tools: []aap.ServerToolRef{{Name: tool}}}})
		requireHTTPError(t, err, http.StatusBadRequest, "invalid_request")
	}
}
