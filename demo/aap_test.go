package demo_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/internal/sse"
	"github.com/aapagui/aapagui/translate"
)

func newAAPServer(t testing.TB, opts demo.AAPAgentOptions) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(demo.NewAAPAgent(opts))
	t.Cleanup(srv.Close)
	return srv
}

func newClient(srv *httptest.Server, key string) *aap.Client {
	return aap.NewClient(srv.URL, aap.ClientOptions{APIKey: key, HTTPClient: srv.Client()})
}

var weatherSpec = aap.ToolSpec{
	Name:        demo.WeatherTool,
	Description: "Get current weather for a location",
	Parameters:  json.RawMessage(`{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}`),
}

var (
	trusted   = []aap.ServerToolRef{{Name: demo.SearchTool, Trust: true}}
	untrusted = []aap.ServerToolRef{{Name: demo.SearchTool}}
)

func createSession(t testing.TB, c *aap.Client, req *aap.PostSessionsRequest) string {
	t.Helper()
	if req.Agent.Name == "" {
		req.Agent.Name = "demo"
	}
	resp, err := c.CreateSession(context.Background(), req)
	require.NoError(t, err)
	return resp.SessionID
}

// streamTurn sends a streaming turn and returns its events.
func streamTurn(t testing.TB, c *aap.Client, id string, req *aap.PostSessionTurnRequest) []aap.Event {
	t.Helper()
	var evs []aap.Event
	for ev, err := range c.StreamTurn(context.Background(), id, req) {
		require.NoError(t, err)
		evs = append(evs, ev)
	}
	return evs
}

// callIDs matches the tool call ids the agent makes up: "call_" and 128
// random bits in hex.
var callIDs = regexp.MustCompile(`call_[0-9a-f]{32}`)

// normalize replaces the random tool call ids with call_ID.
func normalize(s string) string { return callIDs.ReplaceAllString(s, "call_ID") }

func frames(t testing.TB, evs []aap.Event) []string {
	t.Helper()
	out := make([]string, len(evs))
	for i, ev := range evs {
		b, err := aap.AppendFrame(nil, ev)
		require.NoError(t, err)
		out[i] = normalize(string(b))
	}
	return out
}

func messagesJSON(t testing.TB, msgs []aap.Message) []string {
	t.Helper()
	out := make([]string, len(msgs))
	for i, m := range msgs {
		b, err := json.Marshal(m)
		require.NoError(t, err)
		out[i] = normalize(string(b))
	}
	return out
}

// An utterance is one thing the agent says in a turn; the test renders the
// events and messages AAP requires for it in each mode.
type utterance struct {
	kind  string // text, thinking, words, call, result
	s     string // the text, the thinking, the result, or the tool name
	input string // a call's input
	n     int    // words
}

func say(s string) utterance            { return utterance{kind: "text", s: s} }
func think(s string) utterance          { return utterance{kind: "thinking", s: s} }
func words(n int) utterance             { return utterance{kind: "words", n: n} }
func call(name, input string) utterance { return utterance{kind: "call", s: name, input: input} }
func result(s string) utterance         { return utterance{kind: "result", s: s} }

func wordsText(n int) string {
	var sb strings.Builder
	for i := range n {
		sb.WriteString(demo.LongWord(i))
	}
	return sb.String()
}

// wantEvents renders the stream of a turn: text in Chunks as text_delta
// events (delta) or one text event (message), and so on.
func wantEvents(t testing.TB, mode aap.StreamMode, says []utterance, stop aap.StopReason) []string {
	evs := []aap.Event{&aap.TurnStart{}}
	for _, u := range says {
		switch u.kind {
		case "text", "thinking":
			if mode == aap.StreamMessage {
				if u.kind == "text" {
					evs = append(evs, &aap.Text{Text: u.s})
				} else {
					evs = append(evs, &aap.Thinking{Thinking: u.s})
				}
				continue
			}
			for _, c := range demo.Chunks(u.s) {
				if u.kind == "text" {
					evs = append(evs, &aap.TextDelta{Delta: c})
				} else {
					evs = append(evs, &aap.ThinkingDelta{Delta: c})
				}
			}
		case "words":
			if mode == aap.StreamMessage {
				evs = append(evs, &aap.Text{Text: wordsText(u.n)})
				continue
			}
			for i := range u.n {
				evs = append(evs, &aap.TextDelta{Delta: demo.LongWord(i)})
			}
		case "call":
			evs = append(evs, &aap.ToolCall{ToolCallID: "call_ID", Name: u.s, Input: json.RawMessage(u.input)})
		case "result":
			evs = append(evs, &aap.ToolResult{ToolCallID: "call_ID", Content: aap.TextContent(u.s)})
		}
	}
	return frames(t, append(evs, &aap.TurnStop{StopReason: stop}))
}

// wantMessages renders what a turn adds to the history: one assistant
// message per run of text, thinking and tool calls (string content when it
// is a single text), and a tool message per result.
func wantMessages(t testing.TB, says []utterance) []string {
	var msgs []aap.Message
	var open []aap.ContentBlock
	closeMsg := func() {
		switch {
		case len(open) == 0:
			return
		case len(open) == 1 && open[0].BlockType() == aap.BlockText:
			msgs = append(msgs, &aap.AssistantMessage{Content: aap.TextContent(open[0].(*aap.TextBlock).Text)})
		default:
			msgs = append(msgs, &aap.AssistantMessage{Content: aap.BlockContent(open...)})
		}
		open = nil
	}
	for _, u := range says {
		switch u.kind {
		case "text":
			open = append(open, &aap.TextBlock{Text: u.s})
		case "thinking":
			open = append(open, &aap.ThinkingBlock{Thinking: u.s})
		case "words":
			open = append(open, &aap.TextBlock{Text: wordsText(u.n)})
		case "call":
			open = append(open, &aap.ToolUseBlock{ToolCallID: "call_ID", Name: u.s, Input: json.RawMessage(u.input)})
		case "result":
			closeMsg()
			msgs = append(msgs, &aap.ToolMessage{ToolCallID: "call_ID", Content: aap.TextContent(u.s)})
		}
	}
	closeMsg()
	return messagesJSON(t, msgs)
}

// A step is one turn of a conversation. Messages may use the tool call id
// "call_ID", replaced with the id of the last call the agent made.
type step struct {
	send   []aap.Message
	closes bool // the turn closes a pending call with a "not answered" result
	says   []utterance
	stop   aap.StopReason
}

func user(s string) []aap.Message { return []aap.Message{aap.UserText(s)} }
func toolResult(s string) []aap.Message {
	return []aap.Message{&aap.ToolMessage{ToolCallID: "call_ID", Content: aap.TextContent(s)}}
}
func permission(granted bool, reason string) []aap.Message {
	return []aap.Message{&aap.ToolPermissionMessage{ToolCallID: "call_ID", Granted: granted, Reason: reason}}
}

func withCallID(msgs []aap.Message, id string) []aap.Message {
	out := make([]aap.Message, len(msgs))
	for i, m := range msgs {
		switch m := m.(type) {
		case *aap.ToolMessage:
			c := *m
			c.ToolCallID = id
			out[i] = &c
		case *aap.ToolPermissionMessage:
			c := *m
			c.ToolCallID = id
			out[i] = &c
		default:
			out[i] = m
		}
	}
	return out
}

type conversation struct {
	name       string
	agentTools []aap.ServerToolRef
	tools      []aap.ToolSpec
	steps      []step
}

const unanswered = "Tool call was not answered: the user sent a new message instead."

