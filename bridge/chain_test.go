package bridge_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/demo"
)

// The chain test: every conversation the demo agent can hold, played by
// the project's AAP client once against the AAP demo agent directly and
// once through aap2agui → agui2aap → the same agent, in each AAP stream
// mode. An AAP application must not be able to tell the two apart: the
// events (or turn responses), the final full and compacted histories and
// the session are equal once generated toolCallIds are numbered by first
// appearance and the session id is left out. The only other differences
// tolerated are listed, with their reasons, in acceptedDifferences; a case
// that shows a bug stays in the table, skipped with the diagnosis.

// weatherTool is the client tool the demo agent calls for "weather in
// <place>". Its title (which AG-UI has no field for) and the unusual key
// order of its schema check that the session keeps the tool as declared.
var weatherTool = aap.ToolSpec{
	Name:        demo.WeatherTool,
	Title:       "Weather",
	Description: "Get the current weather for a place.",
	Parameters:  json.RawMessage(`{"required":["location"],"type":"object","properties":{"location":{"type":"string"}}}`),
}

// demoAgent is a session's agent config: the demo agent with the given
// server tools.
func demoAgent(tools ...aap.ServerToolRef) aap.AgentConfig {
	return aap.AgentConfig{Name: "demo", Tools: tools}
}

var (
	trustedSearch   = aap.ServerToolRef{Name: demo.SearchTool, Trust: true}
	untrustedSearch = aap.ServerToolRef{Name: demo.SearchTool}
)

func user(s string) turn { return turn{Messages: []aap.Message{aap.UserText(s)}} }

func toolResult(call, content string) turn {
	return turn{Messages: []aap.Message{&aap.ToolMessage{ToolCallID: call, Content: aap.TextContent(content)}}}
}

func permission(call string, granted bool, reason string) turn {
	return turn{Messages: []aap.Message{&aap.ToolPermissionMessage{ToolCallID: call, Granted: granted, Reason: reason}}}
}

// chainCase is one conversation: a session and the turns played in it.
type chainCase struct {
	name    string
	session aap.PostSessionsRequest
	turns   []turn
	// skip, when set, names a known bug the case shows (see the report in
	// the issue): the case stays, skipped, until the bug is fixed.
	skip string
}

