package bridge_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/translate"
)

// metadataAgent is an AG-UI agent that says metadata as @ag-ui/core 1.0
// agents do: on a text message's start and end (token usage last), on a
// tool call it runs itself and on the call's result.
var metadataAgent = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	var in struct{ ThreadID, RunID string }
	_ = json.NewDecoder(r.Body).Decode(&in)
	w.Header().Set("Content-Type", "text/event-stream")
	for _, ev := range []string{
		fmt.Sprintf(`{"type":"RUN_STARTED","threadId":%q,"runId":%q}`, in.ThreadID, in.RunID),
		`{"type":"TEXT_MESSAGE_START","messageId":"m0","role":"assistant","metadata":{"provider":"acme","model":"a"}}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m0","delta":"Looking it up."}`,
		`{"type":"TEXT_MESSAGE_END","messageId":"m0","metadata":{"model":"b","usage":{"tokens":3}}}`,
		`{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"search","parentMessageId":"m0","metadata":{"latencyMs":84}}`,
		`{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{\"q\":\"dogs\"}"}`,
		`{"type":"TOOL_CALL_END","toolCallId":"c1","metadata":{"done":true}}`,
		`{"type":"TOOL_CALL_RESULT","messageId":"r1","toolCallId":"c1","content":"3 dogs","metadata":{"cached":true}}`,
		`{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Found them."}`,
		`{"type":"TEXT_MESSAGE_END","messageId":"m1"}`,
		fmt.Sprintf(`{"type":"RUN_FINISHED","threadId":%q,"runId":%q}`, in.ThreadID, in.RunID),
	} {
		fmt.Fprintf(w, "data: %s\n\n", ev)
	}
})

// pageMetadata is the metadata a page's client keeps of a run's events
// (@ag-ui/client's rule): each event's merged into the message it builds,
// a tool call's into the call; keyed by what the page sees the same
// whichever way it came: a text message by its text, a call by its id, a
// tool message by its call.
func pageMetadata(t *testing.T, run pageRun) map[string]string {
	t.Helper()
	texts := map[string]string{}
	metas := map[string]json.RawMessage{}
	var order []string
	for _, data := range run.JSON {
		var e struct {
			Type       string          `json:"type"`
			MessageID  string          `json:"messageId"`
			ToolCallID string          `json:"toolCallId"`
			Delta      string          `json:"delta"`
			Metadata   json.RawMessage `json:"metadata"`
		}
		require.NoError(t, json.Unmarshal([]byte(data), &e))
		key := ""
		switch e.Type {
		case "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END":
			key = "text:" + e.MessageID
			texts[key] += e.Delta
		case "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END":
			key = "call:" + e.ToolCallID
		case "TOOL_CALL_RESULT":
			key = "result:" + e.ToolCallID
		default:
			continue
		}
		if _, seen := metas[key]; !seen {
			order = append(order, key)
			metas[key] = nil
		}
		if e.Metadata != nil {
			metas[key] = translate.MergeMetadata(metas[key], e.Metadata)
		}
	}
	out := map[string]string{}
	for _, key := range order {
		name := key
		if text, ok := texts[key]; ok {
			name = "text:" + text
		}
		out[name] = string(metas[key])
	}
	return out
}

// The metadata an agent says reaches a page through the chain as it
// reaches the page pointed at the agent: the page's client, merging each
// event's into what it builds, keeps the same metadata of each text
// message, tool call and tool result.
func TestChainCarriesMetadataToThePage(t *testing.T) {
	as := httptest.NewServer(metadataAgent)
	t.Cleanup(as.Close)
	_, chained := newBridgesTo(t, as.URL, "meta")
	in := &types.RunAgentInput{ThreadID: "th-meta", RunID: "run-1",
		Messages: []types.Message{{ID: "u1", Role: types.RoleUser, Content: "Find dogs"}},
		Tools:    []types.Tool{}, State: map[string]any{}, Context: []types.Context{}, ForwardedProps: map[string]any{}}

	direct := pageMetadata(t, postRun(t, as.URL, in))
	got := pageMetadata(t, postRun(t, chained, in))
	require.Equal(t, map[string]string{
		"text:Looking it up.": `{"provider":"acme","model":"b","usage":{"tokens":3}}`,
		"call:c1":             `{"latencyMs":84,"done":true}`,
		"result:c1":           `{"cached":true}`,
		"text:Found them.":    "",
	}, direct, "the control")
	assert.Equal(t, direct, got)

	// A reload gives the page the messages with the metadata it kept.
	hydrated := postRun(t, chained, &types.RunAgentInput{ThreadID: "th-meta", RunID: "run-2", Messages: []types.Message{},
		Tools: []types.Tool{}, State: map[string]any{}, Context: []types.Context{}, ForwardedProps: map[string]any{}})
	var snap struct {
		Messages []struct {
			Role      string          `json:"role"`
			Content   any             `json:"content"`
			Metadata  json.RawMessage `json:"metadata"`
			ToolCalls []struct {
				ID       string          `json:"id"`
				Metadata json.RawMessage `json:"metadata"`
			} `json:"toolCalls"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal([]byte(hydrated.JSON[1]), &snap))
	require.Len(t, snap.Messages, 4, "the user's, the answer with its call, the result, the last answer")
	answer, result, last := snap.Messages[1], snap.Messages[2], snap.Messages[3]
	assert.JSONEq(t, direct["text:Looking it up."], string(answer.Metadata))
	require.Len(t, answer.ToolCalls, 1)
	assert.JSONEq(t, direct["call:c1"], string(answer.ToolCalls[0].Metadata))
	assert.Equal(t, "tool", result.Role)
	assert.JSONEq(t, direct["result:c1"], string(result.Metadata))
	assert.Nil(t, last.Metadata)
	assert.Nil(t, snap.Messages[0].Metadata)
}