var conversations = []conversation{
	{name: "echo", steps: []step{
		{send: user("hello there"), says: []utterance{say(demo.EchoText("hello there"))}},
	}},
	{name: "echo of text blocks, the image skipped", steps: []step{
		{send: []aap.Message{&aap.UserMessage{Content: aap.BlockContent(
			&aap.TextBlock{Text: "hello"}, &aap.ImageBlock{URL: "https://example.com/cat.png"}, &aap.TextBlock{Text: "world"})}},
			says: []utterance{say(demo.EchoText("hello world"))}},
	}},
	{name: "think", steps: []step{
		{send: user("Please THINK it over"), says: []utterance{think(demo.ThinkingText("Please THINK it over")), say(demo.DoneThinking)}},
	}},
	{name: "fail, with the partial text kept", steps: []step{
		{send: user("think, then fail"), says: []utterance{say(demo.FailPrefix)}, stop: aap.StopError},
		{send: user("hi"), says: []utterance{say(demo.EchoText("hi"))}},
	}},
	{name: "weather with the client tool", tools: []aap.ToolSpec{weatherSpec}, steps: []step{
		{send: user("What is the weather in Tokyo?"), says: []utterance{call(demo.WeatherTool, `{"location":"Tokyo"}`)}, stop: aap.StopToolUse},
		{send: toolResult("18°C, partly cloudy"), says: []utterance{say(demo.WeatherText("Tokyo", "18°C, partly cloudy"))}},
	}},
	{name: "weather input is not HTML-escaped", tools: []aap.ToolSpec{weatherSpec}, steps: []step{
		{send: user(`weather in <Zürich & "Co">`), says: []utterance{call(demo.WeatherTool, `{"location":"<Zürich & \"Co\">"}`)}, stop: aap.StopToolUse},
		{send: toolResult("fine"), says: []utterance{say(demo.WeatherText(`<Zürich & "Co">`, "fine"))}},
	}},
	{name: "weather without the client tool", agentTools: trusted, steps: []step{
		{send: user("weather in Paris"), says: []utterance{say(demo.NoWeatherTool)}},
	}},
	{name: "search not enabled", tools: []aap.ToolSpec{weatherSpec}, steps: []step{
		{send: user("search cats"), says: []utterance{say(demo.NoSearchTool)}},
	}},
	{name: "trusted search runs inline", agentTools: trusted, steps: []step{
		{send: user("search cats"), says: []utterance{
			call(demo.SearchTool, `{"query":"cats"}`), result(demo.SearchResult("cats")), say(demo.SearchAnswer(demo.SearchResult("cats")))}},
	}},
	{name: "untrusted search granted", agentTools: untrusted, steps: []step{
		{send: user("please search dogs."), says: []utterance{call(demo.SearchTool, `{"query":"dogs"}`)}, stop: aap.StopToolUse},
		{send: permission(true, ""), says: []utterance{result(demo.SearchResult("dogs")), say(demo.SearchAnswer(demo.SearchResult("dogs")))}},
	}},
	{name: "untrusted search denied with a reason", agentTools: untrusted, steps: []step{
		{send: user("search dogs"), says: []utterance{call(demo.SearchTool, `{"query":"dogs"}`)}, stop: aap.StopToolUse},
		{send: permission(false, "not today"), says: []utterance{result(demo.DeniedResult("not today")), say(demo.DeniedText("not today"))}},
	}},
	{name: "untrusted search denied without a reason", agentTools: untrusted, steps: []step{
		{send: user("search dogs"), says: []utterance{call(demo.SearchTool, `{"query":"dogs"}`)}, stop: aap.StopToolUse},
		{send: permission(false, ""), says: []utterance{result("Tool call denied"), say("Search was not allowed: no reason given")}},
	}},
	{name: "long", steps: []step{
		{send: user("long 5"), says: []utterance{words(5)}},
	}},
	{name: "a new message closes pending calls", agentTools: untrusted, tools: []aap.ToolSpec{weatherSpec}, steps: []step{
		{send: user("weather in Oslo"), says: []utterance{call(demo.WeatherTool, `{"location":"Oslo"}`)}, stop: aap.StopToolUse},
		{send: user("never mind"), closes: true, says: []utterance{say(demo.EchoText("never mind"))}},
		{send: user("search news"), says: []utterance{call(demo.SearchTool, `{"query":"news"}`)}, stop: aap.StopToolUse},
		{send: user("no, think instead"), closes: true, says: []utterance{think(demo.ThinkingText("no, think instead")), say(demo.DoneThinking)}},
	}},
}

var modes = []aap.StreamMode{aap.StreamDelta, aap.StreamMessage, aap.StreamNone}

// TestAAPConversations plays every rule of the script in the three
// response modes and checks the exact events, the JSON response and the
// history, in each protocol version: versions 1 and 2 begin each
// conversation with PUT /session, whose answer is the first step's with
// session_start (or sessionId) first.
func TestAAPConversations(t *testing.T) {
	for _, version := range []int{3, 1, 2} {
		t.Run(fmt.Sprintf("v%d", version), func(t *testing.T) { testAAPConversations(t, version) })
	}
}

func testAAPConversations(t *testing.T, version int) {
	srv := newAAPServer(t, demo.AAPAgentOptions{Version: version})
	c := newClient(srv, "")
	ctx := context.Background()
	got, err := c.Version(ctx)
	require.NoError(t, err)
	require.Equal(t, version, got, "GET /meta names the version")
	for _, conv := range conversations {
		for _, mode := range modes {
			t.Run(conv.name+"/"+string(mode), func(t *testing.T) {
				id := ""
				if version == 3 {
					id = createSession(t, c, &aap.PostSessionsRequest{
						Agent: aap.AgentConfig{Tools: conv.agentTools},
						Tools: conv.tools,
					})
				}
				put := &aap.PutSessionRequest{Agent: aap.AgentConfig{Name: "demo", Tools: conv.agentTools}, Stream: mode, Tools: aap.ToolSpecsToV1(conv.tools)}
				var history []string
				callID := ""
				for i, st := range conv.steps {
					stop := st.stop
					if stop == "" {
						stop = aap.StopEndTurn
					}
					msgs := withCallID(st.send, callID)
					if st.closes {
						history = append(history, normalize(fmt.Sprintf(`{"role":"tool","toolCallId":%q,"content":%q}`, callID, unanswered)))
					}
					for _, m := range msgs {
						if m.Role() != aap.RoleToolPermission {
							history = append(history, messagesJSON(t, []aap.Message{m})...)
						}
					}
					want := wantMessages(t, st.says)
					history = append(history, want...)
					req := &aap.PostSessionTurnRequest{Stream: mode, Messages: msgs}
					if mode == aap.StreamNone {
						var resp *aap.PostSessionTurnResponse
						var err error
						if id == "" {
							put.Messages = msgs
							var pr *aap.PutSessionResponse
							if pr, err = c.PutSession(ctx, put); err == nil {
								id, resp = pr.SessionID, pr.Turn()
							}
						} else {
							resp, err = c.Turn(ctx, id, req)
						}
						require.NoError(t, err, "step %d", i)
						assert.Equal(t, stop, resp.StopReason, "step %d", i)
						assert.Equal(t, want, messagesJSON(t, resp.Messages), "step %d", i)
						for _, m := range resp.Messages {
							if a, ok := m.(*aap.AssistantMessage); ok {
								for _, b := range a.Content.Blocks {
									if tu, ok := b.(*aap.ToolUseBlock); ok {
										callID = tu.ToolCallID
									}
								}
							}
						}
						continue
					}
					var evs []aap.Event
					if id == "" {
						put.Messages = msgs
						for ev, err := range c.StreamPutSession(ctx, put) {
							require.NoError(t, err)
							evs = append(evs, ev)
						}
						require.IsType(t, &aap.SessionStart{}, evs[0], "PUT /session opens with session_start")
						id, evs = evs[0].(*aap.SessionStart).SessionID, evs[1:]
					} else {
						evs = streamTurn(t, c, id, req)
					}
					require.Equal(t, wantEvents(t, mode, st.says, stop), frames(t, evs), "step %d", i)
					for _, ev := range evs {
						if tc, ok := ev.(*aap.ToolCall); ok {
							require.Regexp(t, `^call_[0-9a-f]{32}$`, tc.ToolCallID)
							callID = tc.ToolCallID
						}
					}
				}
				for _, ht := range []aap.HistoryType{aap.HistoryFull, aap.HistoryCompacted} {
					got, err := c.History(ctx, id, ht)
					require.NoError(t, err)
					assert.Equal(t, history, messagesJSON(t, got), "%s history", ht)
				}
			})
		}
	}
}