var chainCases = []chainCase{
	{
		name:    "echo",
		session: aap.PostSessionsRequest{Agent: demoAgent()},
		turns:   []turn{user("hello there")},
	},
	{
		name:    "think",
		session: aap.PostSessionsRequest{Agent: demoAgent()},
		turns:   []turn{user("please think")},
	},
	{
		name:    "client tool round trip",
		session: aap.PostSessionsRequest{Agent: demoAgent(), Tools: []aap.ToolSpec{weatherTool}},
		turns:   []turn{user("weather in Paris"), toolResult("call#1", "Sunny, 21°C")},
	},
	{
		name:    "client tool input with quotes, non-ASCII and HTML characters",
		session: aap.PostSessionsRequest{Agent: demoAgent(), Tools: []aap.ToolSpec{weatherTool}},
		turns:   []turn{user(`weather in "Zürich" & <Genève> 🌧`), toolResult("call#1", "Rain <b>all</b> day & night")},
	},
	{
		name:    "weather without the client tool",
		session: aap.PostSessionsRequest{Agent: demoAgent()},
		turns:   []turn{user("weather in Paris")},
	},
	{
		name:    "trusted server tool",
		session: aap.PostSessionsRequest{Agent: demoAgent(trustedSearch)},
		turns:   []turn{user("search dogs")},
	},
	{
		name:    "untrusted server tool granted",
		session: aap.PostSessionsRequest{Agent: demoAgent(untrustedSearch)},
		turns:   []turn{user("search dogs"), permission("call#1", true, "")},
	},
	{
		name:    "a grant, then another message",
		session: aap.PostSessionsRequest{Agent: demoAgent(untrustedSearch)},
		turns:   []turn{user("search for aap"), permission("call#1", true, ""), user("hello again")},
	},
	{
		name:    "a denial, then another message",
		session: aap.PostSessionsRequest{Agent: demoAgent(untrustedSearch)},
		turns:   []turn{user("search for aap"), permission("call#1", false, "not now"), user("hello again")},
	},
	{
		name:    "untrusted server tool denied with a reason",
		session: aap.PostSessionsRequest{Agent: demoAgent(untrustedSearch)},
		turns:   []turn{user("search dogs"), permission("call#1", false, "not today")},
	},
	{
		name:    "server tool not enabled",
		session: aap.PostSessionsRequest{Agent: demoAgent()},
		turns:   []turn{user("search dogs")},
	},
	{
		name:    "failure then another message",
		session: aap.PostSessionsRequest{Agent: demoAgent()},
		turns:   []turn{user("please fail"), user("hello again")},
	},
	{
		name:    "text and an image",
		session: aap.PostSessionsRequest{Agent: demoAgent()},
		turns: []turn{{Messages: []aap.Message{&aap.UserMessage{Content: aap.BlockContent(
			&aap.TextBlock{Text: "what is in this picture"},
			&aap.ImageBlock{URL: "https://example.com/cat.png"},
		)}}}},
	},
	{
		name: "seeded session",
		session: aap.PostSessionsRequest{
			Agent: demoAgent(),
			Messages: []aap.Message{
				&aap.SystemMessage{Content: "You are a terse assistant."},
				aap.UserText("hi"),
				&aap.AssistantMessage{Content: aap.TextContent("You said: hi")},
			},
		},
		turns: []turn{user("hello again")},
	},
	{
		name: "seeded session ending with a user message",
		session: aap.PostSessionsRequest{
			Agent:    demoAgent(),
			Messages: []aap.Message{aap.UserText("hi"), &aap.AssistantMessage{Content: aap.TextContent("You said: hi")}, aap.UserText("are you there?")},
		},
		turns: []turn{user("hello again")},
	},
	{
		name: "seeded session with thinking and an image",
		session: aap.PostSessionsRequest{
			Agent: demoAgent(),
			Messages: []aap.Message{
				&aap.UserMessage{Content: aap.BlockContent(&aap.TextBlock{Text: "think about this"}, &aap.ImageBlock{URL: "https://example.com/cat.png"})},
				&aap.AssistantMessage{Content: aap.BlockContent(&aap.ThinkingBlock{Thinking: "Thinking about: think about this"}, &aap.TextBlock{Text: "Done thinking."})},
			},
		},
		turns: []turn{user("hello again")},
	},
	{
		name: "seeded session waiting for a client tool result",
		session: aap.PostSessionsRequest{
			Agent: demoAgent(),
			Tools: []aap.ToolSpec{weatherTool},
			Messages: []aap.Message{
				aap.UserText("weather in Paris"),
				&aap.AssistantMessage{Content: aap.BlockContent(&aap.ToolUseBlock{ToolCallID: "call_seed", Name: demo.WeatherTool, Input: json.RawMessage(`{"location":"Paris"}`)})},
			},
		},
		turns: []turn{toolResult("call_seed", "Sunny, 21°C")},
	},
	{
		name: "seeded session waiting for a permission",
		session: aap.PostSessionsRequest{
			Agent: demoAgent(untrustedSearch),
			Messages: []aap.Message{
				aap.UserText("search dogs"),
				&aap.AssistantMessage{Content: aap.BlockContent(&aap.ToolUseBlock{ToolCallID: "call_seed", Name: demo.SearchTool, Input: json.RawMessage(`{"query":"dogs"}`)})},
			},
		},
		turns: []turn{permission("call_seed", true, "")},
	},
	{
		name:    "untrusted server tool denied without a reason",
		session: aap.PostSessionsRequest{Agent: demoAgent(untrustedSearch)},
		turns:   []turn{user("search dogs"), permission("call#1", false, "")},
	},
	{
		name:    "a new message leaves a permission unanswered",
		session: aap.PostSessionsRequest{Agent: demoAgent(untrustedSearch)},
		turns:   []turn{user("search dogs"), user("never mind"), user("hello again")},
	},
	{
		name:    "a user message of two text blocks",
		session: aap.PostSessionsRequest{Agent: demoAgent()},
		turns: []turn{{Messages: []aap.Message{&aap.UserMessage{Content: aap.BlockContent(
			&aap.TextBlock{Text: "first part"},
			&aap.TextBlock{Text: "second part"},
		)}}}},
	},
	{
		name:    "a client tool result of two text blocks",
		session: aap.PostSessionsRequest{Agent: demoAgent(), Tools: []aap.ToolSpec{weatherTool}},
		turns: []turn{user("weather in Paris"), {Messages: []aap.Message{&aap.ToolMessage{
			ToolCallID: "call#1",
			Content:    aap.BlockContent(&aap.TextBlock{Text: "Sunny,"}, &aap.TextBlock{Text: "21°C"}),
		}}}},
	},
	{
		name:    "text and a data URI image",
		session: aap.PostSessionsRequest{Agent: demoAgent()},
		turns: []turn{{Messages: []aap.Message{&aap.UserMessage{Content: aap.BlockContent(
			&aap.ImageBlock{URL: "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg=="},
			&aap.TextBlock{Text: "and this one"},
		)}}}},
	},
	{
		name:    "a turn declares the client tool",
		session: aap.PostSessionsRequest{Agent: demoAgent()},
		turns: []turn{
			user("weather in Paris"),
			{Messages: []aap.Message{aap.UserText("weather in Rome")}, Tools: []aap.ToolSpec{weatherTool}},
			toolResult("call#1", "Cloudy"),
			{Messages: []aap.Message{aap.UserText("weather in Oslo")}, Tools: []aap.ToolSpec{}},
		},
	},
	{
		name:    "several turns",
		session: aap.PostSessionsRequest{Agent: demoAgent(trustedSearch), Tools: []aap.ToolSpec{weatherTool}},
		turns: []turn{
			user("hello there"),
			user("please think"),
			user("weather in Paris"),
			toolResult("call#1", "Sunny, 21°C"),
			user("search dogs"),
		},
	},
	{
		name:    "a new message leaves a client tool call unanswered",
		session: aap.PostSessionsRequest{Agent: demoAgent(), Tools: []aap.ToolSpec{weatherTool}},
		turns:   []turn{user("weather in Paris"), user("never mind")},
	},
	{
		name:    "turn overrides enable a server tool and set an option",
		session: aap.PostSessionsRequest{Agent: demoAgent()},
		turns: []turn{
			user("search dogs"),
			{
				Messages: []aap.Message{aap.UserText("search cats")},
				Agent:    &aap.AgentConfig{Tools: []aap.ServerToolRef{trustedSearch}, Options: map[string]string{"language": "French"}},
			},
		},
	},
	{
		name:    "options, a secret one redacted",
		session: aap.PostSessionsRequest{Agent: aap.AgentConfig{Name: "demo", Options: map[string]string{"language": "French", "api_key": "sk-123"}}},
		turns:   []turn{user("hello there")},
	},
	{
		name:    "long answer",
		session: aap.PostSessionsRequest{Agent: demoAgent()},
		turns:   []turn{user("long 25")},
	},
}

