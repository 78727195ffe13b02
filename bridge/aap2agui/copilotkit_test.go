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

// startCopilotKitAgent runs interop/copilotkit-agent/agent.mjs: CopilotKit's
// BuiltInAgent (@copilotkit/runtime 1.75.0) with the AI SDK's scripted mock
// model, behind the runtime's own Node handler, and returns the URL of the
// agent's AG-UI endpoint (/api/copilotkit/agent/demo/run). It needs the
// packages of interop/copilotkit-agent/package-lock.json (npm ci there;
// scripts/test does it).
func startCopilotKitAgent(t *testing.T) string {
	t.Helper()
	return startNodeServer(t, filepath.Join("..", "..", "interop", "copilotkit-agent"), "agent.mjs",
		[]string{"@copilotkit/runtime", "ai"}, "COPILOTKIT_TELEMETRY_DISABLED=true", "DO_NOT_TRACK=1") + "/api/copilotkit/agent/demo/run"
}

func newCopilotKitIDs() *ids {
	return &ids{callPattern: regexp.MustCompile(`ck-call-[0-9]+`)}
}

func copilotKitConversations() []upstreamConversation {
	searchResult := demo.SearchResult("golang tips")
	searchJSON, _ := json.Marshal(searchResult) // BuiltInAgent sends a tool's result as JSON
	search := upstreamStep{
		send: userSays("search golang tips"),
		want: []part{
			call("call#1", demo.SearchTool, `{"query":"golang tips"}`),
			result("call#1", string(searchJSON)),
			say("Here is what I found. " + searchResult),
		},
		stop: aap.StopEndTurn,
		produced: []string{
			toolUse("call#1", demo.SearchTool, `{"query":"golang tips"}`),
			toolMessage("call#1", string(searchJSON)),
			assistantText("Here is what I found. " + searchResult),
		},
	}
	askDelete := upstreamStep{
		send: userSays("delete notes.txt"),
		want: []part{call("call#1", "delete_file", `{"name":"notes.txt"}`)}, stop: aap.StopToolUse,
		produced: []string{toolUse("call#1", "delete_file", `{"name":"notes.txt"}`)},
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
			name: "think: reasoning, then text",
			steps: []upstreamStep{{
				send: userSays("think about cats"),
				want: []part{think("Thinking about: think about cats"), say(demo.DoneThinking)}, stop: aap.StopEndTurn,
				produced: []string{`{"role":"assistant","content":[{"type":"thinking","thinking":"Thinking about: think about cats"},{"type":"text","text":"Done thinking."}]}`},
			}},
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
			name:  "search: the agent's own tool, streamed as an unexposed server tool",
			steps: []upstreamStep{search},
		},
		{
			// BuiltInAgent hands the model the resume payload as the
			// call's result and reports none.
			name:    "delete: an interrupt tool (id = toolCallId), granted",
			session: deleteSession,
			steps: []upstreamStep{askDelete, {
				send:     answerCall(func(id string) aap.Message { return &aap.ToolPermissionMessage{ToolCallID: id, Granted: true} }),
				want:     []part{say("Deleted notes.txt.")},
				stop:     aap.StopEndTurn,
				recorded: []string{toolMessage("call#1", "Tool call granted; the agent did not report its result.")},
				produced: []string{assistantText("Deleted notes.txt.")},
			}},
		},
		{
			// The denial reaches the model with its reason.
			name:    "delete: an interrupt tool (id = toolCallId), denied",
			session: deleteSession,
			steps: []upstreamStep{askDelete, {
				send: answerCall(func(id string) aap.Message {
					return &aap.ToolPermissionMessage{ToolCallID: id, Reason: "not now"}
				}),
				want:     []part{say("Not deleted: not now")},
				stop:     aap.StopEndTurn,
				recorded: []string{toolMessage("call#1", "Tool call denied: not now")},
				produced: []string{assistantText("Not deleted: not now")},
			}},
		},
		{
			// aap2agui cancels the open interrupt (a cancelled resume
			// entry beside the new message); BuiltInAgent reads the
			// message in the same run and answers it: one run, no other.
			name:    "delete: the user moves on instead of answering",
			session: deleteSession,
			steps: []upstreamStep{askDelete, {
				send: userSays("never mind"), want: []part{say("You said: never mind")}, stop: aap.StopEndTurn,
				recorded: []string{toolMessage("call#1", "Tool call was not answered: the user sent a new message instead.")},
				produced: []string{assistantText("You said: never mind")},
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
			name:    "history: the agent is sent every call with its result",
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

// TestCopilotKitAgent runs CopilotKit's BuiltInAgent behind aap2agui,
// through the runtime's own AG-UI endpoint, in every stream mode: text over
// several turns, reasoning, a client tool, the agent's own server tool, an
// interrupt tool (granted, denied with a reason that reaches the model), a
// model error, and a conversation whose history the agent reads back.
func TestCopilotKitAgent(t *testing.T) {
	e := newEnv(t, startCopilotKitAgent(t), func(c *aap2agui.Config) {
		c.Agent.Tools = []aap.ToolSpec{deleteFileTool}
		c.OwnTools = langGraphOwnTools
	})
	runUpstreamConversations(t, e, newCopilotKitIDs, copilotKitConversations())
}