func postRaw(t testing.TB, srv *httptest.Server, method, path, key, body string) *http.Response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, srv.URL+path, rd)
	require.NoError(t, err)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func readAll(t testing.TB, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

// TestAAPWire checks the bytes on the wire against the framing of the
// reference captures.
func TestAAPWire(t *testing.T) {
	srv := newAAPServer(t, demo.AAPAgentOptions{})
	c := newClient(srv, "")
	tests := []struct {
		name, body, contentType, want string
		tools                         []aap.ToolSpec
	}{
		{
			name:        "delta",
			body:        `{"stream":"delta","messages":[{"role":"user","content":"hello there"}]}`,
			contentType: "text/event-stream",
			want: "event: turn_start\ndata: {}\n\n" +
				"event: text_delta\ndata: {\"delta\":\"You \"}\n\n" +
				"event: text_delta\ndata: {\"delta\":\"said: \"}\n\n" +
				"event: text_delta\ndata: {\"delta\":\"hello \"}\n\n" +
				"event: text_delta\ndata: {\"delta\":\"there\"}\n\n" +
				"event: turn_stop\ndata: {\"stopReason\":\"end_turn\"}\n\n",
		},
		{
			name:        "message",
			body:        `{"stream":"message","messages":[{"role":"user","content":"hello there"}]}`,
			contentType: "text/event-stream",
			want: "event: turn_start\ndata: {}\n\n" +
				"event: text\ndata: {\"text\":\"You said: hello there\"}\n\n" +
				"event: turn_stop\ndata: {\"stopReason\":\"end_turn\"}\n\n",
		},
		{
			name:        "none is the default",
			body:        `{"messages":[{"role":"user","content":"hello there"}]}`,
			contentType: "application/json",
			want:        `{"stopReason":"end_turn","messages":[{"role":"assistant","content":"You said: hello there"}]}` + "\n",
		},
		{
			name:        "none with thinking",
			body:        `{"stream":"none","messages":[{"role":"user","content":"think"}]}`,
			contentType: "application/json",
			want:        `{"stopReason":"end_turn","messages":[{"role":"assistant","content":[{"type":"thinking","thinking":"Thinking about: think"},{"type":"text","text":"Done thinking."}]}]}` + "\n",
		},
		{
			name:        "none with a client tool call",
			body:        `{"stream":"none","messages":[{"role":"user","content":"what is the weather in Tokyo"}]}`,
			tools:       []aap.ToolSpec{weatherSpec},
			contentType: "application/json",
			want:        `{"stopReason":"tool_use","messages":[{"role":"assistant","content":[{"type":"tool_use","toolCallId":"call_ID","name":"get_weather","input":{"location":"Tokyo"}}]}]}` + "\n",
		},
		{
			name:        "delta failure",
			body:        `{"stream":"delta","messages":[{"role":"user","content":"fail"}]}`,
			contentType: "text/event-stream",
			want: "event: turn_start\ndata: {}\n\n" +
				"event: text_delta\ndata: {\"delta\":\"Sta\"}\n\n" +
				"event: text_delta\ndata: {\"delta\":\"rti\"}\n\n" +
				"event: text_delta\ndata: {\"delta\":\"ng…\"}\n\n" +
				"event: turn_stop\ndata: {\"stopReason\":\"error\"}\n\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := createSession(t, c, &aap.PostSessionsRequest{Tools: tt.tools})
			resp := postRaw(t, srv, http.MethodPost, "/sessions/"+id+"/turns", "", tt.body)
			require.Equal(t, http.StatusOK, resp.StatusCode)
			assert.Equal(t, tt.contentType, resp.Header.Get("Content-Type"))
			assert.Equal(t, tt.want, normalize(readAll(t, resp)))
		})
	}
}

func TestAAPMeta(t *testing.T) {
	srv := newAAPServer(t, demo.AAPAgentOptions{APIKeys: []string{"k1"}})
	// /meta is public even when keys are required.
	resp := postRaw(t, srv, http.MethodGet, "/meta", "", "")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	var raw struct {
		Version int `json:"version"`
		Agents  []struct {
			Name         string            `json:"name"`
			Version      string            `json:"version"`
			Tools        []json.RawMessage `json:"tools"`
			Options      json.RawMessage   `json:"options"`
			Capabilities json.RawMessage   `json:"capabilities"`
		} `json:"agents"`
	}
	require.NoError(t, json.Unmarshal([]byte(readAll(t, resp)), &raw))
	assert.Equal(t, 3, raw.Version)
	require.Len(t, raw.Agents, 1)
	ag := raw.Agents[0]
	assert.Equal(t, "demo", ag.Name)
	assert.NotEmpty(t, ag.Version)
	want, err := json.Marshal(demo.SearchToolSpec)
	require.NoError(t, err)
	require.Len(t, ag.Tools, 1)
	assert.JSONEq(t, string(want), string(ag.Tools[0]))
	assert.JSONEq(t, `[{"type":"text","name":"language","default":"English"},{"type":"secret","name":"api_key","default":""}]`, string(ag.Options))
	assert.JSONEq(t, `{"history":{"compacted":{},"full":{}},"stream":{"delta":{},"message":{},"none":{}},"application":{"tools":{}},"image":{"http":{},"data":{}}}`, string(ag.Capabilities))

	// The client's strict decoder reads it too.
	meta, err := newClient(srv, "").Meta(context.Background())
	require.NoError(t, err)
	info, ok := meta.Agent("demo")
	require.True(t, ok)
	assert.True(t, info.Capabilities.SupportsStream(aap.StreamDelta))
	assert.True(t, info.Capabilities.SupportsHistory(aap.HistoryCompacted))
}

func TestAAPName(t *testing.T) {
	srv := newAAPServer(t, demo.AAPAgentOptions{Name: "echo-bot"})
	c := newClient(srv, "")
	meta, err := c.Meta(context.Background())
	require.NoError(t, err)
	require.Len(t, meta.Agents, 1)
	assert.Equal(t, "echo-bot", meta.Agents[0].Name)
	_, err = c.CreateSession(context.Background(), &aap.PostSessionsRequest{Agent: aap.AgentConfig{Name: "demo"}})
	assertHTTPError(t, err, http.StatusNotFound, "unknown_agent")
	id := createSession(t, c, &aap.PostSessionsRequest{Agent: aap.AgentConfig{Name: "echo-bot"}})
	info, err := c.GetSession(context.Background(), id)
	require.NoError(t, err)
	assert.Equal(t, "echo-bot", info.Agent.Name)
}

func assertHTTPError(t testing.TB, err error, status int, code string) {
	t.Helper()
	var he *aap.HTTPError
	require.True(t, errors.As(err, &he), "want an HTTP error, got %v", err)
	assert.Equal(t, status, he.StatusCode, "%v", err)
	assert.Equal(t, code, he.Code, "%v", err)
	assert.NotEmpty(t, he.Message)
}

