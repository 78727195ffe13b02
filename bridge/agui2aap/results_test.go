package agui2aap_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/demo"
)

// onlyMode serves agent h with /meta declaring the one stream mode given,
// so that agui2aap uses it.
func onlyMode(h http.Handler, mode aap.StreamMode) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/meta" {
			h.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		var meta aap.GetMetaResponse
		if err := json.Unmarshal(rec.Body.Bytes(), &meta); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		for i := range meta.Agents {
			caps := *meta.Agents[i].Capabilities
			s := &aap.StreamCapabilities{}
			switch mode {
			case aap.StreamDelta:
				s.Delta = &aap.Empty{}
			case aap.StreamMessage:
				s.Message = &aap.Empty{}
			default:
				s.None = &aap.Empty{}
			}
			caps.Stream = s
			meta.Agents[i].Capabilities = &caps
		}
		writeJSON(w, http.StatusOK, meta)
	})
}

// quietUpstream starts the AAP demo agent in its quiet mode (permission
// outcomes stored, never sent) declaring only mode.
func quietUpstream(t testing.TB, mode aap.StreamMode) string {
	t.Helper()
	s := httptest.NewServer(onlyMode(demo.NewAAPAgent(demo.AAPAgentOptions{QuietPermissionResults: true}), mode))
	t.Cleanup(s.Close)
	return s.URL
}

// order lists a run's events as "TYPE" or "TOOL_CALL_RESULT <content>".
func order(evs []events.Event) []string {
	var out []string
	for _, ev := range evs {
		switch e := ev.(type) {
		case *events.ToolCallResultEvent:
			out = append(out, "TOOL_CALL_RESULT "+e.Content)
		case *events.TextMessageStartEvent, *events.RunFinishedEvent, *events.RunErrorEvent:
			out = append(out, string(ev.Type()))
		}
	}
	return out
}

// An AAP server that stores a permission's outcome without streaming it
// (as the reference TypeScript SDK 0.8 does): after a grant, agui2aap
// reads the result from the session's history and sends TOOL_CALL_RESULT
// before the answer's first text; after a denial, the denial's result comes
// first too. The thread stays in its one AAP session for the rest of the
// conversation. In every stream mode the bridge may use.
func TestResultsOfAnsweredPermissions(t *testing.T) {
	for _, mode := range []aap.StreamMode{aap.StreamDelta, aap.StreamMessage, aap.StreamNone} {
		for _, granted := range []bool{true, false} {
			name := "denied"
			if granted {
				name = "granted"
			}
			t.Run(string(mode)+"/"+name, func(t *testing.T) {
				e := newBridge(t, quietUpstream(t, mode))
				c := e.conv("quiet")
				c.say("search dogs")
				r := c.run(t)
				require.Len(t, r.interrupts(), 1)
				id := e.onlySession(t)

				answer := approve(r.interrupts()[0].ID)
				result, text := demo.SearchResult("dogs"), demo.SearchAnswer(demo.SearchResult("dogs"))
				if !granted {
					answer = deny(r.interrupts()[0].ID, "not now")
					result, text = demo.DeniedResult("not now"), demo.DeniedText("not now")
				}
				r = c.run(t, answer)
				assert.Equal(t, []string{"TOOL_CALL_RESULT " + result, "TEXT_MESSAGE_START", "RUN_FINISHED"}, order(r.Events),
					"the result first, then the answer")
				assert.Equal(t, []string{text}, r.Text)
				assert.Equal(t, "success", r.outcome())

				c.say("hello again")
				r = c.run(t)
				assert.Equal(t, []string{demo.EchoText("hello again")}, r.Text)
				assert.Equal(t, id, e.onlySession(t), "one AAP session for the whole conversation")
				hist := e.history(t, id)
				assert.Equal(t, []string{"user", "assistant", "tool", "assistant", "user", "assistant"}, roles(hist))
				assert.Equal(t, result, hist[2].(*aap.ToolMessage).Content.PlainText())
			})
		}
	}
}

