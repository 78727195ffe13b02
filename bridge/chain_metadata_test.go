package bridge_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
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

// inputsAgent records the raw RunAgentInput of each run and answers
// "ok".
type inputsAgent struct {
	mu   sync.Mutex
	runs [][]byte
}

func (a *inputsAgent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var in struct{ ThreadID, RunID string }
	_ = json.Unmarshal(body, &in)
	a.mu.Lock()
	n := len(a.runs)
	a.runs = append(a.runs, body)
	a.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	for _, ev := range []string{
		fmt.Sprintf(`{"type":"RUN_STARTED","threadId":%q,"runId":%q}`, in.ThreadID, in.RunID),
		fmt.Sprintf(`{"type":"TEXT_MESSAGE_START","messageId":"a%d","role":"assistant"}`, n),
		fmt.Sprintf(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"a%d","delta":"ok"}`, n),
		fmt.Sprintf(`{"type":"TEXT_MESSAGE_END","messageId":"a%d"}`, n),
		fmt.Sprintf(`{"type":"RUN_FINISHED","threadId":%q,"runId":%q}`, in.ThreadID, in.RunID),
	} {
		fmt.Fprintf(w, "data: %s\n\n", ev)
	}
}

// metadataByText is the metadata of each message of a RunAgentInput's
// JSON, by the message's text.
func metadataByText(t *testing.T, body []byte) map[string]string {
	t.Helper()
	var in struct {
		Messages []struct {
			Content  any             `json:"content"`
			Metadata json.RawMessage `json:"metadata"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(body, &in))
	out := map[string]string{}
	for _, m := range in.Messages {
		text, _ := m.Content.(string)
		out[text] = string(m.Metadata)
	}
	return out
}

// The metadata a page gives its messages reaches the agent through the
// chain as it does pointed at the agent, and stays with them: the next
// run, which sends only what is new, still gives the agent the earlier
// message's. A thread whose history the AAP session does not hold (a
// page's history built elsewhere) starts a session seeded with it, its
// messages' metadata with them.
func TestChainCarriesMetadataToTheAgent(t *testing.T) {
	direct, chainedAgent := &inputsAgent{}, &inputsAgent{}
	ds := httptest.NewServer(direct)
	t.Cleanup(ds.Close)
	cs := httptest.NewServer(chainedAgent)
	t.Cleanup(cs.Close)
	_, chained := newBridgesTo(t, cs.URL, "inputs")
	// run posts a run and returns the id of the answer's message.
	run := func(url, thread, runID string, msgs string) string {
		body := `{"threadId":"` + thread + `","runId":"` + runID + `","state":{},"tools":[],"context":[],"forwardedProps":{},"messages":[` + msgs + `]}`
		resp, err := http.Post(url, "application/json", strings.NewReader(body))
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		data, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		var start struct{ MessageID string }
		for _, line := range strings.Split(string(data), "\n") {
			if strings.Contains(line, `"TEXT_MESSAGE_START"`) {
				require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &start))
			}
		}
		return start.MessageID
	}
	first := `{"id":"u1","role":"user","content":"Hello","metadata":{"source":"voice","confidence":0.90}}`
	next := func(answer string) string {
		return first + `,{"id":"` + answer + `","role":"assistant","content":"ok"},{"id":"u2","role":"user","content":"Again","metadata":{"lang":"fr"}}`
	}
	for _, url := range []string{ds.URL, chained} {
		answer := run(url, "th-pm", "run-1", first)
		run(url, "th-pm", "run-2", next(answer))
		run(url, "th-elsewhere", "run-3", next("from-elsewhere"))
	}
	require.Len(t, chainedAgent.runs, 3)
	assert.Equal(t, `{"source":"voice","confidence":0.90}`, metadataByText(t, chainedAgent.runs[0])["Hello"], "as the page wrote it")
	for i := range 3 {
		want, got := metadataByText(t, direct.runs[i]), metadataByText(t, chainedAgent.runs[i])
		for text, meta := range want {
			if meta == "" {
				assert.Empty(t, got[text], "run %d, %q", i, text)
				continue
			}
			assert.JSONEq(t, meta, got[text], "run %d, %q", i, text)
		}
	}
	assert.NotEqual(t, threadOf(t, chainedAgent.runs[1]), threadOf(t, chainedAgent.runs[2]), "the history built elsewhere is a session of its own")
	assert.Equal(t, threadOf(t, chainedAgent.runs[0]), threadOf(t, chainedAgent.runs[1]), "the thread goes on in its session")
}

func threadOf(t *testing.T, body []byte) string {
	t.Helper()
	var in struct{ ThreadID string }
	require.NoError(t, json.Unmarshal(body, &in))
	return in.ThreadID
}
