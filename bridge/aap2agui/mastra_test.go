package aap2agui_test

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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

// mastraIDs replaces the ids the Mastra agent makes (mastra-call-<n> for
// tool calls, aap2agui's run-<hex> in interrupt ids "<runId>::<toolCallId>"
// and their metadata) with call#1…, run#, so that expectations can be
// written out in full; it keeps the real ids for the turns that answer them.
type mastraIDs struct {
	calls      []string // raw tool call ids, in order of first sight
	interrupts []string // raw interrupt ids, in order of first sight
}

var (
	mastraCallPattern = regexp.MustCompile(`(run-[0-9a-f]{32}::)?mastra-call-[0-9]+`)
	runIDPattern      = regexp.MustCompile(`run-[0-9a-f]{32}`)
)

func (n *mastraIDs) lines(in []string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		s = mastraCallPattern.ReplaceAllStringFunc(s, func(id string) string {
			run, callID := "", id
			if m := mastraCallPattern.FindStringSubmatch(id); m[1] != "" {
				run, callID = "run#::", id[len(m[1]):]
				if !containsID(n.interrupts, id) {
					n.interrupts = append(n.interrupts, id)
				}
			}
			k := indexOf(n.calls, callID)
			if k < 0 {
				n.calls = append(n.calls, callID)
				k = len(n.calls) - 1
			}
			return run + "call#" + strconv.Itoa(k+1)
		})
		out[i] = runIDPattern.ReplaceAllString(s, "run#")
	}
	return out
}

func containsID(list []string, s string) bool { return indexOf(list, s) >= 0 }

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// mastraStep is one turn of a conversation with the Mastra agent.
type mastraStep struct {
	send func(n *mastraIDs) []aap.Message
	want []part
	stop aap.StopReason
	// recorded are the history entries the turn adds before the run's own
	// messages (the results aap2agui records for answered permissions and
	// closed calls), placed right after their call.
	recorded []string
	// produced are the run's messages: the none-mode response.
	produced []string
}

// The interrupt @ag-ui/mastra sends for the publish tool's suspension, as
// the AAP application sees it (the input of an agui_interrupt call): the
// agent's bytes, ids normalized.
func mastraPublishInterrupt(text string) string {
	schema := `{"type":"object","properties":{"approved":{"type":"boolean"},"reason":{"type":"string"}},"required":["approved"],"additionalProperties":false,"$schema":"http://json-schema.org/draft-07/schema#"}`
	quoted, _ := json.Marshal(schema)
	msg, _ := json.Marshal(`Publish "` + text + `"?`)
	args, _ := json.Marshal(map[string]string{"text": text})
	return `{"id":"run#::call#1","reason":"mastra:tool_suspend","toolCallId":"call#1","responseSchema":` + schema +
		`,"metadata":{"mastra":{"type":"mastra_suspend","toolName":"publish","suspendPayload":{"message":` + string(msg) +
		`},"args":` + string(args) + `,"resumeSchema":` + string(quoted) + `,"runId":"run#"}}}`
}

func answerInterrupt(m func(id string) aap.Message) func(n *mastraIDs) []aap.Message {
	return func(n *mastraIDs) []aap.Message { return []aap.Message{m(n.interrupts[len(n.interrupts)-1])} }
}

