package aap2agui_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/internal/testkit/metricstest"
)

// TestMetadataGoesBackToTheAgent: the metadata an agent's events give a
// message (merged key by key, the last write winning), a tool call and a
// tool result, and the metadata of a MESSAGES_SNAPSHOT's messages, are
// kept with the session's history and sent back with those messages in
// the agent's next run, as the agent wrote them. A plain AAP client is
// sent none of it: each event that holds some is counted as not carried.
func TestMetadataGoesBackToTheAgent(t *testing.T) {
	streamed := []string{
		`{"type":"TEXT_MESSAGE_START","messageId":"m0","role":"assistant","metadata":{"provider":"acme","model":"a"}}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m0","delta":"Looking."}`,
		`{"type":"TEXT_MESSAGE_END","messageId":"m0","metadata":{"model":"b","usage":{"tokens":3}}}`,
		`{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"search","parentMessageId":"m0","metadata":{"latencyMs":84}}`,
		`{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{}"}`,
		`{"type":"TOOL_CALL_END","toolCallId":"c1"}`,
		`{"type":"TOOL_CALL_RESULT","messageId":"r1","toolCallId":"c1","content":"found","metadata":{"cached":true}}`,
	}
	up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
		switch n {
		case 0:
			sseEvents(w, concat([]string{runStarted(in)}, streamed, textMessage("m1", "done"), []string{runFinished(in)})...)
		case 2: // an answer given as a snapshot: the conversation, and a message with metadata
			msgs := string(in.Raw["messages"])
			snap := `{"type":"MESSAGES_SNAPSHOT","messages":` + msgs[:len(msgs)-1] +
				`,{"id":"s1","role":"assistant","content":"snapped","metadata":{"finish":"stop"}}]}`
			sseEvents(w, runStarted(in), snap, runFinished(in))
		default:
			sseEvents(w, textRun(in, "m2", "ok")...)
		}
	})
	e := newEnv(t, up.URL)
	id := e.createSession(t, aap.PostSessionsRequest{})
	_, err := e.stream(t, id, userTurn(aap.StreamDelta, "find it"))
	require.NoError(t, err)
	m := metricstest.Scrape(t, e.Root+"/metrics", "")
	assert.Equal(t, 4.0, m.Value("aap2agui_events_not_carried_total", "type", "metadata"), "a plain AAP client is sent none: each event with metadata counted")
	for _, text := range []string{"again", "snap", "last"} {
		_, err = e.stream(t, id, userTurn(aap.StreamDelta, text))
		require.NoError(t, err)
	}

	var msgs []struct {
		ID        string          `json:"id"`
		Role      string          `json:"role"`
		Metadata  json.RawMessage `json:"metadata"`
		ToolCalls []struct {
			ID       string          `json:"id"`
			Metadata json.RawMessage `json:"metadata"`
		} `json:"toolCalls"`
	}
	require.NoError(t, json.Unmarshal(up.input(t, 1).Raw["messages"], &msgs))
	byID := map[string]int{}
	for i, m := range msgs {
		byID[m.ID] = i
	}
	require.Contains(t, byID, "m0")
	m0 := msgs[byID["m0"]]
	assert.JSONEq(t, `{"provider":"acme","model":"b","usage":{"tokens":3}}`, string(m0.Metadata), "merged, the last write winning")
	require.Len(t, m0.ToolCalls, 1)
	assert.JSONEq(t, `{"latencyMs":84}`, string(m0.ToolCalls[0].Metadata), "the call's own")
	require.Contains(t, byID, "r1")
	assert.JSONEq(t, `{"cached":true}`, string(msgs[byID["r1"]].Metadata), "the result's, on its tool message")
	assert.Nil(t, msgs[byID["m1"]].Metadata, "a message without metadata gets none")

	// After the snapshot: its message's metadata, and the earlier ones kept.
	msgs = nil
	require.NoError(t, json.Unmarshal(up.input(t, 3).Raw["messages"], &msgs))
	byID = map[string]int{}
	for i, m := range msgs {
		byID[m.ID] = i
	}
	require.Contains(t, byID, "s1")
	assert.JSONEq(t, `{"finish":"stop"}`, string(msgs[byID["s1"]].Metadata))
	require.Contains(t, byID, "m0")
	assert.JSONEq(t, `{"provider":"acme","model":"b","usage":{"tokens":3}}`, string(msgs[byID["m0"]].Metadata))
}
