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

var newCopilotKitIDs = byPattern(regexp.MustCompile(`ck-call-[0-9]+`), nil)

func copilotKitConversations() []upstreamConversation {
	searchJSON, _ := json.Marshal(demo.SearchResult("golang tips")) // BuiltInAgent sends a tool's result as JSON
	search := searchGolangTips(string(searchJSON))
	askDelete, deleteSession := askFile("delete", "delete_file"), enabling("delete_file")
	movesOn := echo("never mind")
	movesOn.recorded = []string{toolMessage("call#1", "Tool call was not answered: the user sent a new message instead.")}
	return []upstreamConversation{
		echoTwice,
		{name: "think: reasoning, then text", steps: []upstreamStep{thinkAboutCats}},
		weatherRoundTrip,
		noWeatherTool,
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
			steps:   []upstreamStep{askDelete, movesOn},
		},
		failing,
		{
			name:    "history: the agent is sent every call with its result",
			session: aap.PostSessionsRequest{Tools: []aap.ToolSpec{weatherSpec}},
			steps: []upstreamStep{search, askWeather("weather in Paris", "Paris", "call#2"), weatherIs("Paris", "Rain"),
				askHistory("web_search, get_weather")},
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
