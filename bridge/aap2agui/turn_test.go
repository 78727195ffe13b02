package aap2agui_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/demo"
)

// part is one thing the agent says in a turn, as it shows in every stream
// mode.
type part struct {
	kind   string // "text", "thinking", "call", "result"
	text   string
	deltas []string // text and thinking: the deltas (default demo.Chunks(text))
	id     string   // call, result: the normalized toolCallId (call#1…)
	name   string
	input  string
}

func say(s string) part   { return part{kind: "text", text: s} }
func think(s string) part { return part{kind: "thinking", text: s} }
func call(id, name, input string) part {
	return part{kind: "call", id: id, name: name, input: input}
}
func result(id, content string) part { return part{kind: "result", id: id, text: content} }

// joined is the blank line delta mode streams between two text messages
// of one answer (the other modes show the two texts alone).
var joined = part{kind: "joined"}

// eventsOf renders the events the parts show as in mode, between
// turn_start and turn_stop.
func eventsOf(t *testing.T, mode aap.StreamMode, parts []part, stop aap.StopReason) []string {
	t.Helper()
	evs := []aap.Event{&aap.TurnStart{}}
	for _, p := range parts {
		deltas := p.deltas
		if deltas == nil {
			deltas = demo.Chunks(p.text)
		}
		switch {
		case p.kind == "joined" && mode == aap.StreamDelta:
			evs = append(evs, &aap.TextDelta{Delta: "\n\n"})
		case p.kind == "text" && mode == aap.StreamDelta:
			for _, d := range deltas {
				evs = append(evs, &aap.TextDelta{Delta: d})
			}
		case p.kind == "text":
			evs = append(evs, &aap.Text{Text: p.text})
		case p.kind == "thinking" && mode == aap.StreamDelta:
			for _, d := range deltas {
				evs = append(evs, &aap.ThinkingDelta{Delta: d})
			}
		case p.kind == "thinking":
			evs = append(evs, &aap.Thinking{Thinking: p.text})
		case p.kind == "call":
			evs = append(evs, &aap.ToolCall{ToolCallID: p.id, Name: p.name, Input: json.RawMessage(p.input)})
		case p.kind == "result":
			evs = append(evs, &aap.ToolResult{ToolCallID: p.id, Content: aap.TextContent(p.text)})
		}
	}
	evs = append(evs, &aap.TurnStop{StopReason: stop})
	return eventLines(t, evs)
}

// step is one turn of a conversation.
type step struct {
	// send makes the turn's messages; calls are the tool call ids the agent
	// has made so far in the conversation, in order.
	send  func(calls []string) []aap.Message
	agent *aap.AgentConfig
	tools []aap.ToolSpec
	want  []part
	stop  aap.StopReason
	// produced are the messages the run adds to history (normalized JSON):
	// the messages of a none-mode response.
	produced []string
}

func user(text string) func([]string) []aap.Message {
	return func([]string) []aap.Message { return []aap.Message{aap.UserText(text)} }
}

func toolResult(content string) func([]string) []aap.Message {
	return func(calls []string) []aap.Message {
		return []aap.Message{&aap.ToolMessage{ToolCallID: calls[len(calls)-1], Content: aap.TextContent(content)}}
	}
}

func permission(granted bool, reason string) func([]string) []aap.Message {
	return func(calls []string) []aap.Message {
		return []aap.Message{&aap.ToolPermissionMessage{ToolCallID: calls[len(calls)-1], Granted: granted, Reason: reason}}
	}
}

func assistantText(s string) string {
	b, _ := json.Marshal(s)
	return `{"role":"assistant","content":` + string(b) + `}`
}

func toolMessage(id, content string) string {
	b, _ := json.Marshal(content)
	return `{"role":"tool","toolCallId":"` + id + `","content":` + string(b) + `}`
}

func toolUse(id, name, input string) string {
	return `{"role":"assistant","content":[{"type":"tool_use","toolCallId":"` + id + `","name":"` + name + `","input":` + input + `}]}`
}