// wholeSession is one AAP client session that does everything the demo
// agent can: text, thinking, a client tool, grants (two), a denial, a
// trusted server tool run inline, a model error, and a client tool call a
// new message leaves unanswered.
var wholeSession = chainCase{
	name:    "a whole session",
	session: aap.PostSessionsRequest{Agent: demoAgent(untrustedSearch), Tools: []aap.ToolSpec{weatherTool}},
	turns: []turn{
		user("hello there"),
		user("please think"),
		user("weather in Paris"),
		toolResult("call#1", "Sunny, 21°C"),
		user("search dogs"),
		permission("call#2", true, ""),
		user("search cats"),
		permission("call#3", false, "not today"),
		user("search fish"),
		permission("call#4", true, ""),
		{Messages: []aap.Message{aap.UserText("search birds")}, Agent: &aap.AgentConfig{Tools: []aap.ServerToolRef{trustedSearch}}},
		user("please fail"),
		user("hello again"),
		user("weather in Rome"),
		user("never mind"),
	},
}

// upstreamDifferences are the differences between aap2agui's history of a
// conversation and the history of the AAP session behind the chain that
// the test tolerates, with the reasons.
var upstreamDifferences = []*accepted{{
	Name: "a tool result of text blocks",
	Why: "AG-UI tool message content is a string: agui2aap joins the text blocks of a client's result (MAPPING: tool results with blocks), " +
		"so the AAP server behind it stores one string, while aap2agui keeps the blocks its client sent",
	From: `"content":[{"type":"text","text":"Sunny,"},{"type":"text","text":"21°C"}]}`,
	To:   `"content":"Sunny,21°C"}`,
}}