func mastraConversations() []struct {
	name    string
	session aap.PostSessionsRequest
	steps   []mastraStep
} {
	say := func(s string) part { return part{kind: "text", text: s} }
	userSays := func(s string) func(*mastraIDs) []aap.Message {
		return func(*mastraIDs) []aap.Message { return []aap.Message{aap.UserText(s)} }
	}
	searchResult := demo.SearchResult("golang tips")
	searchContent, _ := json.Marshal(searchResult) // Mastra sends a tool's result as JSON
	askPublish := mastraStep{
		send: userSays("publish hello world"),
		want: []part{call("run#::call#1", "agui_interrupt", mastraPublishInterrupt("hello world"))}, stop: aap.StopToolUse,
		produced: []string{toolUse("run#::call#1", "agui_interrupt", mastraPublishInterrupt("hello world"))},
	}
	return []struct {
		name    string
		session aap.PostSessionsRequest
		steps   []mastraStep
	}{
		{
			name: "echo",
			steps: []mastraStep{{
				send: userSays("hello there"), want: []part{say("You said: hello there")}, stop: aap.StopEndTurn,
				produced: []string{assistantText("You said: hello there")},
			}},
		},
		{
			name: "think: reasoning, then text",
			steps: []mastraStep{{
				send: userSays("think about cats"),
				want: []part{think("Thinking about: think about cats"), say(demo.DoneThinking)}, stop: aap.StopEndTurn,
				produced: []string{`{"role":"assistant","content":[{"type":"thinking","thinking":"Thinking about: think about cats"},{"type":"text","text":"Done thinking."}]}`},
			}},
		},
		{
			name:    "weather: a client tool round trip",
			session: aap.PostSessionsRequest{Tools: []aap.ToolSpec{weatherTool}},
			steps: []mastraStep{
				{
					send: userSays("What is the weather in Tokyo?"),
					want: []part{call("call#1", "get_weather", `{"location":"Tokyo"}`)}, stop: aap.StopToolUse,
					produced: []string{toolUse("call#1", "get_weather", `{"location":"Tokyo"}`)},
				},
				{
					send: func(n *mastraIDs) []aap.Message {
						return []aap.Message{&aap.ToolMessage{ToolCallID: n.calls[0], Content: aap.TextContent("Sunny, 22°C")}}
					},
					want: []part{say("The weather in Tokyo: Sunny, 22°C")}, stop: aap.StopEndTurn,
					produced: []string{assistantText("The weather in Tokyo: Sunny, 22°C")},
				},
			},
		},
		{
			name: "weather without get_weather",
			steps: []mastraStep{{
				send: userSays("weather in Oslo"), want: []part{say(demo.NoWeatherTool)}, stop: aap.StopEndTurn,
				produced: []string{assistantText(demo.NoWeatherTool)},
			}},
		},
		{
			name: "search: the agent's own tool, streamed as an unexposed server tool",
			steps: []mastraStep{{
				send: userSays("search golang tips"),
				want: []part{
					call("call#1", "web_search", `{"query":"golang tips"}`),
					result("call#1", string(searchContent)),
					say(demo.SearchAnswer(searchResult)),
				},
				stop: aap.StopEndTurn,
				produced: []string{
					toolUse("call#1", "web_search", `{"query":"golang tips"}`),
					toolMessage("call#1", string(searchContent)),
					assistantText(demo.SearchAnswer(searchResult)),
				},
			}},
		},
		{
			name: "publish: suspended for approval, granted with a tool_permission",
			steps: []mastraStep{askPublish, {
				send: answerInterrupt(func(id string) aap.Message { return &aap.ToolPermissionMessage{ToolCallID: id, Granted: true} }),
				want: []part{
					call("call#1", "publish", `{"text":"hello world"}`),
					result("call#1", `{"published":true}`),
					say("Published: hello world"),
				},
				stop:     aap.StopEndTurn,
				recorded: []string{toolMessage("run#::call#1", "Tool call granted; the agent did not report its result.")},
				produced: []string{
					toolUse("call#1", "publish", `{"text":"hello world"}`),
					toolMessage("call#1", `{"published":true}`),
					assistantText("Published: hello world"),
				},
			}},
		},
		{
			name: "publish: answered with the resume payload as a tool result",
			steps: []mastraStep{askPublish, {
				send: answerInterrupt(func(id string) aap.Message {
					return &aap.ToolMessage{ToolCallID: id, Content: aap.TextContent(`{"approved":false,"reason":"not now"}`)}
				}),
				want: []part{
					call("call#1", "publish", `{"text":"hello world"}`),
					result("call#1", `{"published":false,"reason":"not now"}`),
					say("Not published: not now"),
				},
				stop: aap.StopEndTurn,
				produced: []string{
					toolUse("call#1", "publish", `{"text":"hello world"}`),
					toolMessage("call#1", `{"published":false,"reason":"not now"}`),
					assistantText("Not published: not now"),
				},
			}},
		},
		{
			// The suspension's schema asks for an approval: the denial
			// resumes the tool with {approved:false, reason}, which it
			// reads (rather than a cancelled resume, which would end the
			// run at once and leave the reason unread).
			name: "publish: denied with a tool_permission, the reason reaches the tool",
			steps: []mastraStep{askPublish, {
				send: answerInterrupt(func(id string) aap.Message {
					return &aap.ToolPermissionMessage{ToolCallID: id, Granted: false, Reason: "not now"}
				}),
				want: []part{
					call("call#1", "publish", `{"text":"hello world"}`),
					result("call#1", `{"published":false,"reason":"not now"}`),
					say("Not published: not now"),
				},
				stop:     aap.StopEndTurn,
				recorded: []string{toolMessage("run#::call#1", "Tool call denied: not now")},
				produced: []string{
					toolUse("call#1", "publish", `{"text":"hello world"}`),
					toolMessage("call#1", `{"published":false,"reason":"not now"}`),
					assistantText("Not published: not now"),
				},
			}},
		},
		{
			// aap2agui closes the open interrupt with a cancelled resume
			// entry; @ag-ui/mastra then ends the run at once without
			// reading the new message (RUN_STARTED, RUN_FINISHED, nothing
			// between). A run carrying the message follows in the same
			// turn (CancelRunAuto), and the agent answers it. The history
			// stays valid and the next message is answered.
			name: "publish: the user moves on instead of answering",
			steps: []mastraStep{askPublish,
				{
					send: userSays("never mind"), want: []part{say("You said: never mind")}, stop: aap.StopEndTurn,
					recorded: []string{toolMessage("run#::call#1", "Tool call was not answered: the user sent a new message instead.")},
					produced: []string{assistantText("You said: never mind")},
				},
				{
					send: userSays("hello again"), want: []part{say("You said: hello again")}, stop: aap.StopEndTurn,
					produced: []string{assistantText("You said: hello again")},
				},
			},
		},
		{
			name: "fail: what was said before RUN_ERROR is kept",
			steps: []mastraStep{{
				send: userSays("please fail"), want: []part{say(demo.FailPrefix)}, stop: aap.StopError,
				produced: []string{assistantText(demo.FailPrefix)},
			}},
		},
		{
			name:    "history: the agent is sent every call with its result",
			session: aap.PostSessionsRequest{Tools: []aap.ToolSpec{weatherTool}},
			steps: []mastraStep{
				{
					send: userSays("search golang tips"),
					want: []part{
						call("call#1", "web_search", `{"query":"golang tips"}`),
						result("call#1", string(searchContent)),
						say(demo.SearchAnswer(searchResult)),
					},
					stop: aap.StopEndTurn,
					produced: []string{
						toolUse("call#1", "web_search", `{"query":"golang tips"}`),
						toolMessage("call#1", string(searchContent)),
						assistantText(demo.SearchAnswer(searchResult)),
					},
				},
				{
					send: userSays("publish hi"),
					want: []part{call("run#::call#2", "agui_interrupt", mastraPublishInterrupt2("hi"))}, stop: aap.StopToolUse,
					produced: []string{toolUse("run#::call#2", "agui_interrupt", mastraPublishInterrupt2("hi"))},
				},
				{
					send: answerInterrupt(func(id string) aap.Message { return &aap.ToolPermissionMessage{ToolCallID: id, Granted: true} }),
					want: []part{
						call("call#2", "publish", `{"text":"hi"}`),
						result("call#2", `{"published":true}`),
						say("Published: hi"),
					},
					stop:     aap.StopEndTurn,
					recorded: []string{toolMessage("run#::call#2", "Tool call granted; the agent did not report its result.")},
					produced: []string{
						toolUse("call#2", "publish", `{"text":"hi"}`),
						toolMessage("call#2", `{"published":true}`),
						assistantText("Published: hi"),
					},
				},
				{
					send: userSays("weather in Paris"),
					want: []part{call("call#3", "get_weather", `{"location":"Paris"}`)}, stop: aap.StopToolUse,
					produced: []string{toolUse("call#3", "get_weather", `{"location":"Paris"}`)},
				},
				{
					send: func(n *mastraIDs) []aap.Message {
						return []aap.Message{&aap.ToolMessage{ToolCallID: n.calls[2], Content: aap.TextContent("Rain")}}
					},
					want: []part{say("The weather in Paris: Rain")}, stop: aap.StopEndTurn,
					produced: []string{assistantText("The weather in Paris: Rain")},
				},
				{
					send: userSays("what is in the history?"),
					want: []part{say("History: tool calls: web_search, publish, get_weather.")}, stop: aap.StopEndTurn,
					produced: []string{assistantText("History: tool calls: web_search, publish, get_weather.")},
				},
			},
		},
	}
}

