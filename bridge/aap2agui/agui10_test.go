package aap2agui_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/internal/testkit/metricstest"
)

// The shapes of @ag-ui/core 1.0 from a scripted agent, through aap2agui
// over HTTP (docs/MAPPING.md, "AG-UI 1.0").

// TestAGUI10ToolResultParts: a TOOL_CALL_RESULT whose content is an array
// of content parts does not fail the turn. Text and image parts become
// AAP blocks; a part AAP cannot hold (audio here) is a text block holding
// the part's JSON; the rest of the run goes on.
func TestAGUI10ToolResultParts(t *testing.T) {
	for _, mode := range []aap.StreamMode{aap.StreamDelta, aap.StreamMessage} {
		t.Run(string(mode), func(t *testing.T) {
			up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
				sseEvents(w, concat([]string{runStarted(in)},
					toolCallEvents("call_1", "render", "m0", `{}`),
					[]string{`{"type":"TOOL_CALL_RESULT","messageId":"tr-1","toolCallId":"call_1","role":"tool","content":[` +
						`{"type":"text","text":"a chart"},` +
						`{"type":"image","source":{"type":"url","value":"https://example.com/c.png"}},` +
						`{"type":"image","source":{"type":"data","value":"iVBORw0K","mimeType":"image/png"}},` +
						`{"type":"audio","source":{"type":"file","value":"file-123","provider":"openai"}}]}`},
					textMessage("m1", "Done."), []string{runFinished(in)})...)
			})
			e := newEnv(t, up.URL)
			id := e.createSession(t, aap.PostSessionsRequest{})
			evs, err := e.stream(t, id, userTurn(mode, "draw"))
			require.NoError(t, err)
			lines := eventLines(t, evs)
			assert.Contains(t, lines, `tool_result {"toolCallId":"call_1","content":[{"type":"text","text":"a chart"},{"type":"image","url":"https://example.com/c.png"},{"type":"image","url":"data:image/png;base64,iVBORw0K"},{"type":"text","text":"{\"type\":\"audio\",\"source\":{\"type\":\"file\",\"value\":\"file-123\",\"provider\":\"openai\"}}"}]}`)
			assert.Equal(t, `turn_stop {"stopReason":"end_turn"}`, lines[len(lines)-1])
			hist := e.history(t, id, aap.HistoryFull)
			require.Len(t, hist, 4)
			assert.JSONEq(t, `{"role":"tool","toolCallId":"call_1","content":[{"type":"text","text":"a chart"},{"type":"image","url":"https://example.com/c.png"},{"type":"image","url":"data:image/png;base64,iVBORw0K"},{"type":"text","text":"{\"type\":\"audio\",\"source\":{\"type\":\"file\",\"value\":\"file-123\",\"provider\":\"openai\"}}"}]}`, hist[2])
			assert.Equal(t, assistantText("Done."), hist[3])
		})
	}
}

// TestAGUI10InterleavedChunks: events beside the conversation between the
// TOOL_CALL_CHUNKs of one call leave the call whole.
func TestAGUI10InterleavedChunks(t *testing.T) {
	between := []string{
		`{"type":"ACTIVITY_SNAPSHOT","messageId":"act-1","activityType":"PLAN","content":{"step":1}}`,
		`{"type":"REASONING_ENCRYPTED_VALUE","subtype":"tool-call","entityId":"call_1","encryptedValue":"gAAAA=="}`,
		`{"type":"ACTIVITY_DELTA","messageId":"act-1","activityType":"PLAN","patch":[{"op":"replace","path":"/step","value":2}]}`,
		`{"type":"STATE_SNAPSHOT","snapshot":{"city":"Lima"}}`,
		`{"type":"STATE_DELTA","delta":[{"op":"add","path":"/x","value":1}]}`,
		`{"type":"CUSTOM","name":"progress","value":0.5}`,
		`{"type":"RAW","event":{"id":"evt"},"source":"openai"}`,
	}
	up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
		evs := []string{runStarted(in),
			`{"type":"TOOL_CALL_CHUNK","toolCallId":"call_1","toolCallName":"get_weather","parentMessageId":"m0","delta":"{\"loc"}`}
		for i, b := range between {
			evs = append(evs, b)
			delta := `"`
			if i == 0 {
				delta = `ation\":\"`
			} else if i == len(between)-1 {
				delta = `Lima\"}`
			} else {
				delta = ``
			}
			evs = append(evs, `{"type":"TOOL_CALL_CHUNK","toolCallId":"call_1","delta":"`+delta+`"}`)
		}
		sseEvents(w, append(evs, runFinished(in))...)
	})
	e := newEnv(t, up.URL)
	id := e.createSession(t, aap.PostSessionsRequest{Tools: []aap.ToolSpec{weatherSpec}})
	evs, err := e.stream(t, id, userTurn(aap.StreamDelta, "weather?"))
	require.NoError(t, err)
	assert.Equal(t, []string{
		`turn_start {}`,
		`tool_call {"toolCallId":"call_1","name":"get_weather","input":{"location":"Lima"}}`,
		`turn_stop {"stopReason":"tool_use"}`,
	}, eventLines(t, evs))
}

