package aap2agui_test

import (
	"regexp"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/demo"
)

// The conversations with real frameworks (langgraph_test.go,
// copilotkit_test.go, mastra_test.go, agents_frameworks_test.go) are played
// by one runner.

// ids replaces the ids an upstream makes with call#1…, int#1…, in order of
// first sight, so that expectations can be written out in full; it keeps
// the real ones for the turns that answer them.
type ids struct {
	calls, interrupts []string
	// replace replaces the ids of one line, noting them in calls and
	// interrupts.
	replace func(n *ids, line string) string
}

func (n *ids) lines(in []string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = n.replace(n, s)
	}
	return out
}

// byPattern replaces the ids matching call with call#k and those matching
// interrupt (nil: the upstream's interrupts have no ids of their own) with
// int#k.
func byPattern(call, interrupt *regexp.Regexp) func() *ids {
	replace := func(n *ids, s string) string {
		s = call.ReplaceAllStringFunc(s, func(id string) string { return "call#" + strconv.Itoa(n.index(&n.calls, id)) })
		if interrupt != nil {
			s = interrupt.ReplaceAllStringFunc(s, func(id string) string { return "int#" + strconv.Itoa(n.index(&n.interrupts, id)) })
		}
		return s
	}
	return func() *ids { return &ids{replace: replace} }
}

// index is id's place in *list, from 1; a new id is added at its end.
func (n *ids) index(list *[]string, id string) int {
	k := slices.Index(*list, id)
	if k < 0 {
		*list = append(*list, id)
		k = len(*list) - 1
	}
	return k + 1
}

// upstreamStep is one turn of a conversation with a real framework.
type upstreamStep struct {
	send func(n *ids) []aap.Message
	want []part
	stop aap.StopReason
	// recorded are the history entries the turn adds before the run's own
	// messages (the results aap2agui records for answered permissions and
	// closed calls).
	recorded []string
	// produced are the run's messages: the none-mode response.
	produced []string
	// history, when set, is the whole history after the turn, where the
	// agent's MESSAGES_SNAPSHOT orders the thread otherwise than it was
	// sent and streamed.
	history []string
}

type upstreamConversation struct {
	name    string
	session aap.PostSessionsRequest
	steps   []upstreamStep
}

// runUpstreamConversations plays each conversation through e in every
// stream mode, checking the exact AAP events (or the none-mode response),
// that the stored history is exactly the conversation (what was sent and
// what was streamed), and that it is valid AAP.
func runUpstreamConversations(t *testing.T, e *env, newIDs func() *ids, convs []upstreamConversation) {
	t.Helper()
	servedAgent{e: e}.playAll(t, fromUpstream(convs, newIDs))
}

// playedStep is one turn of a conversation, its messages bound to the id
// normalizer of the conversation.
type playedStep struct {
	send func() []aap.Message
	want []part
	stop aap.StopReason
	// recorded, produced and history are upstreamStep's.
	recorded, produced, history []string
}

// playedConversation is a conversation with one agent: play makes its
// steps afresh, bound to the id normalizer they share (lines).
type playedConversation struct {
	name    string
	session aap.PostSessionsRequest
	play    func() (steps []playedStep, lines func([]string) []string)
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
					recorded: st.recorded, produced: st.produced, history: st.history}
			}
			return steps, n.lines
		}}
	}
	return out
}

// servedAgent is the agent a conversation is played with: name, when set,
// is one agent of a server that serves several; runs, where each agent has
// an upstream of its own, counts what each upstream was sent.
type servedAgent struct {
	e    *env
	name string
	runs *runCounter
}

// playAll plays each conversation with the agent in every stream mode.
func (a servedAgent) playAll(t *testing.T, convs []playedConversation) {
	t.Helper()
	prefix := ""
	if a.name != "" {
		prefix = a.name + "/"
	}
	for _, conv := range convs {
		for _, mode := range []aap.StreamMode{aap.StreamDelta, aap.StreamMessage, aap.StreamNone} {
			t.Run(prefix+conv.name+"/"+string(mode), func(t *testing.T) { a.play(t, conv, mode) })
		}
	}
}