// TestAAPSessions covers creation, redaction, seeding, turn overrides and
// deletion.
func TestAAPSessions(t *testing.T) {
	srv := newAAPServer(t, demo.AAPAgentOptions{})
	c := newClient(srv, "")
	ctx := context.Background()

	seed := []aap.Message{
		&aap.SystemMessage{Content: "You are a test agent."},
		aap.UserText("What's the capital of France?"),
		&aap.AssistantMessage{Content: aap.TextContent("Paris.")},
	}
	id := createSession(t, c, &aap.PostSessionsRequest{
		Agent:    aap.AgentConfig{Options: map[string]string{"language": "French", "api_key": "s3cret"}},
		Messages: seed,
	})
	other := createSession(t, c, &aap.PostSessionsRequest{})
	assert.NotEqual(t, id, other)
	assert.Regexp(t, `^sess_[0-9a-f]{32}$`, id)

	t.Run("create answers 201", func(t *testing.T) {
		resp := postRaw(t, srv, http.MethodPost, "/sessions", "", `{"agent":{"name":"demo"}}`)
		assert.Equal(t, http.StatusCreated, resp.StatusCode)
		assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	})
	t.Run("secret options are redacted", func(t *testing.T) {
		info, err := c.GetSession(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, aap.SessionInfo{SessionID: id, Agent: aap.AgentConfig{Name: "demo",
			Options: map[string]string{"language": "French", "api_key": "***"}}}, *info)
		for _, path := range []string{"/sessions/" + id, "/sessions"} {
			body := readAll(t, postRaw(t, srv, http.MethodGet, path, "", ""))
			assert.NotContains(t, body, "s3cret", path)
			assert.Contains(t, body, `"api_key":"***"`, path)
		}
	})
	t.Run("seed messages start the history", func(t *testing.T) {
		got, err := c.History(ctx, id, aap.HistoryFull)
		require.NoError(t, err)
		assert.Equal(t, messagesJSON(t, seed), messagesJSON(t, got))
		got, err = c.History(ctx, other, aap.HistoryCompacted)
		require.NoError(t, err)
		assert.Empty(t, got)
	})
	t.Run("turn overrides persist", func(t *testing.T) {
		_, err := c.Turn(ctx, id, &aap.PostSessionTurnRequest{
			Agent:    &aap.AgentConfig{Tools: trusted, Options: map[string]string{"language": "German"}},
			Messages: user("hi"),
			Tools:    []aap.ToolSpec{weatherSpec},
		})
		require.NoError(t, err)
		info, err := c.GetSession(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, aap.SessionInfo{SessionID: id,
			Agent: aap.AgentConfig{Name: "demo", Tools: trusted, Options: map[string]string{"language": "German", "api_key": "***"}},
			Tools: []aap.ToolSpec{weatherSpec}}, *info)

		// Without overrides, the session's tools are used.
		resp, err := c.Turn(ctx, id, &aap.PostSessionTurnRequest{Messages: user("search cats")})
		require.NoError(t, err)
		assert.Equal(t, aap.StopEndTurn, resp.StopReason)
		require.Len(t, resp.Messages, 3)
		resp, err = c.Turn(ctx, id, &aap.PostSessionTurnRequest{Messages: user("weather in Rome")})
		require.NoError(t, err)
		assert.Equal(t, aap.StopToolUse, resp.StopReason)

		// Empty lists replace (disable) them; the pending call is closed.
		resp, err = c.Turn(ctx, id, &aap.PostSessionTurnRequest{
			Agent: &aap.AgentConfig{Tools: []aap.ServerToolRef{}}, Tools: []aap.ToolSpec{}, Messages: user("search cats"),
		})
		require.NoError(t, err)
		assert.Equal(t, wantMessages(t, []utterance{say(demo.NoSearchTool)}), messagesJSON(t, resp.Messages))
		resp, err = c.Turn(ctx, id, &aap.PostSessionTurnRequest{Messages: user("weather in Rome")})
		require.NoError(t, err)
		assert.Equal(t, wantMessages(t, []utterance{say(demo.NoWeatherTool)}), messagesJSON(t, resp.Messages))
		info, err = c.GetSession(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, aap.AgentConfig{Name: "demo", Tools: []aap.ServerToolRef{}, Options: map[string]string{"language": "German", "api_key": "***"}}, info.Agent)
		assert.Equal(t, []aap.ToolSpec{}, info.Tools)
	})
	t.Run("delete answers 204, then 404", func(t *testing.T) {
		resp := postRaw(t, srv, http.MethodDelete, "/sessions/"+other, "", "")
		assert.Equal(t, http.StatusNoContent, resp.StatusCode)
		assert.Empty(t, readAll(t, resp))
		_, err := c.GetSession(ctx, other)
		assertHTTPError(t, err, http.StatusNotFound, "session_not_found")
		assertHTTPError(t, c.DeleteSession(ctx, other), http.StatusNotFound, "session_not_found")
		_, err = c.History(ctx, other, aap.HistoryFull)
		assertHTTPError(t, err, http.StatusNotFound, "session_not_found")
		_, err = c.Turn(ctx, other, &aap.PostSessionTurnRequest{Messages: user("hi")})
		assertHTTPError(t, err, http.StatusNotFound, "session_not_found")
		for s, err := range c.Sessions(ctx) {
			require.NoError(t, err)
			assert.NotEqual(t, other, s.SessionID)
		}
	})
}

// TestAAPSeededPendingCall resumes a tool call left unanswered in the seed
// history.
func TestAAPSeededPendingCall(t *testing.T) {
	srv := newAAPServer(t, demo.AAPAgentOptions{})
	c := newClient(srv, "")
	ctx := context.Background()
	id := createSession(t, c, &aap.PostSessionsRequest{
		Tools: []aap.ToolSpec{weatherSpec},
		Messages: []aap.Message{
			aap.UserText("weather in Lima"),
			&aap.AssistantMessage{Content: aap.BlockContent(&aap.ToolUseBlock{ToolCallID: "seed_1", Name: demo.WeatherTool, Input: json.RawMessage(`{"location":"Lima"}`)})},
		},
	})
	resp, err := c.Turn(ctx, id, &aap.PostSessionTurnRequest{Messages: []aap.Message{
		&aap.ToolMessage{ToolCallID: "seed_1", Content: aap.BlockContent(&aap.TextBlock{Text: "sunny, "}, &aap.TextBlock{Text: "25°C"})},
	}})
	require.NoError(t, err)
	assert.Equal(t, wantMessages(t, []utterance{say(demo.WeatherText("Lima", "sunny, 25°C"))}), messagesJSON(t, resp.Messages))

	// Two parallel calls must be answered together; each answer gets its
	// own message.
	id = createSession(t, c, &aap.PostSessionsRequest{
		Tools: []aap.ToolSpec{weatherSpec},
		Messages: []aap.Message{
			aap.UserText("weather in Lima and Quito"),
			&aap.AssistantMessage{Content: aap.BlockContent(
				&aap.ToolUseBlock{ToolCallID: "seed_1", Name: demo.WeatherTool, Input: json.RawMessage(`{"location":"Lima"}`)},
				&aap.ToolUseBlock{ToolCallID: "seed_2", Name: demo.WeatherTool, Input: json.RawMessage(`{"location":"Quito"}`)})},
		},
	})
	one := &aap.ToolMessage{ToolCallID: "seed_1", Content: aap.TextContent("sunny")}
	two := &aap.ToolMessage{ToolCallID: "seed_2", Content: aap.TextContent("rainy")}
	_, err = c.Turn(ctx, id, &aap.PostSessionTurnRequest{Messages: []aap.Message{two}})
	assertHTTPError(t, err, http.StatusBadRequest, "invalid_turn")
	resp, err = c.Turn(ctx, id, &aap.PostSessionTurnRequest{Messages: []aap.Message{two, one}})
	require.NoError(t, err)
	assert.Equal(t, []string{
		`{"role":"assistant","content":"The weather in Quito: rainy"}`,
		`{"role":"assistant","content":"The weather in Lima: sunny"}`,
	}, messagesJSON(t, resp.Messages))
}

