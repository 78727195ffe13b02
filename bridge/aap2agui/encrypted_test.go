package aap2agui_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
)

// Encrypted reasoning survives the round trip (docs/MAPPING.md, "AG-UI
// 1.0"): the values an agent gives (REASONING_ENCRYPTED_VALUE, encryptedValue
// on the messages and tool calls of a MESSAGES_SNAPSHOT) are stored with the
// history entry they belong to, never shown to the AAP client, and go back
// where they were in every later RunAgentInput.

// rawMessages returns the messages of a run's input as JSON objects.
func rawMessages(t *testing.T, in *runInput) []map[string]any {
	t.Helper()
	var out []map[string]any
	require.NoError(t, json.Unmarshal(in.Raw["messages"], &out))
	return out
}

// noSecrets checks that nothing the AAP client can read holds a value.
func noSecrets(t *testing.T, e *env, id string, evs []aap.Event, secrets ...string) {
	t.Helper()
	seen := strings.Join(eventLines(t, evs), "\n") + strings.Join(e.history(t, id, aap.HistoryFull), "\n") +
		strings.Join(e.history(t, id, aap.HistoryCompacted), "\n")
	for _, s := range secrets {
		assert.NotContains(t, seen, s)
	}
}

// Anthropic-style: a thinking block's signature comes as the encrypted
// value of its reasoning message, a redacted_thinking block as a reasoning
// message without text with its data as the value. The call's turn and a
// later one both send them back.
func TestEncryptedReasoningAnthropic(t *testing.T) {
	up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
		switch n {
		case 0:
			sseEvents(w, concat([]string{runStarted(in),
				`{"type":"REASONING_START","messageId":"rs-0"}`,
				`{"type":"REASONING_MESSAGE_START","messageId":"th-1","role":"reasoning"}`,
				`{"type":"REASONING_MESSAGE_CONTENT","messageId":"th-1","delta":"The user wants the weather."}`,
				`{"type":"REASONING_MESSAGE_END","messageId":"th-1"}`,
				`{"type":"REASONING_ENCRYPTED_VALUE","subtype":"message","entityId":"th-1","encryptedValue":"EqQBCkYIBxgCKkDsig1=="}`,
				`{"type":"REASONING_MESSAGE_START","messageId":"th-2","role":"reasoning"}`,
				`{"type":"REASONING_MESSAGE_END","messageId":"th-2"}`,
				`{"type":"REASONING_ENCRYPTED_VALUE","subtype":"message","entityId":"th-2","encryptedValue":"EmwKAhgBEgyredacted=="}`,
				`{"type":"REASONING_END","messageId":"rs-0"}`},
				textMessage("m1", "Let me check."),
				toolCallEvents("toolu_1", weatherSpec.Name, "m1", `{"location":"Lima"}`),
				[]string{runFinished(in)})...)
		default:
			sseEvents(w, textRun(in, "m"+string(rune('2'+n-1)), "Sunny.")...)
		}
	})
	e := newEnv(t, up.URL)
	id := e.createSession(t, aap.PostSessionsRequest{Tools: []aap.ToolSpec{weatherSpec}})
	evs, err := e.stream(t, id, userTurn(aap.StreamDelta, "weather in Lima?"))
	require.NoError(t, err)
	noSecrets(t, e, id, evs, "sig1", "redacted")

	evs, err = e.stream(t, id, aap.PostSessionTurnRequest{Stream: aap.StreamMessage, Messages: []aap.Message{
		&aap.ToolMessage{ToolCallID: "toolu_1", Content: aap.TextContent("22°C")}}})
	require.NoError(t, err)
	noSecrets(t, e, id, evs, "sig1", "redacted")
	_, err = e.stream(t, id, userTurn(aap.StreamDelta, "thanks"))
	require.NoError(t, err)

	for _, n := range []int{1, 2} {
		msgs := rawMessages(t, up.input(t, n))
		require.GreaterOrEqual(t, len(msgs), 5, "run %d", n)
		// user, reasoning th-1, reasoning th-2 (no text), assistant m1, tool, ...
		assert.Equal(t, "user", msgs[0]["role"])
		assert.Equal(t, map[string]any{"id": "th-1", "role": "reasoning", "content": "The user wants the weather.", "encryptedValue": "EqQBCkYIBxgCKkDsig1=="}, msgs[1], "run %d", n)
		assert.Equal(t, map[string]any{"id": "th-2", "role": "reasoning", "encryptedValue": "EmwKAhgBEgyredacted=="}, withoutEmptyContent(msgs[2]), "run %d", n)
		assert.Equal(t, "m1", msgs[3]["id"])
		assert.Equal(t, "assistant", msgs[3]["role"])
		assert.Nil(t, msgs[3]["encryptedValue"])
		assert.Equal(t, "tool", msgs[4]["role"])
	}
}

func withoutEmptyContent(m map[string]any) map[string]any {
	if m["content"] == "" {
		delete(m, "content")
	}
	return m
}