// demoConversations covers every rule of the demo script.
func demoConversations() []struct {
	name    string
	session aap.PostSessionsRequest
	steps   []step
} {
	searchResult := demo.SearchResult("golang tips")
	longDeltas := make([]string, 100)
	for i := range longDeltas {
		longDeltas[i] = demo.LongWord(i)
	}
	longText := strings.Join(longDeltas, "")
	return []struct {
		name    string
		session aap.PostSessionsRequest
		steps   []step
	}{
		{
			name: "echo",
			steps: []step{{
				send: user("hello there"), want: []part{say("You said: hello there")}, stop: aap.StopEndTurn,
				produced: []string{assistantText("You said: hello there")},
			}},
		},
		{
			name: "think",
			steps: []step{{
				send: user("think about cats"),
				want: []part{think("Thinking about: think about cats"), say(demo.DoneThinking)}, stop: aap.StopEndTurn,
				produced: []string{`{"role":"assistant","content":[{"type":"thinking","thinking":"Thinking about: think about cats"},{"type":"text","text":"Done thinking."}]}`},
			}},
		},
		{
			name:    "weather with get_weather declared: a client tool round trip",
			session: aap.PostSessionsRequest{Tools: []aap.ToolSpec{weatherSpec}},
			steps: []step{
				{
					send: user("What is the weather in Tokyo?"),
					want: []part{call("call#1", "get_weather", `{"location":"Tokyo"}`)}, stop: aap.StopToolUse,
					produced: []string{toolUse("call#1", "get_weather", `{"location":"Tokyo"}`)},
				},
				{
					send: toolResult("Sunny, 22°C"),
					want: []part{say("The weather in Tokyo: Sunny, 22°C")}, stop: aap.StopEndTurn,
					produced: []string{assistantText("The weather in Tokyo: Sunny, 22°C")},
				},
			},
		},
		{
			name: "weather without get_weather",
			steps: []step{{
				send: user("weather in Oslo"), want: []part{say(demo.NoWeatherTool)}, stop: aap.StopEndTurn,
				produced: []string{assistantText(demo.NoWeatherTool)},
			}},
		},
		{
			name:    "search trusted: the server tool runs inline",
			session: aap.PostSessionsRequest{Agent: aap.AgentConfig{Tools: []aap.ServerToolRef{{Name: demo.SearchTool, Trust: true}}}},
			steps: []step{{
				send: user("search golang tips"),
				want: []part{
					call("call#1", "web_search", `{"query":"golang tips"}`),
					result("call#1", searchResult),
					say(demo.SearchAnswer(searchResult)),
				},
				stop: aap.StopEndTurn,
				produced: []string{
					toolUse("call#1", "web_search", `{"query":"golang tips"}`),
					toolMessage("call#1", searchResult),
					assistantText(demo.SearchAnswer(searchResult)),
				},
			}},
		},
		{
			name:    "search untrusted, permission granted",
			session: aap.PostSessionsRequest{Agent: aap.AgentConfig{Tools: []aap.ServerToolRef{{Name: demo.SearchTool}}}},
			steps: []step{
				{
					send: user("search golang tips"),
					want: []part{call("call#1", "web_search", `{"query":"golang tips"}`)}, stop: aap.StopToolUse,
					produced: []string{toolUse("call#1", "web_search", `{"query":"golang tips"}`)},
				},
				{
					send: permission(true, ""),
					want: []part{result("call#1", searchResult), say(demo.SearchAnswer(searchResult))}, stop: aap.StopEndTurn,
					produced: []string{toolMessage("call#1", searchResult), assistantText(demo.SearchAnswer(searchResult))},
				},
			},
		},
		{
			name:    "search untrusted, permission denied",
			session: aap.PostSessionsRequest{Agent: aap.AgentConfig{Tools: []aap.ServerToolRef{{Name: demo.SearchTool}}}},
			steps: []step{
				{
					send: user("search golang tips"),
					want: []part{call("call#1", "web_search", `{"query":"golang tips"}`)}, stop: aap.StopToolUse,
					produced: []string{toolUse("call#1", "web_search", `{"query":"golang tips"}`)},
				},
				{
					send: permission(false, "not now"),
					want: []part{result("call#1", demo.DeniedResult("not now")), say(demo.DeniedText("not now"))}, stop: aap.StopEndTurn,
					produced: []string{toolMessage("call#1", demo.DeniedResult("not now")), assistantText(demo.DeniedText("not now"))},
				},
			},
		},
		{
			name: "search not enabled",
			steps: []step{{
				send: user("search golang tips"), want: []part{say(demo.NoSearchTool)}, stop: aap.StopEndTurn,
				produced: []string{assistantText(demo.NoSearchTool)},
			}},
		},
		{
			name: "fail: what was said before RUN_ERROR is kept",
			steps: []step{{
				send: user("please fail"), want: []part{say(demo.FailPrefix)}, stop: aap.StopError,
				produced: []string{assistantText(demo.FailPrefix)},
			}},
		},
		{
			name: "long 100",
			steps: []step{{
				send: user("long 100"), want: []part{{kind: "text", text: longText, deltas: longDeltas}}, stop: aap.StopEndTurn,
				produced: []string{assistantText(longText)},
			}},
		},
	}
}