func TestChain(t *testing.T) {
	cases := append(chainCases[:len(chainCases):len(chainCases)], wholeSession)
	skipped := slices.ContainsFunc(cases, func(tc chainCase) bool { return tc.skip != "" })
	// The demo agent as it is, and as AAP servers that store the outcome of
	// a tool_permission without sending it (the reference TypeScript SDK
	// 0.8 is one).
	for _, quiet := range []bool{false, true} {
		agent := "normal agent"
		if quiet {
			agent = "quiet permission results"
		}
		opts := demo.AAPAgentOptions{QuietPermissionResults: quiet}
		t.Run(agent, func(t *testing.T) {
			t.Parallel()
			t.Run("meta", func(t *testing.T) {
				c := newChain(t, opts)
				ctx, cancel := context.WithTimeout(context.Background(), bridgetest.Timeout)
				defer cancel()
				direct, err := c.Direct.Meta(ctx)
				require.NoError(t, err)
				chained, err := c.Chained.Meta(ctx)
				require.NoError(t, err)
				require.Equal(t, direct, chained)
			})

			for _, tc := range cases {
				for _, mode := range []aap.StreamMode{aap.StreamDelta, aap.StreamMessage, aap.StreamNone} {
					t.Run(tc.name+"/"+string(mode), func(t *testing.T) {
						t.Parallel()
						if tc.skip != "" {
							t.Skip(tc.skip)
						}
						checkChain(t, newChain(t, opts), quiet, tc, mode)
					})
				}
			}
		})
	}

	// An accepted difference no conversation needs any more is stale: it
	// would hide a regression. (A skipped case may be the one needing it.)
	t.Cleanup(func() {
		if !skipped && !t.Failed() {
			for _, a := range append(acceptedDifferences, upstreamDifferences...) {
				require.Positivef(t, a.used.Load(), "accepted difference %q was never needed: remove it", a.Name)
			}
		}
	})
}

// checkChain plays one conversation directly and through the chain c in
// the stream mode, and requires the two to be the same (but for the
// accepted differences), in one session of the AAP server behind the
// chain whose history is the one aap2agui shows.
func checkChain(t *testing.T, c *chain, quiet bool, tc chainCase, mode aap.StreamMode) {
	t.Helper()
	direct := converse(t, c.Direct, &tc.session, tc.turns, mode)
	chained := acceptDifferences(converse(t, c.Chained, &tc.session, tc.turns, mode))
	chainedTurns := chained
	if quiet {
		chainedTurns = withoutPermissionResults(chained, tc.turns)
	}
	require.Equal(t, direct.Turns, chainedTurns.Turns, "turns; direct:\n%s\nchained:\n%s", direct, chained)
	require.Equal(t, direct.History, chained.History, "full history")
	require.Equal(t, direct.Compacted, chained.Compacted, "compacted history")
	require.Equal(t, direct.Session, chained.Session, "session")

	// The whole conversation went to one session of the AAP server behind
	// the chain, whose own history is the one aap2agui shows.
	ups := upstreamSessions(t, c.Upstream)
	require.Len(t, ups, 1, "AAP sessions behind the chain for one conversation")
	require.Equal(t, rewriteWith(upstreamDifferences, fullHistory(t, c.Chained, chained.ID)), fullHistory(t, c.Upstream, ups[0].SessionID),
		"aap2agui's full history and the AAP server's own")
}