// TestAGUI10Cancelled: RUN_FINISHED with outcome cancelled is an error
// stop, never a silent end_turn; what was said is kept.
func TestAGUI10Cancelled(t *testing.T) {
	up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
		sseEvents(w, concat([]string{runStarted(in)}, textMessage("m1", "Half an"),
			[]string{`{"type":"RUN_FINISHED","threadId":"` + in.ThreadID + `","runId":"` + in.RunID + `","outcome":{"type":"cancelled"}}`})...)
	})
	e := newEnv(t, up.URL)
	id := e.createSession(t, aap.PostSessionsRequest{})
	evs, err := e.stream(t, id, userTurn(aap.StreamDelta, "go"))
	require.NoError(t, err)
	assert.Equal(t, []string{`turn_start {}`, `text_delta {"delta":"Half an"}`, `turn_stop {"stopReason":"error"}`}, eventLines(t, evs))
	assert.Equal(t, []string{`{"role":"user","content":"go"}`, assistantText("Half an")}, e.history(t, id, aap.HistoryFull))
}

// TestAGUI10Roles: a text message of role user or developer is not the
// assistant's text: not streamed, not stored; the assistant's is.
func TestAGUI10Roles(t *testing.T) {
	up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
		sseEvents(w, runStarted(in),
			`{"type":"TEXT_MESSAGE_START","messageId":"u1","role":"user"}`,
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"u1","delta":"echo of the user"}`,
			`{"type":"TEXT_MESSAGE_END","messageId":"u1"}`,
			`{"type":"TEXT_MESSAGE_CHUNK","messageId":"d1","role":"developer","delta":"be brief"}`,
			`{"type":"TEXT_MESSAGE_START","messageId":"a1"}`,
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"a1","delta":"Hello."}`,
			`{"type":"TEXT_MESSAGE_END","messageId":"a1"}`,
			runFinished(in))
	})
	e := newEnv(t, up.URL)
	id := e.createSession(t, aap.PostSessionsRequest{})
	for _, mode := range []aap.StreamMode{aap.StreamDelta, aap.StreamMessage} {
		evs, err := e.stream(t, id, userTurn(mode, "hi"))
		require.NoError(t, err)
		want := `text_delta {"delta":"Hello."}`
		if mode == aap.StreamMessage {
			want = `text {"text":"Hello."}`
		}
		assert.Equal(t, []string{`turn_start {}`, want, `turn_stop {"stopReason":"end_turn"}`}, eventLines(t, evs))
	}
	assert.Equal(t, []string{`{"role":"user","content":"hi"}`, assistantText("Hello."), `{"role":"user","content":"hi"}`, assistantText("Hello.")},
		e.history(t, id, aap.HistoryFull))
}

// TestAGUI10TwoTexts: two text messages in one run are two text blocks in
// history; delta mode streams a blank line between them, which is how
// text blocks read joined.
func TestAGUI10TwoTexts(t *testing.T) {
	up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
		sseEvents(w, concat([]string{runStarted(in)}, textMessage("m1", "part one"), textMessage("m2", "part two"),
			[]string{runFinished(in)})...)
	})
	e := newEnv(t, up.URL)
	id := e.createSession(t, aap.PostSessionsRequest{})
	evs, err := e.stream(t, id, userTurn(aap.StreamDelta, "go"))
	require.NoError(t, err)
	assert.Equal(t, []string{`turn_start {}`, `text_delta {"delta":"part one"}`, `text_delta {"delta":"\n\n"}`,
		`text_delta {"delta":"part two"}`, `turn_stop {"stopReason":"end_turn"}`}, eventLines(t, evs))
	evs, err = e.stream(t, id, userTurn(aap.StreamMessage, "again"))
	require.NoError(t, err)
	assert.Equal(t, []string{`turn_start {}`, `text {"text":"part one"}`, `text {"text":"part two"}`,
		`turn_stop {"stopReason":"end_turn"}`}, eventLines(t, evs))
	hist := e.history(t, id, aap.HistoryFull)
	assert.Equal(t, `{"role":"assistant","content":[{"type":"text","text":"part one"},{"type":"text","text":"part two"}]}`, hist[1])
	assert.Equal(t, hist[1], hist[3])
}

