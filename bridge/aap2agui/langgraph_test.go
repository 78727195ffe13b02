package aap2agui_test

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/demo"
)

// startLangGraphAgent runs interop/langgraph/agent.mjs: a LangGraph.js
// graph with a scripted chat model (@langchain/langgraph 1.7.3), served by
// the LangGraph API server in-process (@langchain/langgraph-api 1.5.1, what
// `langgraph dev` runs) behind @ag-ui/langgraph 0.0.43's LangGraphAgent
// reporting interrupts as interrupts says: "outcome" (emitInterruptOutcome:
// RUN_FINISHED's interrupt outcome) or "default" (the adapter's default: a
// CUSTOM on_interrupt event, and a RUN_FINISHED without outcome). It needs
// the packages of interop/langgraph/package-lock.json (npm ci there;
// scripts/test does it).
func startLangGraphAgent(t *testing.T, interrupts string) string {
	t.Helper()
	return startNodeServer(t, filepath.Join("..", "..", "interop", "langgraph"), "agent.mjs",
		[]string{"@langchain/langgraph", "@langchain/langgraph-api", "@ag-ui/langgraph", "@ag-ui/encoder"},
		"LANGGRAPH_INTERRUPTS="+interrupts, "LANGGRAPH_DATA_DIR="+t.TempDir())
}

