package aap2agui_test

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/demo"
)

// startLangGraphAgent runs interop/langgraph/agent.mjs: a LangGraph.js
// graph with a scripted chat model (@langchain/langgraph 1.7.3), served by
// the LangGraph API server in-process (@langchain/langgraph-api 1.5.1, what
// `langgraph dev` runs) behind @ag-ui/langgraph 0.0.43's LangGraphAgent
// with emitInterruptOutcome. It needs the packages of
// interop/langgraph/package-lock.json (npm ci there; scripts/test does
// it).
func startLangGraphAgent(t *testing.T) string {
	t.Helper()
	return startNodeServer(t, filepath.Join("..", "..", "interop", "langgraph"), "agent.mjs",
		[]string{"@langchain/langgraph", "@langchain/langgraph-api", "@ag-ui/langgraph", "@ag-ui/encoder"},
		"LANGGRAPH_INTERRUPTS=outcome")
}

// The graph's tools, as it runs them: web_search at once, whatever a
// session says (permissions: none); delete_file only once the user
// approves, which the graph asks itself (permissions: aap, so that the
// session enables it; the graph cannot read the session's trust).
var (
	langGraphOwnTools = []aap.ToolSpec{
		{Name: demo.SearchTool, Description: "Search the web.", Parameters: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}}}`)},
	}
	deleteFileTool = aap.ToolSpec{Name: "delete_file", Description: "Delete a file, once the user approves it.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)}
)

func newLangGraphIDs() *ids {
	return &ids{callPattern: regexp.MustCompile(`lg-call-[0-9]+`), interruptPattern: regexp.MustCompile(`\b[0-9a-f]{32}\b`)}
}

// langGraphApproval is the responseSchema of the graph's interrupts.
const langGraphApproval = `{"type":"object","properties":{"approved":{"type":"boolean"},"reason":{"type":"string"}},"required":["approved"]}`

// langGraphPublishInterrupt is the interrupt of the graph's publish node as
// the AAP application sees it (the input of an agui_interrupt call): the
// adapter's bytes, ids normalized.
func langGraphPublishInterrupt(id, text string) string {
	msg, _ := json.Marshal(`Publish "` + text + `"?`)
	return `{"id":"` + id + `","reason":"langgraph:interrupt","message":` + string(msg) + `,"responseSchema":` + langGraphApproval +
		`,"metadata":{"langgraph":{"raw":{"message":` + string(msg) + `,"responseSchema":` + langGraphApproval + `}}}}`
}

func langGraphConversations() []upstreamConversation {
	searchResult := demo.SearchResult("golang tips")
	search := upstreamStep{
		send: userSays("search golang tips"),
		want: []part{
			call("call#1", demo.SearchTool, `{"query":"golang tips"}`),
			result("call#1", searchResult),
			say("Here is what I found. " + searchResult),
		},
		stop: aap.StopEndTurn,
		produced: []string{
			toolUse("call#1", demo.SearchTool, `{"query":"golang tips"}`),
			toolMessage("call#1", searchResult),
			assistantText("Here is what I found. " + searchResult),
		},
	}
	askDelete := upstreamStep{
		send: userSays("delete notes.txt"),
		want: []part{call("call#1", "delete_file", `{"name":"notes.txt"}`)}, stop: aap.StopToolUse,
		produced: []string{toolUse("call#1", "delete_file", `{"name":"notes.txt"}`)},
	}
	askPublish := upstreamStep{
		send: userSays("publish hello world"),
		want: []part{call("int#1", "agui_interrupt", langGraphPublishInterrupt("int#1", "hello world"))}, stop: aap.StopToolUse,
		produced: []string{toolUse("int#1", "agui_interrupt", langGraphPublishInterrupt("int#1", "hello world"))},
	}
	deleteSession := aap.PostSessionsRequest{Agent: aap.AgentConfig{Tools: []aap.ServerToolRef{{Name: "delete_file"}}}}
	return []upstreamConversation{
		{
			name: "echo, twice",
			steps: []upstreamStep{
				{
					send: userSays("hello there"), want: []part{say("You said: hello there")}, stop: aap.StopEndTurn,
					produced: []string{assistantText("You said: hello there")},
				},
				{
					send: userSays("and again"), want: []part{say("You said: and again")}, stop: aap.StopEndTurn,
					produced: []string{assistantText("You said: and again")},
				},
			},
		},
		{
			name:    "weather: a client tool round trip",
			session: aap.PostSessionsRequest{Tools: []aap.ToolSpec{weatherTool}},
			steps: []upstreamStep{
				{
					send: userSays("What is the weather in Tokyo?"),
					want: []part{call("call#1", "get_weather", `{"location":"Tokyo"}`)}, stop: aap.StopToolUse,
					produced: []string{toolUse("call#1", "get_weather", `{"location":"Tokyo"}`)},
				},
				{
					send: answerCall(func(id string) aap.Message {
						return &aap.ToolMessage{ToolCallID: id, Content: aap.TextContent("Sunny, 22°C")}
					}),
					want: []part{say("The weather in Tokyo: Sunny, 22°C")}, stop: aap.StopEndTurn,
					produced: []string{assistantText("The weather in Tokyo: Sunny, 22°C")},
				},
			},
		},
		{
			name: "weather without get_weather",
			steps: []upstreamStep{{
				send: userSays("weather in Oslo"), want: []part{say(demo.NoWeatherTool)}, stop: aap.StopEndTurn,
				produced: []string{assistantText(demo.NoWeatherTool)},
			}},
		},
		{
			name:  "search: the graph's own tool, streamed as an unexposed server tool",
			steps: []upstreamStep{search},
		},
		{
			// The call is streamed again on the resume, before its result:
			// not a second tool_call.
			name:    "delete: a tool_call interrupt, granted",
			session: deleteSession,
			steps: []upstreamStep{askDelete, {
				send: answerCall(func(id string) aap.Message { return &aap.ToolPermissionMessage{ToolCallID: id, Granted: true} }),
				want: []part{result("call#1", "Deleted notes.txt."), say("Done: Deleted notes.txt.")}, stop: aap.StopEndTurn,
				produced: []string{toolMessage("call#1", "Deleted notes.txt."), assistantText("Done: Deleted notes.txt.")},
			}},
		},
		{
			// The graph stores the denial as the call's result itself (its
			// snapshot brings it), and the model reads the reason.
			name:    "delete: a tool_call interrupt, denied",
			session: deleteSession,
			steps: []upstreamStep{askDelete, {
				send: answerCall(func(id string) aap.Message {
					return &aap.ToolPermissionMessage{ToolCallID: id, Reason: "not now"}
				}),
				want: []part{say("Not deleted: not now")}, stop: aap.StopEndTurn,
				recorded: []string{toolMessage("call#1", "Tool call denied: not now")},
				produced: []string{assistantText("Not deleted: not now")},
			}},
		},
		{
			name: "publish: interrupt() in a node, granted",
			steps: []upstreamStep{askPublish, {
				send:     answerInterruptID(func(id string) aap.Message { return &aap.ToolPermissionMessage{ToolCallID: id, Granted: true} }),
				want:     []part{say("Published: hello world")},
				stop:     aap.StopEndTurn,
				recorded: []string{toolMessage("int#1", "Tool call granted; the agent did not report its result.")},
				produced: []string{assistantText("Published: hello world")},
			}},
		},
		{
			name: "publish: interrupt() in a node, denied with a reason",
			steps: []upstreamStep{askPublish, {
				send: answerInterruptID(func(id string) aap.Message {
					return &aap.ToolPermissionMessage{ToolCallID: id, Reason: "not now"}
				}),
				want:     []part{say("Not published: not now")},
				stop:     aap.StopEndTurn,
				recorded: []string{toolMessage("int#1", "Tool call denied: not now")},
				produced: []string{assistantText("Not published: not now")},
			}},
		},
		{
			name: "publish: interrupt() in a node, answered with the resume payload",
			steps: []upstreamStep{askPublish, {
				send: answerInterruptID(func(id string) aap.Message {
					return &aap.ToolMessage{ToolCallID: id, Content: aap.TextContent(`{"approved":false,"reason":"later"}`)}
				}),
				want:     []part{say("Not published: later")},
				stop:     aap.StopEndTurn,
				produced: []string{assistantText("Not published: later")},
			}},
		},
		{
			name: "fail: what was said before RUN_ERROR is kept",
			steps: []upstreamStep{{
				send: userSays("please fail"), want: []part{say(demo.FailPrefix)}, stop: aap.StopError,
				produced: []string{assistantText(demo.FailPrefix)},
			}},
		},
		{
			name:    "history: the graph is sent every call with its result",
			session: aap.PostSessionsRequest{Tools: []aap.ToolSpec{weatherTool}},
			steps: []upstreamStep{
				search,
				{
					send: userSays("weather in Paris"),
					want: []part{call("call#2", "get_weather", `{"location":"Paris"}`)}, stop: aap.StopToolUse,
					produced: []string{toolUse("call#2", "get_weather", `{"location":"Paris"}`)},
				},
				{
					send: answerCall(func(id string) aap.Message {
						return &aap.ToolMessage{ToolCallID: id, Content: aap.TextContent("Rain")}
					}),
					want: []part{say("The weather in Paris: Rain")}, stop: aap.StopEndTurn,
					produced: []string{assistantText("The weather in Paris: Rain")},
				},
				{
					send: userSays("what is in the history?"),
					want: []part{say("History: tool calls: web_search, get_weather.")}, stop: aap.StopEndTurn,
					produced: []string{assistantText("History: tool calls: web_search, get_weather.")},
				},
			},
		},
	}
}

// TestLangGraphAgent runs a real LangGraph.js graph behind aap2agui
// (through the LangGraph API server and @ag-ui/langgraph), in every
// stream mode: text over several turns, a client tool, the graph's own
// server tool, a tool the graph runs only once approved (granted, denied),
// interrupt() in a node (granted, denied, answered with a payload), a model
// error, and a conversation whose history the graph reads back. Its
// threads exist only because aap2agui sends UUID thread ids.
func TestLangGraphAgent(t *testing.T) {
	e := newEnv(t, startLangGraphAgent(t), func(c *aap2agui.Config) {
		c.Agent.Tools = []aap.ToolSpec{deleteFileTool}
		c.OwnTools = langGraphOwnTools
	})
	runUpstreamConversations(t, e, newLangGraphIDs, langGraphConversations())
}