// TestAAPErrors checks the status and error code of malformed and
// misplaced requests, and that a rejected turn changes nothing.
func TestAAPErrors(t *testing.T) {
	srv := newAAPServer(t, demo.AAPAgentOptions{})
	c := newClient(srv, "")
	ctx := context.Background()
	plain := createSession(t, c, &aap.PostSessionsRequest{})
	weather := createSession(t, c, &aap.PostSessionsRequest{Tools: []aap.ToolSpec{weatherSpec}})
	search := createSession(t, c, &aap.PostSessionsRequest{Agent: aap.AgentConfig{Tools: untrusted}})
	pendingCall := func(id, msg string) string {
		resp, err := c.Turn(ctx, id, &aap.PostSessionTurnRequest{Messages: user(msg)})
		require.NoError(t, err)
		require.Equal(t, aap.StopToolUse, resp.StopReason)
		raw, err := json.Marshal(resp.Messages[0])
		require.NoError(t, err)
		return callIDs.FindString(string(raw))
	}
	w := pendingCall(weather, "weather in Bern")
	s := pendingCall(search, "search bern")

	turns := func(id string) string { return "/sessions/" + id + "/turns" }
	tests := []struct {
		name, method, path, body string
		status                   int
		code                     string
	}{
		{"create: unknown agent", "POST", "/sessions", `{"agent":{"name":"nobody"}}`, 404, "unknown_agent"},
		{"create: empty body", "POST", "/sessions", ``, 400, "invalid_body"},
		{"create: malformed JSON", "POST", "/sessions", `{"agent":`, 400, "invalid_json"},
		{"create: not an object", "POST", "/sessions", `[]`, 400, "invalid_request"},
		{"create: no agent", "POST", "/sessions", `{}`, 400, "invalid_request"},
		{"create: no agent name", "POST", "/sessions", `{"agent":{}}`, 400, "invalid_request"},
		{"create: tool_permission in the seed", "POST", "/sessions", `{"agent":{"name":"demo"},"messages":[{"role":"tool_permission","toolCallId":"x","granted":true}]}`, 400, "invalid_request"},
		{"create: unknown role in the seed", "POST", "/sessions", `{"agent":{"name":"demo"},"messages":[{"role":"robot","content":"x"}]}`, 400, "invalid_request"},
		{"create: unknown server tool", "POST", "/sessions", `{"agent":{"name":"demo","tools":[{"name":"code_exec"}]}}`, 400, "invalid_request"},
		{"create: unknown option", "POST", "/sessions", `{"agent":{"name":"demo","options":{"colour":"red"}}}`, 400, "invalid_request"},
		{"create: client tool named like a server tool", "POST", "/sessions", `{"agent":{"name":"demo"},"tools":[{"name":"web_search","description":"","parameters":{}}]}`, 400, "invalid_request"},
		{"create: client tool without parameters", "POST", "/sessions", `{"agent":{"name":"demo"},"tools":[{"name":"x","description":""}]}`, 400, "invalid_request"},
		{"turn: unknown session", "POST", turns("sess_nope"), `{"messages":[{"role":"user","content":"hi"}]}`, 404, "session_not_found"},
		{"turn: unknown stream mode", "POST", turns(plain), `{"stream":"fast","messages":[{"role":"user","content":"hi"}]}`, 400, "invalid_request"},
		{"turn: missing messages", "POST", turns(plain), `{"stream":"delta"}`, 400, "invalid_request"},
		{"turn: no messages", "POST", turns(plain), `{"messages":[]}`, 400, "invalid_request"},
		{"turn: two user messages", "POST", turns(plain), `{"messages":[{"role":"user","content":"a"},{"role":"user","content":"b"}]}`, 400, "invalid_request"},
		{"turn: an assistant message", "POST", turns(plain), `{"messages":[{"role":"assistant","content":"a"}]}`, 400, "invalid_request"},
		{"turn: unknown role", "POST", turns(plain), `{"messages":[{"role":"robot","content":"a"}]}`, 400, "invalid_request"},
		{"turn: an http image", "POST", turns(plain), `{"messages":[{"role":"user","content":[{"type":"image","url":"http://example.com/a.png"}]}]}`, 400, "invalid_request"},
		{"turn: a tool result with nothing pending", "POST", turns(plain), `{"messages":[{"role":"tool","toolCallId":"call_1","content":"x"}]}`, 400, "invalid_turn"},
		{"turn: a permission with nothing pending", "POST", turns(plain), `{"messages":[{"role":"tool_permission","toolCallId":"call_1","granted":true}]}`, 400, "invalid_turn"},
		{"turn: a result for another call", "POST", turns(weather), `{"messages":[{"role":"tool","toolCallId":"call_1","content":"x"}]}`, 400, "invalid_turn"},
		{"turn: a permission for a client tool call", "POST", turns(weather), `{"messages":[{"role":"tool_permission","toolCallId":"` + w + `","granted":true}]}`, 400, "invalid_turn"},
		{"turn: a result for a call waiting for permission", "POST", turns(search), `{"messages":[{"role":"tool","toolCallId":"` + s + `","content":"x"}]}`, 400, "invalid_turn"},
		{"turn: the same call answered twice", "POST", turns(search), `{"messages":[{"role":"tool_permission","toolCallId":"` + s + `","granted":true},{"role":"tool_permission","toolCallId":"` + s + `","granted":false}]}`, 400, "invalid_request"},
		{"turn: the agent's name changes", "POST", turns(plain), `{"agent":{"name":"other"},"messages":[{"role":"user","content":"hi"}]}`, 400, "invalid_request"},
		{"turn: unknown server tool", "POST", turns(plain), `{"agent":{"tools":[{"name":"code_exec"}]},"messages":[{"role":"user","content":"hi"}]}`, 400, "invalid_request"},
		{"turn: unknown option", "POST", turns(plain), `{"agent":{"options":{"colour":"red"}},"messages":[{"role":"user","content":"hi"}]}`, 400, "invalid_request"},
		{"history: no type", "GET", "/sessions/" + plain + "/history", ``, 400, "invalid_request"},
		{"history: unknown type", "GET", "/sessions/" + plain + "/history?type=summary", ``, 400, "invalid_request"},
		{"history: unknown session", "GET", "/sessions/sess_nope/history?type=full", ``, 404, "session_not_found"},
		{"get: unknown session", "GET", "/sessions/sess_nope", ``, 404, "session_not_found"},
		{"delete: unknown session", "DELETE", "/sessions/sess_nope", ``, 404, "session_not_found"},
		{"list: bad cursor", "GET", "/sessions?after=%21%21", ``, 400, "invalid_cursor"},
		{"method not allowed", "PUT", "/sessions", `{}`, 405, "method_not_allowed"},
		{"method not allowed on turns", "GET", turns(plain), ``, 405, "method_not_allowed"},
		{"unknown endpoint", "GET", "/nope", ``, 404, "not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := postRaw(t, srv, tt.method, tt.path, "", tt.body)
			assert.Equal(t, tt.status, resp.StatusCode)
			assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
			var er aap.ErrorResponse
			require.NoError(t, json.Unmarshal([]byte(readAll(t, resp)), &er))
			assert.Equal(t, tt.code, er.Error.Code)
			assert.NotEmpty(t, er.Error.Message)
			if tt.status == http.StatusMethodNotAllowed {
				assert.NotEmpty(t, resp.Header.Get("Allow"))
			}
		})
	}

	// The rejected turns left the pending calls as they were.
	resp, err := c.Turn(ctx, weather, &aap.PostSessionTurnRequest{Messages: withCallID(toolResult("cold"), w)})
	require.NoError(t, err)
	assert.Equal(t, wantMessages(t, []utterance{say(demo.WeatherText("Bern", "cold"))}), messagesJSON(t, resp.Messages))
	resp, err = c.Turn(ctx, search, &aap.PostSessionTurnRequest{Messages: withCallID(permission(true, ""), s)})
	require.NoError(t, err)
	assert.Equal(t, wantMessages(t, []utterance{result(demo.SearchResult("bern")), say(demo.SearchAnswer(demo.SearchResult("bern")))}), messagesJSON(t, resp.Messages))
	hist, err := c.History(ctx, plain, aap.HistoryFull)
	require.NoError(t, err)
	assert.Empty(t, hist)
	info, err := c.GetSession(ctx, plain)
	require.NoError(t, err)
	assert.Equal(t, aap.AgentConfig{Name: "demo"}, info.Agent)
}