// TestAGUI10Subagents: a subagent's text is not the parent's answer: each
// invocation is a call of agui_subagent whose result is what the
// subagent said, or its error.
func TestAGUI10Subagents(t *testing.T) {
	up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
		sseEvents(w, runStarted(in),
			`{"type":"SUBAGENT_STARTED","subagentRunId":"sa-1","name":"researcher","description":"finds facts"}`,
			`{"type":"TEXT_MESSAGE_START","messageId":"s1","subagentRunId":"sa-1"}`,
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"s1","delta":"Lima has 10M people.","subagentRunId":"sa-1"}`,
			`{"type":"TEXT_MESSAGE_END","messageId":"s1","subagentRunId":"sa-1"}`,
			`{"type":"SUBAGENT_FINISHED","subagentRunId":"sa-1"}`,
			`{"type":"SUBAGENT_STARTED","subagentRunId":"sa-2","name":"checker","parentToolCallId":"call_9"}`,
			`{"type":"TEXT_MESSAGE_CHUNK","messageId":"s2","delta":"checking","subagentRunId":"sa-2"}`,
			`{"type":"SUBAGENT_ERROR","subagentRunId":"sa-2","message":"quota exceeded","code":"QUOTA"}`,
			`{"type":"TEXT_MESSAGE_START","messageId":"a1"}`,
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"a1","delta":"About 10 million."}`,
			`{"type":"TEXT_MESSAGE_END","messageId":"a1"}`,
			runFinished(in))
	})
	e := newEnv(t, up.URL)
	id := e.createSession(t, aap.PostSessionsRequest{})
	evs, err := e.stream(t, id, userTurn(aap.StreamDelta, "how many live in Lima?"))
	require.NoError(t, err)
	assert.Equal(t, []string{
		`turn_start {}`,
		`tool_call {"toolCallId":"sa-1","name":"agui_subagent","input":{"description":"finds facts","name":"researcher"}}`,
		`tool_result {"toolCallId":"sa-1","content":"Lima has 10M people."}`,
		`tool_call {"toolCallId":"sa-2","name":"agui_subagent","input":{"name":"checker","parentToolCallId":"call_9"}}`,
		`tool_result {"toolCallId":"sa-2","content":"Error: quota exceeded (QUOTA)\n\nchecking"}`,
		`text_delta {"delta":"About 10 million."}`,
		`turn_stop {"stopReason":"end_turn"}`,
	}, eventLines(t, evs))
	hist := e.history(t, id, aap.HistoryFull)
	assert.Equal(t, assistantText("About 10 million."), hist[len(hist)-1])
}

// TestAGUI10UsageAndCancelCounted: RUN_FINISHED usage is counted by agent
// and kind in aap2agui_tokens_total, and a cancelled run is counted as
// such (agent_cancelled), not as a turn that went well.
func TestAGUI10UsageAndCancelCounted(t *testing.T) {
	up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
		outcome := ""
		if n == 1 {
			outcome = `,"outcome":{"type":"cancelled"}`
		}
		sseEvents(w, concat([]string{runStarted(in)}, textMessage("m1", "Hi"),
			[]string{`{"type":"RUN_FINISHED","threadId":"` + in.ThreadID + `","runId":"` + in.RunID + `"` + outcome +
				`,"usage":[{"provider":"openai","model":"m","inputTokens":120,"outputTokens":30,"reasoningTokens":12}]}`})...)
	})
	e := newEnv(t, up.URL)
	id := e.createSession(t, aap.PostSessionsRequest{})
	for range 2 {
		_, err := e.stream(t, id, userTurn(aap.StreamDelta, "go"))
		require.NoError(t, err)
	}
	m := metricstest.Scrape(t, e.Root+"/metrics", "")
	assert.Equal(t, 240.0, m.Value("aap2agui_tokens_total", "agent", agentName, "kind", "input"))
	assert.Equal(t, 60.0, m.Value("aap2agui_tokens_total", "agent", agentName, "kind", "output"))
	assert.Equal(t, 24.0, m.Value("aap2agui_tokens_total", "agent", agentName, "kind", "reasoning"))
	assert.Equal(t, 1.0, m.Value("aap2agui_upstream_requests_total", "call", "turn", "outcome", "ok", "code", "none"))
	assert.Equal(t, 1.0, m.Value("aap2agui_upstream_requests_total", "call", "turn", "outcome", "error", "code", "agent_cancelled"))
}

// TestAGUI10SubagentsNotSentBack: a subagent's run, which the AAP
// application sees as a call of the reserved agui_subagent tool, is not
// sent back to the agent as a call it made.
func TestAGUI10SubagentsNotSentBack(t *testing.T) {
	up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
		sseEvents(w, runStarted(in),
			`{"type":"SUBAGENT_STARTED","subagentRunId":"sa-1","name":"researcher"}`,
			`{"type":"TEXT_MESSAGE_CHUNK","messageId":"s1","delta":"facts","subagentRunId":"sa-1"}`,
			`{"type":"SUBAGENT_FINISHED","subagentRunId":"sa-1"}`,
			`{"type":"TEXT_MESSAGE_CHUNK","messageId":"a1","delta":"Done."}`,
			runFinished(in))
	})
	e := newEnv(t, up.URL)
	id := e.createSession(t, aap.PostSessionsRequest{})
	for range 2 {
		_, err := e.stream(t, id, userTurn(aap.StreamDelta, "go"))
		require.NoError(t, err)
	}
	assert.Contains(t, strings.Join(e.history(t, id, aap.HistoryFull), "\n"), "agui_subagent", "the application sees it")
	for _, m := range up.input(t, 1).Messages {
		assert.NotEqual(t, "sa-1", m.ToolCallID, "a subagent's result sent back: %+v", m)
		for _, c := range m.ToolCalls {
			assert.NotEqual(t, "agui_subagent", c.Function.Name, "a subagent's call sent back")
		}
	}
}