// play checks every turn's events (or none-mode response), that only the
// agent's upstream ran it, that the stored history is exactly the
// conversation, and that it is valid AAP.
func (a servedAgent) play(t *testing.T, conv playedConversation, mode aap.StreamMode) {
	session := conv.session
	if a.name != "" {
		session.Agent.Name = a.name
	}
	id := a.e.createSession(t, session)
	if a.name != "" {
		info, err := a.e.Client.GetSession(bridgetest.Context(t), id)
		require.NoError(t, err)
		require.Equal(t, a.name, info.Agent.Name)
	}
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
		if st.history != nil {
			conversation = append([]string(nil), st.history...)
		}
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
		resp, err := a.e.Client.Turn(bridgetest.Context(t), id, &req)
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

func userSays(s string) func(*ids) []aap.Message {
	return func(*ids) []aap.Message { return []aap.Message{aap.UserText(s)} }
}

// answerCall answers the newest tool call; answerInterrupt the newest
// interrupt.
func answerCall(m func(id string) aap.Message) func(n *ids) []aap.Message {
	return func(n *ids) []aap.Message { return []aap.Message{m(n.calls[len(n.calls)-1])} }
}

func answerInterrupt(m func(id string) aap.Message) func(n *ids) []aap.Message {
	return func(n *ids) []aap.Message { return []aap.Message{m(n.interrupts[len(n.interrupts)-1])} }
}

// The turns every framework agent of interop/ plays alike: they follow the
// demo script.

// echo is a message the agent answers "You said: <text>".
func echo(text string) upstreamStep {
	return upstreamStep{
		send: userSays(text), want: []part{say("You said: " + text)}, stop: aap.StopEndTurn,
		produced: []string{assistantText("You said: " + text)},
	}
}

// thinkAboutCats is answered with reasoning, then text.
var thinkAboutCats = upstreamStep{
	send: userSays("think about cats"),
	want: []part{think("Thinking about: think about cats"), say(demo.DoneThinking)}, stop: aap.StopEndTurn,
	produced: []string{`{"role":"assistant","content":[{"type":"thinking","thinking":"Thinking about: think about cats"},{"type":"text","text":"Done thinking."}]}`},
}

// askWeather asks (question) for the weather in city: the agent calls the
// client tool get_weather (callID is the call's normalized id).
func askWeather(question, city, callID string) upstreamStep {
	input := `{"location":"` + city + `"}`
	return upstreamStep{
		send: userSays(question),
		want: []part{call(callID, "get_weather", input)}, stop: aap.StopToolUse,
		produced: []string{toolUse(callID, "get_weather", input)},
	}
}

// weatherIs answers the newest call with report, which the agent tells
// as the weather in city.
func weatherIs(city, report string) upstreamStep {
	answer := "The weather in " + city + ": " + report
	return upstreamStep{
		send: answerCall(func(id string) aap.Message {
			return &aap.ToolMessage{ToolCallID: id, Content: aap.TextContent(report)}
		}),
		want: []part{say(answer)}, stop: aap.StopEndTurn,
		produced: []string{assistantText(answer)},
	}
}

// searchGolangTips has the agent run its own web_search at once; content
// is the search's result as the framework sends it.
func searchGolangTips(content string) upstreamStep {
	answer := demo.SearchAnswer(demo.SearchResult("golang tips"))
	return upstreamStep{
		send: userSays("search golang tips"),
		want: []part{
			call("call#1", demo.SearchTool, `{"query":"golang tips"}`),
			result("call#1", content),
			say(answer),
		},
		stop: aap.StopEndTurn,
		produced: []string{
			toolUse("call#1", demo.SearchTool, `{"query":"golang tips"}`),
			toolMessage("call#1", content),
			assistantText(answer),
		},
	}
}

// askFile has the agent call tool on notes.txt ("<verb> notes.txt"), a
// tool the session must enable (enabling).
func askFile(verb, tool string) upstreamStep {
	return upstreamStep{
		send: userSays(verb + " notes.txt"),
		want: []part{call("call#1", tool, `{"name":"notes.txt"}`)}, stop: aap.StopToolUse,
		produced: []string{toolUse("call#1", tool, `{"name":"notes.txt"}`)},
	}
}

// enabling is a session that enables the agent's server tool.
func enabling(tool string) aap.PostSessionsRequest {
	return aap.PostSessionsRequest{Agent: aap.AgentConfig{Tools: []aap.ServerToolRef{{Name: tool}}}}
}

// askHistory has the agent name the tool calls of the history it was sent.
func askHistory(names string) upstreamStep {
	answer := "History: tool calls: " + names + "."
	return upstreamStep{
		send: userSays("what is in the history?"), want: []part{say(answer)}, stop: aap.StopEndTurn,
		produced: []string{assistantText(answer)},
	}
}

// The conversations every framework agent of interop/ has alike.
var (
	echoTwice = upstreamConversation{name: "echo, twice", steps: []upstreamStep{echo("hello there"), echo("and again")}}

	weatherRoundTrip = upstreamConversation{
		name:    "weather: a client tool round trip",
		session: aap.PostSessionsRequest{Tools: []aap.ToolSpec{weatherSpec}},
		steps:   []upstreamStep{askWeather("What is the weather in Tokyo?", "Tokyo", "call#1"), weatherIs("Tokyo", "Sunny, 22°C")},
	}

	noWeatherTool = upstreamConversation{name: "weather without get_weather", steps: []upstreamStep{{
		send: userSays("weather in Oslo"), want: []part{say(demo.NoWeatherTool)}, stop: aap.StopEndTurn,
		produced: []string{assistantText(demo.NoWeatherTool)},
	}}}

	failing = upstreamConversation{name: "fail: what was said before RUN_ERROR is kept", steps: []upstreamStep{{
		send: userSays("please fail"), want: []part{say(demo.FailPrefix)}, stop: aap.StopError,
		produced: []string{assistantText(demo.FailPrefix)},
	}}}
)
