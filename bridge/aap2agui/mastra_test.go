package aap2agui_test

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/demo"
)

// startMastraAgent runs interop/mastra/agent.mjs: a real Mastra agent
// (@mastra/core 1.71.0) served through @ag-ui/mastra 1.1.2, with the AI
// SDK's scripted mock model, following the demo script. It needs the
// packages of interop/mastra/package-lock.json (npm ci there; scripts/test
// does it).
func startMastraAgent(t *testing.T) string {
	t.Helper()
	return startNodeServer(t, filepath.Join("..", "..", "interop", "mastra"), "agent.mjs",
		[]string{"@mastra/core", "@ag-ui/mastra", "ai", "@ag-ui/encoder"},
		"MASTRA_TELEMETRY_DISABLED=1")
}

// The Mastra agent's tools, declared as it runs them: on its own, whatever
// a session says (permissions: none).
var mastraTools = []aap.ToolSpec{
	{Name: demo.SearchTool, Description: "Search the web.", Parameters: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}}}`)},
	{Name: "publish", Description: "Publish a text, once the user approves it.", Parameters: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)},
}

// newMastraIDs replaces the ids the Mastra agent makes (mastra-call-<n>
// for tool calls, aap2agui's run-<hex> in interrupt ids
// "<runId>::<toolCallId>" and their metadata) with call#1…, run#, so that
// expectations can be written out in full; it keeps the real ids for the
// turns that answer them.
func newMastraIDs() *ids { return &ids{replace: replaceMastraIDs} }

var (
	mastraCallPattern = regexp.MustCompile(`(run-[0-9a-f]{32}::)?mastra-call-[0-9]+`)
	runIDPattern      = regexp.MustCompile(`run-[0-9a-f]{32}`)
)

func replaceMastraIDs(n *ids, s string) string {
	s = mastraCallPattern.ReplaceAllStringFunc(s, func(id string) string {
		run, callID := "", id
		if m := mastraCallPattern.FindStringSubmatch(id); m[1] != "" {
			run, callID = "run#::", id[len(m[1]):]
			if !slices.Contains(n.interrupts, id) {
				n.interrupts = append(n.interrupts, id)
			}
		}
		return run + "call#" + strconv.Itoa(n.index(&n.calls, callID))
	})
	return runIDPattern.ReplaceAllString(s, "run#")
}

// mastraPublishInterrupt is the interrupt @ag-ui/mastra sends for the
// suspension of the publish tool's call callID, as the AAP application sees
// it (the input of an agui_interrupt call): the agent's bytes, ids
// normalized.
func mastraPublishInterrupt(callID, text string) string {
	schema := `{"type":"object","properties":{"approved":{"type":"boolean"},"reason":{"type":"string"}},"required":["approved"],"additionalProperties":false,"$schema":"http://json-schema.org/draft-07/schema#"}`
	quoted, _ := json.Marshal(schema)
	msg, _ := json.Marshal(`Publish "` + text + `"?`)
	args, _ := json.Marshal(map[string]string{"text": text})
	return `{"id":"run#::` + callID + `","reason":"mastra:tool_suspend","toolCallId":"` + callID + `","responseSchema":` + schema +
		`,"metadata":{"mastra":{"type":"mastra_suspend","toolName":"publish","suspendPayload":{"message":` + string(msg) +
		`},"args":` + string(args) + `,"resumeSchema":` + string(quoted) + `,"runId":"run#"}}}`
}

// askMastraPublish has the agent's publish tool (call callID) suspend for
// the user's approval.
func askMastraPublish(callID, text string) upstreamStep {
	return upstreamStep{
		send: userSays("publish " + text),
		want: []part{call("run#::"+callID, "agui_interrupt", mastraPublishInterrupt(callID, text))}, stop: aap.StopToolUse,
		produced: []string{toolUse("run#::"+callID, "agui_interrupt", mastraPublishInterrupt(callID, text))},
	}
}

// mastraResume answers the publish tool's suspension (call callID) with
// send: the tool runs to its end with content, which the agent tells
// (answer); recorded are the history entries aap2agui records first.
func mastraResume(send func(*ids) []aap.Message, callID, text, content, answer string, recorded ...string) upstreamStep {
	input := `{"text":"` + text + `"}`
	return upstreamStep{
		send: send, stop: aap.StopEndTurn, recorded: recorded,
		want:     []part{call(callID, "publish", input), result(callID, content), say(answer)},
		produced: []string{toolUse(callID, "publish", input), toolMessage(callID, content), assistantText(answer)},
	}
}

func mastraConversations() []upstreamConversation {
	searchContent, _ := json.Marshal(demo.SearchResult("golang tips")) // Mastra sends a tool's result as JSON
	search := searchGolangTips(string(searchContent))
	askPublish := askMastraPublish("call#1", "hello world")
	grant := answerInterrupt(func(id string) aap.Message { return &aap.ToolPermissionMessage{ToolCallID: id, Granted: true} })
	const notPublished = `{"published":false,"reason":"not now"}`
	movesOn := echo("never mind")
	movesOn.recorded = []string{toolMessage("run#::call#1", "Tool call was not answered: the user sent a new message instead.")}
	return []upstreamConversation{
		{name: "echo", steps: []upstreamStep{echo("hello there")}},
		{name: "think: reasoning, then text", steps: []upstreamStep{thinkAboutCats}},
		weatherRoundTrip,
		noWeatherTool,
		{
			name:  "search: the agent's own tool, streamed as an unexposed server tool",
			steps: []upstreamStep{search},
		},
		{
			name: "publish: suspended for approval, granted with a tool_permission",
			steps: []upstreamStep{askPublish, mastraResume(grant, "call#1", "hello world", `{"published":true}`, "Published: hello world",
				toolMessage("run#::call#1", "Tool call granted; the agent did not report its result."))},
		},
		{
			name: "publish: answered with the resume payload as a tool result",
			steps: []upstreamStep{askPublish, mastraResume(answerInterrupt(func(id string) aap.Message {
				return &aap.ToolMessage{ToolCallID: id, Content: aap.TextContent(`{"approved":false,"reason":"not now"}`)}
			}), "call#1", "hello world", notPublished, "Not published: not now")},
		},
		{
			// The suspension's schema asks for an approval: the denial
			// resumes the tool with {approved:false, reason}, which it
			// reads (rather than a cancelled resume, which would end the
			// run at once and leave the reason unread).
			name: "publish: denied with a tool_permission, the reason reaches the tool",
			steps: []upstreamStep{askPublish, mastraResume(answerInterrupt(func(id string) aap.Message {
				return &aap.ToolPermissionMessage{ToolCallID: id, Granted: false, Reason: "not now"}
			}), "call#1", "hello world", notPublished, "Not published: not now", toolMessage("run#::call#1", "Tool call denied: not now"))},
		},
		{
			// aap2agui closes the open interrupt with a cancelled resume
			// entry; @ag-ui/mastra then ends the run at once without
			// reading the new message (RUN_STARTED, RUN_FINISHED, nothing
			// between). A run carrying the message follows in the same
			// turn (CancelRunAuto), and the agent answers it. The history
			// stays valid and the next message is answered.
			name:  "publish: the user moves on instead of answering",
			steps: []upstreamStep{askPublish, movesOn, echo("hello again")},
		},
		failing,
		{
			name:    "history: the agent is sent every call with its result",
			session: aap.PostSessionsRequest{Tools: []aap.ToolSpec{weatherSpec}},
			steps: []upstreamStep{
				search,
				askMastraPublish("call#2", "hi"),
				mastraResume(grant, "call#2", "hi", `{"published":true}`, "Published: hi",
					toolMessage("run#::call#2", "Tool call granted; the agent did not report its result.")),
				askWeather("weather in Paris", "Paris", "call#3"),
				weatherIs("Paris", "Rain"),
				askHistory("web_search, publish, get_weather"),
			},
		},
	}
}

// TestMastraAgent runs a real Mastra agent behind aap2agui, in every stream
// mode: text, reasoning, a client tool, the agent's own server tool, a tool
// that suspends for approval (granted, answered with a payload, denied),
// an error, and a conversation whose history the agent reads back. It
// checks the exact AAP events (or the none-mode response), that the stored
// history is exactly the conversation, and that it is valid AAP.
func TestMastraAgent(t *testing.T) {
	e := newEnv(t, startMastraAgent(t), func(c *aap2agui.Config) {
		c.Agent.Tools = nil
		c.OwnTools = mastraTools
	})
	runUpstreamConversations(t, e, newMastraIDs, mastraConversations())
}