// TestAAPKeys checks authentication and that each key sees only its own
// sessions.
func TestAAPKeys(t *testing.T) {
	srv := newAAPServer(t, demo.AAPAgentOptions{APIKeys: []string{"key-a", "key-b"}})
	a, b := newClient(srv, "key-a"), newClient(srv, "key-b")
	ctx := context.Background()

	for name, c := range map[string]*aap.Client{"no key": newClient(srv, ""), "wrong key": newClient(srv, "key-c")} {
		t.Run(name, func(t *testing.T) {
			_, err := c.CreateSession(ctx, &aap.PostSessionsRequest{Agent: aap.AgentConfig{Name: "demo"}})
			assertHTTPError(t, err, http.StatusUnauthorized, "unauthorized")
			_, err = c.ListSessions(ctx, "")
			assertHTTPError(t, err, http.StatusUnauthorized, "unauthorized")
		})
	}

	id := createSession(t, a, &aap.PostSessionsRequest{})
	_, err := b.GetSession(ctx, id)
	assertHTTPError(t, err, http.StatusNotFound, "session_not_found")
	_, err = b.History(ctx, id, aap.HistoryFull)
	assertHTTPError(t, err, http.StatusNotFound, "session_not_found")
	_, err = b.Turn(ctx, id, &aap.PostSessionTurnRequest{Messages: user("hi")})
	assertHTTPError(t, err, http.StatusNotFound, "session_not_found")
	assertHTTPError(t, b.DeleteSession(ctx, id), http.StatusNotFound, "session_not_found")
	page, err := b.ListSessions(ctx, "")
	require.NoError(t, err)
	assert.Empty(t, page.Sessions)

	page, err = a.ListSessions(ctx, "")
	require.NoError(t, err)
	require.Len(t, page.Sessions, 1)
	assert.Equal(t, id, page.Sessions[0].SessionID)
	_, err = a.Turn(ctx, id, &aap.PostSessionTurnRequest{Messages: user("hi")})
	require.NoError(t, err)
}

func TestAAPPaging(t *testing.T) {
	srv := newAAPServer(t, demo.AAPAgentOptions{APIKeys: []string{"key-a", "key-b"}})
	a, b := newClient(srv, "key-a"), newClient(srv, "key-b")
	ctx := context.Background()
	var ids []string
	for i := range 45 {
		ids = append(ids, createSession(t, a, &aap.PostSessionsRequest{}))
		if i%15 == 0 {
			createSession(t, b, &aap.PostSessionsRequest{})
		}
	}
	var got []string
	var sizes []int
	after := ""
	for {
		page, err := a.ListSessions(ctx, after)
		require.NoError(t, err)
		sizes = append(sizes, len(page.Sessions))
		for _, s := range page.Sessions {
			got = append(got, s.SessionID)
			assert.Equal(t, "demo", s.Agent.Name)
		}
		if page.Next == "" {
			break
		}
		after = page.Next
	}
	assert.Equal(t, []int{20, 20, 5}, sizes)
	assert.Equal(t, ids, got, "oldest first, each once")

	var all []string
	for s, err := range b.Sessions(ctx) {
		require.NoError(t, err)
		all = append(all, s.SessionID)
	}
	assert.Len(t, all, 3)

	// Deleting the last session of a page does not break its cursor.
	first, err := a.ListSessions(ctx, "")
	require.NoError(t, err)
	require.NoError(t, a.DeleteSession(ctx, ids[19]))
	second, err := a.ListSessions(ctx, first.Next)
	require.NoError(t, err)
	require.NotEmpty(t, second.Sessions)
	assert.Equal(t, ids[20], second.Sessions[0].SessionID)
}

// TestAAPOneTurnAtATime checks that a session runs one turn at a time, and
// is free again as soon as the client has seen turn_stop.
func TestAAPOneTurnAtATime(t *testing.T) {
	srv := newAAPServer(t, demo.AAPAgentOptions{})
	c := newClient(srv, "")
	ctx := context.Background()
	id := createSession(t, c, &aap.PostSessionsRequest{})

	// A million deltas cannot fit in the connection's buffers: the turn is
	// still running while the client does not read.
	n := 0
	for ev, err := range c.StreamTurn(ctx, id, &aap.PostSessionTurnRequest{Stream: aap.StreamDelta, Messages: user("long 1000000")}) {
		require.NoError(t, err)
		require.IsType(t, &aap.TurnStart{}, ev)
		n++
		_, err = c.Turn(ctx, id, &aap.PostSessionTurnRequest{Messages: user("hi")})
		assertHTTPError(t, err, http.StatusConflict, "turn_in_progress")
		break // leave: the agent stops writing and finishes the turn
	}
	require.Equal(t, 1, n)
	require.Eventually(t, func() bool {
		_, err := c.Turn(ctx, id, &aap.PostSessionTurnRequest{Messages: user("hi")})
		return err == nil
	}, 10*time.Second, 10*time.Millisecond)

	// Back to back: every turn finds the previous one finished.
	for i := range 50 {
		mode := modes[i%len(modes)]
		req := &aap.PostSessionTurnRequest{Stream: mode, Messages: user("hello")}
		if mode == aap.StreamNone {
			_, err := c.Turn(ctx, id, req)
			require.NoError(t, err)
			continue
		}
		streamTurn(t, c, id, req)
	}
}

// TestAAPConcurrentSessions runs conversations in parallel (for the race
// detector).
func TestAAPConcurrentSessions(t *testing.T) {
	srv := newAAPServer(t, demo.AAPAgentOptions{})
	c := newClient(srv, "")
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			id, err := c.CreateSession(ctx, &aap.PostSessionsRequest{Agent: aap.AgentConfig{Name: "demo", Tools: trusted}})
			if !assert.NoError(t, err) {
				return
			}
			for j := range 10 {
				mode := modes[(i+j)%len(modes)]
				req := &aap.PostSessionTurnRequest{Stream: mode, Messages: user("search things")}
				if mode == aap.StreamNone {
					_, err = c.Turn(ctx, id.SessionID, req)
					assert.NoError(t, err)
				} else {
					for _, err := range c.StreamTurn(ctx, id.SessionID, req) {
						assert.NoError(t, err)
					}
				}
				_, _ = c.ListSessions(ctx, "")
				_, _ = c.History(ctx, id.SessionID, aap.HistoryFull)
			}
			hist, err := c.History(ctx, id.SessionID, aap.HistoryCompacted)
			assert.NoError(t, err)
			assert.Len(t, hist, 40)
		})
	}
	wg.Wait()
}