// TestDemoScript runs every rule of the demo script through aap2agui in
// each stream mode, checking the exact events (or JSON response) and that
// the stored history is exactly the conversation.
func TestDemoScript(t *testing.T) {
	e := newEnv(t, demoAgent(t))
	for _, conv := range demoConversations() {
		for _, mode := range []aap.StreamMode{aap.StreamDelta, aap.StreamMessage, aap.StreamNone} {
			t.Run(conv.name+"/"+string(mode), func(t *testing.T) {
				id := e.createSession(t, conv.session)
				var norm idNormalizer
				var conversation []string
				for i, st := range conv.steps {
					msgs := st.send(norm.ids)
					req := aap.PostSessionTurnRequest{Stream: mode, Messages: msgs, Agent: st.agent, Tools: st.tools}
					if mode == aap.StreamNone {
						resp, err := e.Client.Turn(bridgetest.Context(t), id, &req)
						require.NoError(t, err, "step %d", i)
						assert.Equal(t, st.stop, resp.StopReason, "step %d", i)
						assert.Equal(t, st.produced, norm.lines(messageLines(t, resp.Messages)), "step %d: response messages", i)
					} else {
						evs, err := e.stream(t, id, req)
						require.NoError(t, err, "step %d", i)
						assert.Equal(t, eventsOf(t, mode, st.want, st.stop), norm.lines(eventLines(t, evs)), "step %d: events", i)
					}
					for _, m := range msgs {
						if m.Role() != aap.RoleToolPermission {
							conversation = append(conversation, norm.lines(messageLines(t, []aap.Message{m}))...)
						}
					}
					conversation = append(conversation, st.produced...)
					assert.Equal(t, conversation, norm.lines(e.history(t, id, aap.HistoryFull)), "step %d: full history", i)
					assert.Equal(t, conversation, norm.lines(e.history(t, id, aap.HistoryCompacted)), "step %d: compacted history", i)
				}
			})
		}
	}
}