// mastraPublishInterrupt2 is mastraPublishInterrupt for the second call of
// a conversation.
func mastraPublishInterrupt2(text string) string {
	return regexp.MustCompile(`call#1`).ReplaceAllString(mastraPublishInterrupt(text), "call#2")
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
	for _, conv := range mastraConversations() {
		for _, mode := range []aap.StreamMode{aap.StreamDelta, aap.StreamMessage, aap.StreamNone} {
			t.Run(conv.name+"/"+string(mode), func(t *testing.T) {
				id := e.createSession(t, conv.session)
				var ids mastraIDs
				var conversation []string
				for i, st := range conv.steps {
					msgs := st.send(&ids)
					req := aap.PostSessionTurnRequest{Stream: mode, Messages: msgs}
					if mode == aap.StreamNone {
						resp, err := e.Client.Turn(testContext(t), id, &req)
						require.NoError(t, err, "step %d", i)
						assert.Equal(t, st.stop, resp.StopReason, "step %d", i)
						produced := st.produced
						if produced == nil {
							produced = []string{}
						}
						assert.Equal(t, produced, ids.lines(messageLines(t, resp.Messages)), "step %d: response messages", i)
					} else {
						evs, err := e.stream(t, id, req)
						require.NoError(t, err, "step %d", i)
						assert.Equal(t, eventsOf(t, mode, st.want, st.stop), ids.lines(eventLines(t, evs)), "step %d: events", i)
					}
					conversation = append(conversation, st.recorded...)
					for _, m := range msgs {
						if m.Role() != aap.RoleToolPermission {
							conversation = append(conversation, ids.lines(messageLines(t, []aap.Message{m}))...)
						}
					}
					conversation = append(conversation, st.produced...)
					assert.Equal(t, conversation, ids.lines(e.history(t, id, aap.HistoryFull)), "step %d: full history", i)
					assert.Empty(t, historyProblems(e.historyMessages(t, id)), "step %d", i)
				}
			})
		}
	}
}