// A transcript is what an agent says, protocol aside: its texts, thinking,
// tool calls and tool results, in order.
type transcript []string

// aapTranscript reads a delta stream.
func aapTranscript(evs []aap.Event) (transcript, string) {
	var out transcript
	var text, thinking strings.Builder
	callID := ""
	flushText := func() {
		if thinking.Len() > 0 {
			out = append(out, "thinking: "+thinking.String())
			thinking.Reset()
		}
		if text.Len() > 0 {
			out = append(out, "text: "+text.String())
			text.Reset()
		}
	}
	for _, ev := range evs {
		switch ev := ev.(type) {
		case *aap.TextDelta:
			text.WriteString(ev.Delta)
		case *aap.ThinkingDelta:
			thinking.WriteString(ev.Delta)
		case *aap.ToolCall:
			flushText()
			callID = ev.ToolCallID
			out = append(out, "tool_call: "+ev.Name+" "+canonical(string(ev.Input)))
		case *aap.ToolResult:
			flushText()
			out = append(out, "tool_result: "+ev.Content.PlainText())
		default:
			flushText()
		}
	}
	return out, callID
}

func canonical(s string) string {
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// aguiRun posts a RunAgentInput to the AG-UI demo agent and returns what it
// says, the id of its last tool call and the id of its interrupt, if any.
func aguiRun(t *testing.T, srv *httptest.Server, input map[string]any) (transcript, string, string) {
	t.Helper()
	input["threadId"], input["runId"] = "thread-1", "run-1"
	body, err := json.Marshal(input)
	require.NoError(t, err)
	resp, err := srv.Client().Post(srv.URL, "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var out transcript
	var text, thinking, args strings.Builder
	var callID, callName, interrupt string
	for f, err := range sse.Read(resp.Body, sse.ReadOptions{}) {
		require.NoError(t, err)
		ev, err := agui.DecodeEvent(f.Data)
		require.NoError(t, err)
		switch ev := ev.(type) {
		case *events.TextMessageContentEvent:
			text.WriteString(ev.Delta)
		case *events.TextMessageEndEvent:
			out = append(out, "text: "+text.String())
			text.Reset()
		case *events.ReasoningMessageContentEvent:
			thinking.WriteString(ev.Delta)
		case *events.ReasoningMessageEndEvent:
			out = append(out, "thinking: "+thinking.String())
			thinking.Reset()
		case *events.ToolCallStartEvent:
			callID, callName = ev.ToolCallID, ev.ToolCallName
		case *events.ToolCallArgsEvent:
			args.WriteString(ev.Delta)
		case *events.ToolCallEndEvent:
			out = append(out, "tool_call: "+callName+" "+canonical(args.String()))
			args.Reset()
		case *events.ToolCallResultEvent:
			out = append(out, "tool_result: "+ev.Content)
		case *events.RunFinishedEvent:
			if ev.Outcome != nil && len(ev.Outcome.Interrupts) > 0 {
				interrupt = ev.Outcome.Interrupts[0].ID
			}
		case *events.RunErrorEvent:
			t.Fatalf("run error: %s", ev.Message)
		}
	}
	return out, callID, interrupt
}

// TestAAPSaysWhatAGUISays plays the same conversations with the AAP and the
// AG-UI demo agents and compares what they say.
func TestAAPSaysWhatAGUISays(t *testing.T) {
	aapSrv := newAAPServer(t, demo.AAPAgentOptions{})
	c := newClient(aapSrv, "")
	aguiSrv := httptest.NewServer(demo.AGUIAgent{})
	t.Cleanup(aguiSrv.Close)

	aguiWeather := []map[string]any{{"name": demo.WeatherTool, "description": weatherSpec.Description, "parameters": json.RawMessage(weatherSpec.Parameters)}}
	forwarded := func(refs []aap.ServerToolRef) map[string]any {
		return map[string]any{translate.ForwardedPropsKey: map[string]any{"agent": map[string]any{"tools": refs}}}
	}
	userMsg := func(s string) map[string]any { return map[string]any{"id": "u1", "role": "user", "content": s} }
	callMsg := func(id, name, args string) map[string]any {
		return map[string]any{"id": "a1", "role": "assistant", "toolCalls": []any{
			map[string]any{"id": id, "type": "function", "function": map[string]any{"name": name, "arguments": args}}}}
	}

	tests := []struct {
		name       string
		message    string
		agentTools []aap.ServerToolRef
		weather    bool
		result     string // the weather tool's result
		permission *aap.ToolPermissionMessage
	}{
		{name: "echo", message: "hello there, agent"},
		{name: "think", message: "think about it"},
		{name: "weather", message: "weather in Tokyo", weather: true, result: "18°C, partly cloudy"},
		{name: "weather without the tool", message: "weather in Tokyo"},
		{name: "search not enabled", message: "search cats"},
		{name: "trusted search", message: "search cats", agentTools: trusted},
		{name: "untrusted search granted", message: "search cats", agentTools: untrusted, permission: &aap.ToolPermissionMessage{Granted: true}},
		{name: "untrusted search denied", message: "search cats", agentTools: untrusted, permission: &aap.ToolPermissionMessage{Granted: false, Reason: "not now"}},
		{name: "untrusted search denied without a reason", message: "search cats", agentTools: untrusted, permission: &aap.ToolPermissionMessage{Granted: false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// AAP.
			var tools []aap.ToolSpec
			if tt.weather {
				tools = []aap.ToolSpec{weatherSpec}
			}
			id := createSession(t, c, &aap.PostSessionsRequest{Agent: aap.AgentConfig{Tools: tt.agentTools}, Tools: tools})
			evs := streamTurn(t, c, id, &aap.PostSessionTurnRequest{Stream: aap.StreamDelta, Messages: user(tt.message)})
			aapSays, callID := aapTranscript(evs)
			switch {
			case tt.result != "":
				evs = streamTurn(t, c, id, &aap.PostSessionTurnRequest{Stream: aap.StreamDelta, Messages: withCallID(toolResult(tt.result), callID)})
			case tt.permission != nil:
				p := *tt.permission
				p.ToolCallID = callID
				evs = streamTurn(t, c, id, &aap.PostSessionTurnRequest{Stream: aap.StreamDelta, Messages: []aap.Message{&p}})
			default:
				evs = nil
			}
			more, _ := aapTranscript(evs)
			aapSays = append(aapSays, more...)

			// AG-UI.
			input := map[string]any{"messages": []any{userMsg(tt.message)}, "tools": []any{}, "forwardedProps": forwarded(tt.agentTools)}
			if tt.weather {
				input["tools"] = aguiWeather
			}
			aguiSays, aguiCall, interrupt := aguiRun(t, aguiSrv, input)
			args := ""
			if n := len(aguiSays); n > 0 && strings.HasPrefix(aguiSays[n-1], "tool_call: ") {
				_, args, _ = strings.Cut(strings.TrimPrefix(aguiSays[n-1], "tool_call: "), " ")
			}
			switch {
			case tt.result != "":
				input["messages"] = []any{userMsg(tt.message), callMsg(aguiCall, demo.WeatherTool, args),
					map[string]any{"id": "t1", "role": "tool", "toolCallId": aguiCall, "content": tt.result}}
				more, _, _ := aguiRun(t, aguiSrv, input)
				aguiSays = append(aguiSays, more...)
			case tt.permission != nil:
				require.NotEmpty(t, interrupt)
				payload := map[string]any{"approved": tt.permission.Granted}
				if tt.permission.Reason != "" {
					payload["reason"] = tt.permission.Reason
				}
				input["messages"] = []any{userMsg(tt.message), callMsg(aguiCall, demo.SearchTool, args)}
				input["resume"] = []any{map[string]any{"interruptId": interrupt, "status": "resolved", "payload": payload}}
				more, _, _ := aguiRun(t, aguiSrv, input)
				aguiSays = append(aguiSays, more...)
			}

			require.NotEmpty(t, aapSays)
			assert.Equal(t, aguiSays, aapSays)
		})
	}
}

// discardWriter is a ResponseWriter that throws the body away, to measure
// the agent alone.
type discardWriter struct {
	h http.Header
	n int64
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) WriteHeader(int)             {}
func (w *discardWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }
func (w *discardWriter) Flush()                      {}

// BenchmarkAAPLong measures a "long 10000" turn in delta mode: the
// upstream of the bridge's streaming benchmarks.
func BenchmarkAAPLong(b *testing.B) {
	agent := demo.NewAAPAgent(demo.AAPAgentOptions{})
	const n = 10_000
	body := []byte(`{"stream":"delta","messages":[{"role":"user","content":"long 10000"}]}`)
	b.ReportAllocs()
	var bytesOut, turns int64
	for b.Loop() {
		turns++
		w := &discardWriter{h: http.Header{}}
		rec := httptest.NewRecorder()
		agent.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/sessions", strings.NewReader(`{"agent":{"name":"demo"}}`)))
		var created aap.PostSessionsResponse
		if err := json.Unmarshal(rec.Body.Bytes(), &created); err != nil {
			b.Fatal(err)
		}
		agent.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/sessions/"+created.SessionID+"/turns", bytes.NewReader(body)))
		agent.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodDelete, "/sessions/"+created.SessionID, nil))
		bytesOut += w.n
	}
	b.ReportMetric(float64(n*turns)/b.Elapsed().Seconds(), "events/s")
	b.SetBytes(bytesOut / turns)
}

