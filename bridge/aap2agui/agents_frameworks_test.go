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

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/demo"
)

// Several real agents behind one aap2agui: the conversations of the
// one-agent tests (copilotkit_test.go, mastra_test.go, turn_test.go),
// played with each agent of a server that serves several.

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
	meta, err := e.Client.Meta(bridgetest.Context(t))
	require.NoError(t, err)
	var names []string
	for _, a := range meta.Agents {
		names = append(names, a.Name)
	}
	return names
}

// copilotKitRuntimeAgents are the two agents of
// interop/copilotkit-agent's runtime (at runtime), each with its server
// tools, one of which it runs on its own: one upstream, whose URL names
// the agent, serves both (as the several-agent --agent-config writes it
// once, with {agent} in its URL).
func copilotKitRuntimeAgents(runtime string) []aap2agui.AgentConfig {
	e := &aap.Empty{}
	caps := &aap.Capabilities{
		History:     &aap.HistoryCapabilities{Compacted: e, Full: e},
		Stream:      &aap.StreamCapabilities{Delta: e, Message: e, None: e},
		Application: &aap.ApplicationCapabilities{Tools: e},
	}
	tool := func(name, description, param string) aap.ToolSpec {
		return aap.ToolSpec{Name: name, Description: description,
			Parameters: json.RawMessage(`{"properties":{"` + param + `":{"type":"string"}},"type":"object"}`)}
	}
	agent := func(name, title string, tool, own aap.ToolSpec) aap2agui.AgentConfig {
		return aap2agui.AgentConfig{
			Agent:    aap.AgentInfo{Name: name, Title: title, Version: "1.0.0", Capabilities: caps, Tools: []aap.ToolSpec{tool}},
			OwnTools: []aap.ToolSpec{own},
			Upstream: runtime + "/api/copilotkit/agent/" + name + "/run",
		}
	}
	return []aap2agui.AgentConfig{
		agent("demo", "CopilotKit demo",
			tool("delete_file", "Delete a file, once the user approves it.", "name"),
			tool("web_search", "Search the web.", "query")),
		agent("helper", "CopilotKit helper",
			tool("archive_file", "Archive a file, once the user approves it.", "name"),
			tool("doc_lookup", "Look a query up in the documentation.", "query")),
	}
}

// copilotKitHelperConversations are those of the runtime's second agent,
// helper: its own words, its own tool run at once (doc_lookup), its own
// interrupt tool (archive_file).
func copilotKitHelperConversations() []upstreamConversation {
	const lookupResult = "Docs for golang tips: two pages mention golang tips."
	lookupJSON, _ := json.Marshal(lookupResult) // BuiltInAgent sends a tool's result as JSON
	askArchive, archiveSession := askFile("archive", "archive_file"), enabling("archive_file")
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
// runtime (demo and helper) behind one aap2agui, each at the runtime's URL
// for it (copilotKitRuntimeAgents): GET /meta lists both, and each
// session, in every stream mode, is answered by its own agent, with its
// own words and tools, the history exactly what was streamed.
func TestAgentsCopilotKitRuntime(t *testing.T) {
	runtime := strings.TrimSuffix(startCopilotKitAgent(t), "/api/copilotkit/agent/demo/run")
	agents := copilotKitRuntimeAgents(runtime)
	e := newEnv(t, "", func(c *aap2agui.Config) { c.Upstream, c.Agent, c.Agents = "", aap.AgentInfo{}, agents })
	assert.Equal(t, []string{"demo", "helper"}, metaNames(t, e))

	// The same words reach the other agent: each answers its own way.
	demoConvs := namedConversations(t, copilotKitConversations(),
		"echo, twice", "search: the agent's own tool, streamed as an unexposed server tool",
		"delete: an interrupt tool (id = toolCallId), granted", "weather: a client tool round trip")
	servedAgent{e: e, name: "demo"}.playAll(t, fromUpstream(demoConvs, newCopilotKitIDs))
	servedAgent{e: e, name: "helper"}.playAll(t, fromUpstream(copilotKitHelperConversations(), newCopilotKitIDs))

	// One agent's tools are not the other's.
	_, err := e.Client.CreateSession(bridgetest.Context(t), &aap.PostSessionsRequest{
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
	mastraConvs := namedConversations(t, mastraConversations(), "echo", "think: reasoning, then text",
		"weather: a client tool round trip", "search: the agent's own tool, streamed as an unexposed server tool",
		"publish: suspended for approval, granted with a tool_permission")
	servedAgent{e: e, name: "mastra", runs: runs}.playAll(t, fromUpstream(mastraConvs, newMastraIDs))
	servedAgent{e: e, name: "docs", runs: runs}.playAll(t, demoSearchConversations("doc_search"))

	// One demo's tool is not the other's.
	for agent, tool := range map[string]string{"demo": "doc_search", "docs": demo.SearchTool, "mastra": demo.SearchTool} {
		_, err = e.Client.CreateSession(bridgetest.Context(t), &aap.PostSessionsRequest{
			Agent: aap.AgentConfig{Name: agent, Tools: []aap.ServerToolRef{{Name: tool}}}})
		requireHTTPError(t, err, http.StatusBadRequest, "invalid_request")
	}
}