// A server that stores a granted call's result before it streams the
// answer: the bridge reads it when the answer begins and streams the
// answer as it comes, without withholding it. The fake server sends the
// first words of its answer and waits for the test to see them (and the
// result before them) on the client's side before it goes on.
func TestStoredResultDoesNotWithholdTheAnswer(t *testing.T) {
	const call = "call_stored"
	goOn := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /meta", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, aap.GetMetaResponse{Version: aap.Version, Agents: []aap.AgentInfo{{
			Name: "demo", Version: "1.0.0", Tools: []aap.ToolSpec{demo.SearchToolSpec},
			Capabilities: &aap.Capabilities{
				Stream:  &aap.StreamCapabilities{Delta: &aap.Empty{}},
				History: &aap.HistoryCapabilities{Full: &aap.Empty{}},
			},
		}}})
	})
	mux.HandleFunc("POST /sessions", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusCreated, aap.PostSessionsResponse{SessionID: "sess-1"})
	})
	mux.HandleFunc("GET /sessions/sess-1/history", func(w http.ResponseWriter, _ *http.Request) {
		var resp aap.GetSessionHistoryResponse
		resp.History.Full = []aap.Message{
			aap.UserText("search dogs"),
			&aap.AssistantMessage{Content: aap.BlockContent(&aap.ToolUseBlock{ToolCallID: call, Name: demo.SearchTool, Input: json.RawMessage(`{"query":"dogs"}`)})},
			&aap.ToolMessage{ToolCallID: call, Content: aap.TextContent("three pages about dogs")},
		}
		writeJSON(w, http.StatusOK, resp)
	})
	mux.HandleFunc("POST /sessions/sess-1/turns", func(w http.ResponseWriter, r *http.Request) {
		var req aap.PostSessionTurnRequest
		if !readJSON(w, r, &req) {
			return
		}
		if _, ok := req.Messages[0].(*aap.UserMessage); ok {
			writeEvents(w, &aap.TurnStart{}, &aap.ToolCall{ToolCallID: call, Name: demo.SearchTool, Input: json.RawMessage(`{"query":"dogs"}`)}, &aap.TurnStop{StopReason: aap.StopToolUse})
			return
		}
		writeEvents(w, &aap.TurnStart{}, &aap.TextDelta{Delta: "Found "})
		select {
		case <-goOn:
		case <-r.Context().Done():
			return
		}
		writeEvents(w, &aap.TextDelta{Delta: "three pages."}, &aap.TurnStop{StopReason: aap.StopEndTurn})
	})
	up := httptest.NewServer(mux)
	t.Cleanup(up.Close)
	e := newBridge(t, up.URL)
	c := e.conv("stored")
	c.say("search dogs")
	r := c.run(t)
	require.Len(t, r.interrupts(), 1)

	in := c.input("", nil)
	in.Resume = append(in.Resume, approve(r.interrupts()[0].ID))
	body, err := json.Marshal(in)
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(bridgetest.Context(t), http.MethodPost, e.URL+"/agents/demo", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	var seen []string
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev struct{ Type, Content, Delta string }
		require.NoError(t, json.Unmarshal([]byte(data), &ev))
		switch ev.Type {
		case "TOOL_CALL_RESULT":
			seen = append(seen, "result: "+ev.Content)
		case "TEXT_MESSAGE_CONTENT":
			seen = append(seen, "text: "+ev.Delta)
		}
		if ev.Type == "TEXT_MESSAGE_CONTENT" && ev.Delta == "Found " {
			break
		}
	}
	require.Equal(t, []string{"result: three pages about dogs", "text: Found "}, seen,
		"the result, then the first words while the server is still answering")
	close(goOn)
	var rest strings.Builder
	for sc.Scan() {
		fmt.Fprintln(&rest, sc.Text())
	}
	assert.Contains(t, rest.String(), `"delta":"three pages."`)
	assert.Contains(t, rest.String(), `"RUN_FINISHED"`)
}