// FuzzAAPTurn sends arbitrary turn bodies to a session waiting for a
// weather result. Whatever the body, the answer is a JSON error with a code
// (4xx), a complete event stream, or a valid JSON response, and the session
// is free for the next turn.
func FuzzAAPTurn(f *testing.F) {
	for _, seed := range []string{
		`{"messages":[{"role":"user","content":"hello"}]}`,
		`{"stream":"delta","messages":[{"role":"user","content":"think"}]}`,
		`{"stream":"message","messages":[{"role":"user","content":"search cats"}]}`,
		`{"stream":"delta","messages":[{"role":"tool","toolCallId":"call_1","content":"sunny"}]}`,
		`{"stream":"message","messages":[{"role":"tool_permission","toolCallId":"call_1","granted":true}]}`,
		`{"stream":"none","agent":{"tools":[]},"tools":[],"messages":[{"role":"user","content":"weather in Oslo"}]}`,
		`{"stream":"delta","messages":[{"role":"user","content":[{"type":"text","text":"fail"}]}]}`,
		`{"messages":[{"role":"user","content":"long 30"}],"stream":"delta"}`,
		`{"messages":[]}`, `{`, `null`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		agent := demo.NewAAPAgent(demo.AAPAgentOptions{})
		rec := httptest.NewRecorder()
		agent.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/sessions", strings.NewReader(
			`{"agent":{"name":"demo","tools":[{"name":"web_search"}]},"tools":[{"name":"get_weather","description":"","parameters":{}}],`+
				`"messages":[{"role":"user","content":"weather in Lima"},{"role":"assistant","content":[{"type":"tool_use","toolCallId":"call_1","name":"get_weather","input":{"location":"Lima"}}]}]}`)))
		require.Equal(t, http.StatusCreated, rec.Code)
		var created aap.PostSessionsResponse
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &created))
		turns := "/sessions/" + created.SessionID + "/turns"

		rec = httptest.NewRecorder()
		agent.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, turns, bytes.NewReader(body)))
		switch ct := rec.Header().Get("Content-Type"); {
		case rec.Code >= 400 && rec.Code < 500:
			var er aap.ErrorResponse
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &er))
			require.NotEmpty(t, er.Error.Code)
		case rec.Code == http.StatusOK && ct == "text/event-stream":
			var last aap.Event
			n := 0
			for ev, err := range aap.ReadEvents(rec.Body, 0) {
				require.NoError(t, err)
				if n == 0 {
					require.IsType(t, &aap.TurnStart{}, ev)
				}
				require.Nil(t, last, "an event after turn_stop")
				if _, ok := ev.(*aap.TurnStop); ok {
					last = ev
				}
				n++
			}
			require.NotNil(t, last, "no turn_stop")
		case rec.Code == http.StatusOK && ct == "application/json":
			var resp aap.PostSessionTurnResponse
			require.NoError(t, resp.UnmarshalJSON(rec.Body.Bytes()))
		default:
			t.Fatalf("status %d, content type %q", rec.Code, ct)
		}

		rec = httptest.NewRecorder()
		agent.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, turns, strings.NewReader(`{"messages":[{"role":"user","content":"hi"}]}`)))
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	})
}

func ExampleNewAAPAgent() {
	srv := httptest.NewServer(demo.NewAAPAgent(demo.AAPAgentOptions{}))
	defer srv.Close()
	c := aap.NewClient(srv.URL, aap.ClientOptions{})
	ctx := context.Background()
	sess, err := c.CreateSession(ctx, &aap.PostSessionsRequest{Agent: aap.AgentConfig{Name: "demo"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	for ev, err := range c.StreamTurn(ctx, sess.SessionID, &aap.PostSessionTurnRequest{
		Stream:   aap.StreamDelta,
		Messages: []aap.Message{aap.UserText("hello")},
	}) {
		if err != nil {
			fmt.Println(err)
			return
		}
		switch ev := ev.(type) {
		case *aap.TextDelta:
			fmt.Printf("%q\n", ev.Delta)
		case *aap.TurnStop:
			fmt.Println(ev.StopReason)
		}
	}
	// Output:
	// "You "
	// "said: "
	// "hello"
	// end_turn
}

// A paced "long" answer whose client leaves midway (a stop) is stored as
// the client received it: the history's answer is the deltas it read,
// without the words the agent would have written after it left. (The
// pace leaves the client ample time to leave before the next word.)
func TestAAPStoppedLongAnswerStoredAsDelivered(t *testing.T) {
	srv := newAAPServer(t, demo.AAPAgentOptions{LongPace: 200 * time.Millisecond})
	c := newClient(srv, "")
	ctx := context.Background()
	id := createSession(t, c, &aap.PostSessionsRequest{})

	var received strings.Builder
	turnCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	deltas := 0
	for ev, err := range c.StreamTurn(turnCtx, id, &aap.PostSessionTurnRequest{Stream: aap.StreamDelta, Messages: user("long 1000")}) {
		require.NoError(t, err)
		if d, ok := ev.(*aap.TextDelta); ok {
			received.WriteString(d.Delta)
			if deltas++; deltas == 5 {
				break // the client leaves, as a stop does
			}
		}
	}
	cancel()
	var hist []aap.Message
	require.Eventually(t, func() bool {
		var err error
		hist, err = c.History(ctx, id, aap.HistoryFull)
		return err == nil && len(hist) == 2
	}, 10*time.Second, 10*time.Millisecond, "the turn ends once its client has gone")
	assert.Equal(t, received.String(), hist[1].(*aap.AssistantMessage).Content.Text)
}