// The graph's tools, as it runs them: web_search at once, whatever a
// session says (permissions: none); delete_file only once the user
// approves, which the graph asks itself (permissions: aap, so that the
// session enables it; the graph cannot read the session's trust).
var (
	langGraphOwnTools = []aap.ToolSpec{
		{Name: demo.SearchTool, Description: "Search the web.", Parameters: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}}}`)},
		{Name: "post", Description: "Post a text, asking the user first.", Parameters: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)},
	}
	deleteFileTool = aap.ToolSpec{Name: "delete_file", Description: "Delete a file, once the user approves it.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)}
)

var newLangGraphIDs = byPattern(regexp.MustCompile(`lg-call-[0-9]+`), regexp.MustCompile(`\b[0-9a-f]{32}\b`))

// langGraphApproval is the responseSchema of the graph's interrupts.
const langGraphApproval = `{"type":"object","properties":{"approved":{"type":"boolean"},"reason":{"type":"string"}},"required":["approved"]}`

// langGraphPublishInterrupt is the interrupt of the graph's publish node as
// the AAP application sees it (the input of an agui_interrupt call), ids
// normalized: the adapter's bytes from an interrupt outcome; from an
// on_interrupt event, the interrupt aap2agui reads from it (the same
// fields, the JSON objects' keys sorted).
func langGraphPublishInterrupt(interrupts, id, text string) string {
	msg, _ := json.Marshal(`Publish "` + text + `"?`)
	schema := langGraphApproval
	if interrupts == "default" {
		schema = `{"properties":{"approved":{"type":"boolean"},"reason":{"type":"string"}},"required":["approved"],"type":"object"}`
	}
	return `{"id":"` + id + `","reason":"langgraph:interrupt","message":` + string(msg) + `,"responseSchema":` + schema +
		`,"metadata":{"langgraph":{"raw":{"message":` + string(msg) + `,"responseSchema":` + schema + `}}}}`
}

// langGraphPostInterrupt is the interrupt of the post tool, as
// langGraphPublishInterrupt.
func langGraphPostInterrupt(interrupts, id, text string) string {
	return strings.ReplaceAll(langGraphPublishInterrupt(interrupts, id, text), "Publish", "Post")
}

// askLangGraphPublish has the graph's publish node ask for approval with
// interrupt().
func askLangGraphPublish(interrupts string) upstreamStep {
	return upstreamStep{
		send: userSays("publish hello world"),
		want: []part{call("int#1", "agui_interrupt", langGraphPublishInterrupt(interrupts, "int#1", "hello world"))}, stop: aap.StopToolUse,
		produced: []string{toolUse("int#1", "agui_interrupt", langGraphPublishInterrupt(interrupts, "int#1", "hello world"))},
	}
}

// langGraphConversations are the conversations with the graph; with
// interrupts "default", only those with interrupts.
func langGraphConversations(interrupts string) []upstreamConversation {
	search := searchGolangTips(demo.SearchResult("golang tips"))
	askDelete, deleteSession := askFile("delete", "delete_file"), enabling("delete_file")
	askPublish := askLangGraphPublish(interrupts)
	all := []upstreamConversation{
		echoTwice,
		{
			// The adapter streams the thinking block as reasoning; its
			// snapshot has no reasoning message for it.
			name:  "think: a thinking block, then text",
			steps: []upstreamStep{thinkAboutCats},
		},
		weatherRoundTrip,
		noWeatherTool,
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
				send:     answerInterrupt(func(id string) aap.Message { return &aap.ToolPermissionMessage{ToolCallID: id, Granted: true} }),
				want:     []part{say("Published: hello world")},
				stop:     aap.StopEndTurn,
				recorded: []string{toolMessage("int#1", "Tool call granted; the agent did not report its result.")},
				produced: []string{assistantText("Published: hello world")},
			}},
		},
		{
			name: "publish: interrupt() in a node, denied with a reason",
			steps: []upstreamStep{askPublish, {
				send: answerInterrupt(func(id string) aap.Message {
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
				send: answerInterrupt(func(id string) aap.Message {
					return &aap.ToolMessage{ToolCallID: id, Content: aap.TextContent(`{"approved":false,"reason":"later"}`)}
				}),
				want:     []part{say("Not published: later")},
				stop:     aap.StopEndTurn,
				produced: []string{assistantText("Not published: later")},
			}},
		},
		{
			// The interrupt comes from inside a tool the graph runs on its
			// own, after its call was streamed: answering the interrupt
			// is enough (the application cannot run the tool); on the
			// resume the graph runs the tool again, to its end. The run's
			// message holding the call is in the graph's snapshot, so the
			// interrupt call goes in history as a message of its own.
			name: "post: interrupt() inside the graph's own tool, granted",
			steps: []upstreamStep{
				{
					send: userSays("post hello"),
					want: []part{call("call#1", "post", `{"text":"hello"}`), call("int#1", "agui_interrupt", langGraphPostInterrupt(interrupts, "int#1", "hello"))},
					stop: aap.StopToolUse,
					produced: []string{`{"role":"assistant","content":[{"type":"tool_use","toolCallId":"call#1","name":"post","input":{"text":"hello"}},` +
						`{"type":"tool_use","toolCallId":"int#1","name":"agui_interrupt","input":` + langGraphPostInterrupt(interrupts, "int#1", "hello") + `}]}`},
					history: []string{
						`{"role":"user","content":"post hello"}`,
						toolUse("call#1", "post", `{"text":"hello"}`),
						toolUse("int#1", "agui_interrupt", langGraphPostInterrupt(interrupts, "int#1", "hello")),
					},
				},
				{
					send:     answerInterrupt(func(id string) aap.Message { return &aap.ToolPermissionMessage{ToolCallID: id, Granted: true} }),
					want:     []part{result("call#1", `Posted "hello".`), say(`Here is what happened: Posted "hello".`)},
					stop:     aap.StopEndTurn,
					produced: []string{toolMessage("call#1", `Posted "hello".`), assistantText(`Here is what happened: Posted "hello".`)},
					history: []string{
						`{"role":"user","content":"post hello"}`,
						toolUse("call#1", "post", `{"text":"hello"}`),
						toolUse("int#1", "agui_interrupt", langGraphPostInterrupt(interrupts, "int#1", "hello")),
						toolMessage("call#1", `Posted "hello".`),
						toolMessage("int#1", "Tool call granted; the agent did not report its result."),
						assistantText(`Here is what happened: Posted "hello".`),
					},
				},
			},
		},
		{
			// aap2agui cancels the open interrupt (a cancelled resume
			// entry beside the new message); the graph reads the
			// cancellation and answers it, but never reads the message
			// (the adapter resumes without it): its snapshot does not hold
			// it. A run carrying the message follows in the same turn
			// (CancelRunAuto), and the graph answers it: the turn's answer
			// holds both texts, one message per run, and the graph's
			// snapshot puts the message after the answer to the
			// cancellation.
			name: "publish: the user moves on instead of answering",
			steps: []upstreamStep{askPublish,
				{
					send: userSays("never mind"), want: []part{say("Not published: cancelled"), joined, say("You said: never mind")}, stop: aap.StopEndTurn,
					recorded: []string{toolMessage("int#1", "Tool call was not answered: the user sent a new message instead.")},
					produced: []string{assistantText("Not published: cancelled"), assistantText("You said: never mind")},
					history: []string{
						`{"role":"user","content":"publish hello world"}`,
						toolUse("int#1", "agui_interrupt", langGraphPublishInterrupt(interrupts, "int#1", "hello world")),
						toolMessage("int#1", "Tool call was not answered: the user sent a new message instead."),
						assistantText("Not published: cancelled"),
						`{"role":"user","content":"never mind"}`,
						assistantText("You said: never mind"),
					},
				},
				echo("hello again"),
			},
		},
		failing,
		longLangGraphConversation(interrupts),
		{
			name:    "history: the graph is sent every call with its result",
			session: aap.PostSessionsRequest{Tools: []aap.ToolSpec{weatherSpec}},
			steps: []upstreamStep{search, askWeather("weather in Paris", "Paris", "call#2"), weatherIs("Paris", "Rain"),
				askHistory("web_search, get_weather")},
		},
	}
	if interrupts == "default" {
		return withInterrupts(all)
	}
	return all
}

// longLangGraphConversation is every kind of turn in one thread: each run
// ends with the graph's MESSAGES_SNAPSHOT of the whole thread, which holds
// no thinking block (the adapter has no reasoning message for one; it has
// for an OpenAI-style reasoning item), yet after each turn the history is
// what every turn streamed.
func longLangGraphConversation(interrupts string) upstreamConversation {
	search := searchGolangTips(demo.SearchResult("golang tips"))
	askPublish := askLangGraphPublish(interrupts)
	return upstreamConversation{
		name:    "a long conversation: later snapshots keep what earlier turns streamed",
		session: aap.PostSessionsRequest{Tools: []aap.ToolSpec{weatherSpec}},
		steps: []upstreamStep{
			echo("hello there"),
			thinkAboutCats,
			{
				send: userSays("reason about dogs"),
				want: []part{think("Reasoning about: reason about dogs"), say("Done reasoning.")}, stop: aap.StopEndTurn,
				produced: []string{`{"role":"assistant","content":[{"type":"thinking","thinking":"Reasoning about: reason about dogs"},{"type":"text","text":"Done reasoning."}]}`},
			},
			search,
			askWeather("weather in Paris", "Paris", "call#2"),
			weatherIs("Paris", "Rain"),
			askPublish,
			{
				send:     answerInterrupt(func(id string) aap.Message { return &aap.ToolPermissionMessage{ToolCallID: id, Granted: true} }),
				want:     []part{say("Published: hello world")},
				stop:     aap.StopEndTurn,
				recorded: []string{toolMessage("int#1", "Tool call granted; the agent did not report its result.")},
				produced: []string{assistantText("Published: hello world")},
			},
			echo("and again"),
			askHistory("web_search, get_weather"),
			echo("once more"),
		},
	}
}

// withInterrupts keeps the conversations with an interrupt.
func withInterrupts(all []upstreamConversation) []upstreamConversation {
	var out []upstreamConversation
	for _, c := range all {
		if strings.HasPrefix(c.name, "delete:") || strings.HasPrefix(c.name, "publish:") || strings.HasPrefix(c.name, "post:") {
			out = append(out, c)
		}
	}
	return out
}

// langGraphMovesOn is a user who moves on while an interrupt is open, with
// the other CancelRun modes. CancelRunSeparate: the graph is resumed as
// cancelled in a run of its own, left out of the turn, then answers the
// message. CancelRunSingle: the graph answers the cancellation only; it
// takes the message in on the next run, after that answer.
func langGraphMovesOn(mode aap2agui.CancelRun) []upstreamConversation {
	askPublish := askLangGraphPublish("outcome")
	asked := []string{
		`{"role":"user","content":"publish hello world"}`,
		toolUse("int#1", "agui_interrupt", langGraphPublishInterrupt("outcome", "int#1", "hello world")),
		toolMessage("int#1", "Tool call was not answered: the user sent a new message instead."),
		assistantText("Not published: cancelled"),
	}
	if mode == aap2agui.CancelRunSingle {
		return []upstreamConversation{{
			name: "publish: the user moves on, and the graph answers the cancellation only",
			steps: []upstreamStep{askPublish,
				{
					send: userSays("never mind"), want: []part{say("Not published: cancelled")}, stop: aap.StopEndTurn,
					recorded: []string{toolMessage("int#1", "Tool call was not answered: the user sent a new message instead.")},
					produced: []string{assistantText("Not published: cancelled")},
				},
				{
					send: userSays("hello again"), want: []part{say("You said: hello again")}, stop: aap.StopEndTurn,
					produced: []string{assistantText("You said: hello again")},
					history: append(asked, `{"role":"user","content":"never mind"}`, `{"role":"user","content":"hello again"}`,
						assistantText("You said: hello again")),
				},
			},
		}}
	}
	return []upstreamConversation{{
		name: "publish: the user moves on, and the graph answers",
		steps: []upstreamStep{askPublish,
			{
				send: userSays("never mind"), want: []part{say("You said: never mind")}, stop: aap.StopEndTurn,
				recorded: []string{toolMessage("int#1", "Tool call was not answered: the user sent a new message instead.")},
				produced: []string{assistantText("You said: never mind")},
				// What the graph said of the cancellation, in the run of its
				// own, reaches history through its snapshot.
				history: append(asked, `{"role":"user","content":"never mind"}`, assistantText("You said: never mind")),
			},
		},
	}}
}

// TestLangGraphAgent runs a real LangGraph.js graph behind aap2agui
// (through the LangGraph API server and @ag-ui/langgraph), in every
// stream mode: text over several turns, a client tool, the graph's own
// server tool, a tool the graph runs only once approved (granted, denied),
// interrupt() in a node (granted, denied, answered with a payload), a model
// error, and a conversation whose history the graph reads back. Its
// threads exist only because aap2agui sends UUID thread ids. The
// conversations with interrupts run again with the adapter's defaults,
// where interrupt() is only a CUSTOM on_interrupt event.
func TestLangGraphAgent(t *testing.T) {
	for _, interrupts := range []string{"outcome", "default"} {
		t.Run(interrupts, func(t *testing.T) {
			e := newEnv(t, startLangGraphAgent(t, interrupts), func(c *aap2agui.Config) {
				c.Agent.Tools = []aap.ToolSpec{deleteFileTool}
				c.OwnTools = langGraphOwnTools
			})
			runUpstreamConversations(t, e, newLangGraphIDs, langGraphConversations(interrupts))
		})
	}
	t.Run("separate cancel run", func(t *testing.T) {
		e := newEnv(t, startLangGraphAgent(t, "outcome"), func(c *aap2agui.Config) { c.CancelRun = aap2agui.CancelRunSeparate })
		runUpstreamConversations(t, e, newLangGraphIDs, langGraphMovesOn(aap2agui.CancelRunSeparate))
	})
	t.Run("single cancel run", func(t *testing.T) {
		e := newEnv(t, startLangGraphAgent(t, "outcome"), func(c *aap2agui.Config) { c.CancelRun = aap2agui.CancelRunSingle })
		runUpstreamConversations(t, e, newLangGraphIDs, langGraphMovesOn(aap2agui.CancelRunSingle))
	})
}