// TestSettingsPersist checks that agent options merge by key, and that
// agent.tools and tools overrides replace the session's, persist (GET
// /sessions/:id shows them) and reach the agent on the following runs.
func TestSettingsPersist(t *testing.T) {
	up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
		sseEvents(w, textRun(in, fmt.Sprintf("m%d", n), "ok")...)
	})
	e := newEnv(t, up.URL)
	otherTool := aap.ToolSpec{Name: "get_time", Description: "The time.", Parameters: json.RawMessage(`{"type":"object"}`)}
	id := e.createSession(t, aap.PostSessionsRequest{
		Agent: aap.AgentConfig{
			Tools:   []aap.ServerToolRef{{Name: demo.SearchTool}},
			Options: map[string]string{"language": "French", "model": "small"},
		},
		Tools: []aap.ToolSpec{weatherSpec},
	})

	steps := []struct {
		name      string
		agent     *aap.AgentConfig
		tools     []aap.ToolSpec
		want      string // GET /sessions/:id
		wantProps string // forwardedProps of the run
		wantTools []string
	}{
		{
			name:      "no overrides: the settings of the session",
			want:      `{"sessionId":"ID","agent":{"name":"agent","tools":[{"name":"web_search"}],"options":{"language":"French","model":"small"}},"tools":[` + specJSON(t, weatherSpec) + `]}`,
			wantProps: `{"aap":{"agent":{"name":"agent","tools":[{"name":"web_search"}],"options":{"language":"French","model":"small"}}}}`,
			wantTools: []string{"get_weather"},
		},
		{
			name:      "options merge by key",
			agent:     &aap.AgentConfig{Options: map[string]string{"model": "large"}},
			want:      `{"sessionId":"ID","agent":{"name":"agent","tools":[{"name":"web_search"}],"options":{"language":"French","model":"large"}},"tools":[` + specJSON(t, weatherSpec) + `]}`,
			wantProps: `{"aap":{"agent":{"name":"agent","tools":[{"name":"web_search"}],"options":{"language":"French","model":"large"}}}}`,
			wantTools: []string{"get_weather"},
		},
		{
			name:      "agent.tools and tools replace",
			agent:     &aap.AgentConfig{Tools: []aap.ServerToolRef{{Name: demo.SearchTool, Trust: true}}},
			tools:     []aap.ToolSpec{otherTool},
			want:      `{"sessionId":"ID","agent":{"name":"agent","tools":[{"name":"web_search","trust":true}],"options":{"language":"French","model":"large"}},"tools":[` + specJSON(t, otherTool) + `]}`,
			wantProps: `{"aap":{"agent":{"name":"agent","tools":[{"name":"web_search","trust":true}],"options":{"language":"French","model":"large"}}}}`,
			wantTools: []string{"get_time"},
		},
		{
			name:      "empty agent.tools disables every server tool",
			agent:     &aap.AgentConfig{Tools: []aap.ServerToolRef{}},
			want:      `{"sessionId":"ID","agent":{"name":"agent","tools":[],"options":{"language":"French","model":"large"}},"tools":[` + specJSON(t, otherTool) + `]}`,
			wantProps: `{"aap":{"agent":{"name":"agent","tools":[],"options":{"language":"French","model":"large"}}}}`,
			wantTools: []string{"get_time"},
		},
		{
			name:      "a later turn without overrides keeps them",
			want:      `{"sessionId":"ID","agent":{"name":"agent","tools":[],"options":{"language":"French","model":"large"}},"tools":[` + specJSON(t, otherTool) + `]}`,
			wantProps: `{"aap":{"agent":{"name":"agent","tools":[],"options":{"language":"French","model":"large"}}}}`,
			wantTools: []string{"get_time"},
		},
	}
	for i, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			req := userTurn(aap.StreamNone, "hi")
			req.Agent, req.Tools = st.agent, st.tools
			_, err := e.Client.Turn(bridgetest.Context(t), id, &req)
			require.NoError(t, err)
			got := doRaw(t, http.MethodGet, e.URL+"/sessions/"+id, "", "")
			require.Equal(t, http.StatusOK, got.Status)
			assert.JSONEq(t, strings.ReplaceAll(st.want, "ID", id), got.Body)

			in := up.input(t, i)
			assert.JSONEq(t, st.wantProps, string(in.Raw["forwardedProps"]))
			var names []string
			for _, tool := range in.Tools {
				names = append(names, tool.Name)
			}
			assert.Equal(t, st.wantTools, names)
		})
	}
}

func specJSON(t *testing.T, s aap.ToolSpec) string {
	t.Helper()
	b, err := json.Marshal(s)
	require.NoError(t, err)
	return string(b)
}