// OpenAI-Responses-style: a reasoning item's encrypted_content comes as
// the value of its reasoning message (a summary streamed as chunks), and
// the function call the model made after it carries one of its own
// (subtype tool-call); the text message too.
func TestEncryptedReasoningOpenAIResponses(t *testing.T) {
	up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
		if n > 0 {
			sseEvents(w, textRun(in, "msg_b", "It is 22°C.")...)
			return
		}
		sseEvents(w, concat([]string{runStarted(in),
			`{"type":"REASONING_MESSAGE_CHUNK","messageId":"rs_68a1","delta":"**Looking up weather**"}`,
			`{"type":"REASONING_MESSAGE_CHUNK","delta":" for Lima"}`,
			`{"type":"REASONING_ENCRYPTED_VALUE","subtype":"message","entityId":"rs_68a1","encryptedValue":"gAAAAABoENCRYPTEDone"}`},
			textMessage("msg_a", "Checking."),
			[]string{`{"type":"REASONING_ENCRYPTED_VALUE","subtype":"message","entityId":"msg_a","encryptedValue":"gAAAAABoENCRYPTEDmsg"}`},
			toolCallEvents("fc_1", weatherSpec.Name, "msg_a", `{"location":"Lima"}`),
			[]string{`{"type":"REASONING_ENCRYPTED_VALUE","subtype":"tool-call","entityId":"fc_1","encryptedValue":"gAAAAABoENCRYPTEDcall"}`,
				runFinished(in)})...)
	})
	e := newEnv(t, up.URL)
	id := e.createSession(t, aap.PostSessionsRequest{Tools: []aap.ToolSpec{weatherSpec}})
	evs, err := e.stream(t, id, userTurn(aap.StreamMessage, "weather in Lima?"))
	require.NoError(t, err)
	noSecrets(t, e, id, evs, "ENCRYPTED")
	evs, err = e.stream(t, id, aap.PostSessionTurnRequest{Stream: aap.StreamDelta, Messages: []aap.Message{
		&aap.ToolMessage{ToolCallID: "fc_1", Content: aap.TextContent("22°C")}}})
	require.NoError(t, err)
	noSecrets(t, e, id, evs, "ENCRYPTED")

	msgs := rawMessages(t, up.input(t, 1))
	require.Len(t, msgs, 4) // user, reasoning, assistant, tool
	assert.Equal(t, map[string]any{"id": "rs_68a1", "role": "reasoning", "content": "**Looking up weather** for Lima", "encryptedValue": "gAAAAABoENCRYPTEDone"}, msgs[1])
	assert.Equal(t, "msg_a", msgs[2]["id"])
	assert.Equal(t, "gAAAAABoENCRYPTEDmsg", msgs[2]["encryptedValue"])
	calls := msgs[2]["toolCalls"].([]any)
	require.Len(t, calls, 1)
	assert.Equal(t, "gAAAAABoENCRYPTEDcall", calls[0].(map[string]any)["encryptedValue"])
	assert.Equal(t, "fc_1", calls[0].(map[string]any)["id"])
}

// A MESSAGES_SNAPSHOT's values (on reasoning and assistant messages and on
// tool calls) are kept as the snapshot becomes the history.
func TestEncryptedReasoningSnapshot(t *testing.T) {
	up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
		if n > 0 {
			sseEvents(w, textRun(in, "a-2", "ok")...)
			return
		}
		user := in.Messages[0]
		snap := `{"type":"MESSAGES_SNAPSHOT","messages":[` +
			`{"id":"` + user.ID + `","role":"user","content":"hi"},` +
			`{"id":"r-1","role":"reasoning","content":"thinking","encryptedValue":"snapsig-1"},` +
			`{"id":"r-2","role":"reasoning","content":"","encryptedValue":"snapsig-2"},` +
			`{"id":"a-1","role":"assistant","content":"Hello","encryptedValue":"snapmsg","toolCalls":[{"id":"c-1","type":"function","function":{"name":"` + weatherSpec.Name + `","arguments":"{}"},"encryptedValue":"snapcall"}]},` +
			`{"id":"t-1","role":"tool","toolCallId":"c-1","content":"22°C"},` +
			`{"id":"a-3","role":"assistant","content":"Done."}]}`
		sseEvents(w, runStarted(in), snap, runFinished(in))
	})
	e := newEnv(t, up.URL)
	id := e.createSession(t, aap.PostSessionsRequest{Tools: []aap.ToolSpec{weatherSpec}})
	evs, err := e.stream(t, id, userTurn(aap.StreamDelta, "hi"))
	require.NoError(t, err)
	noSecrets(t, e, id, evs, "snapsig", "snapmsg", "snapcall")
	_, err = e.stream(t, id, userTurn(aap.StreamDelta, "again"))
	require.NoError(t, err)

	msgs := rawMessages(t, up.input(t, 1))
	require.GreaterOrEqual(t, len(msgs), 6)
	assert.Equal(t, map[string]any{"id": "r-1", "role": "reasoning", "content": "thinking", "encryptedValue": "snapsig-1"}, msgs[1])
	assert.Equal(t, map[string]any{"id": "r-2", "role": "reasoning", "encryptedValue": "snapsig-2"}, withoutEmptyContent(msgs[2]))
	assert.Equal(t, "a-1", msgs[3]["id"])
	assert.Equal(t, "snapmsg", msgs[3]["encryptedValue"])
	assert.Equal(t, "snapcall", msgs[3]["toolCalls"].([]any)[0].(map[string]any)["encryptedValue"])
	assert.Nil(t, msgs[5]["encryptedValue"])
}
