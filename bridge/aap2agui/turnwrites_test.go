package aap2agui_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/store"
)

// pausingAgent answers a run with a web_search call and its result, then
// waits for more (or the run's end) before its text ("done") and
// RUN_FINISHED: an agent that pauses in the middle of its answer, as one
// waiting for a model does.
func pausingAgent(t *testing.T, result string, more <-chan struct{}) string {
	return serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		send := func(events ...string) {
			for _, ev := range events {
				fmt.Fprintf(w, "data: %s\n\n", ev)
			}
			w.(http.Flusher).Flush()
		}
		send(`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`,
			`{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"web_search","parentMessageId":"m1"}`,
			`{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{\"query\":\"go\"}"}`,
			`{"type":"TOOL_CALL_END","toolCallId":"c1"}`,
			`{"type":"TOOL_CALL_RESULT","messageId":"r1","toolCallId":"c1","content":"`+result+`","role":"tool"}`)
		select {
		case <-more:
		case <-r.Context().Done():
			return
		}
		send(`{"type":"TEXT_MESSAGE_START","messageId":"m2","role":"assistant"}`,
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m2","delta":"done"}`,
			`{"type":"TEXT_MESSAGE_END","messageId":"m2"}`,
			`{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`)
	}))
}

// TestSettledMessagesStoredBeforeTheyAreSent: once the client has the
// result of a tool the agent ran, the call and its result are in the
// session's history, even while the agent is still working; the turn's
// end stores the rest.
func TestSettledMessagesStoredBeforeTheyAreSent(t *testing.T) {
	// A result over 64 KiB goes out before the agent's stream is read
	// again.
	for name, result := range map[string]string{"small": "found", "large": strings.Repeat("found ", 12<<10)} {
		t.Run(name, func(t *testing.T) {
			more := make(chan struct{})
			e := newEnv(t, pausingAgent(t, result, more))
			id := e.createSession(t, aap.PostSessionsRequest{})

			var got []string
			for ev, err := range e.Client.StreamTurn(bridgetest.Context(t), id, &aap.PostSessionTurnRequest{Stream: aap.StreamDelta, Messages: []aap.Message{aap.UserText("hello")}}) {
				require.NoError(t, err)
				got = append(got, string(ev.EventName()))
				if _, ok := ev.(*aap.ToolResult); ok {
					h := e.history(t, id, aap.HistoryFull)
					require.Len(t, h, 3, "history while the agent works on")
					assert.Contains(t, h[1], `"c1"`)
					assert.Contains(t, h[2], `"found`)
					close(more)
				}
			}
			assert.Equal(t, []string{"turn_start", "tool_call", "tool_result", "text_delta", "turn_stop"}, got)
			h := e.history(t, id, aap.HistoryFull)
			require.Len(t, h, 4)
			assert.Contains(t, h[0], `"hello"`)
			assert.Contains(t, h[2], `"found`)
			assert.Contains(t, h[3], `"done"`)
		})
	}
}

// TestTurnIsTwoWrites: a turn whose answer comes in one burst costs the
// store two writes, each one commit: its start (the user's message) and its
// end (the answer, the session, and the lock freed). The store is what
// replicas share, so each write is a round trip every turn pays.
func TestTurnIsTwoWrites(t *testing.T) {
	for _, mode := range []aap.StreamMode{aap.StreamDelta, aap.StreamMessage, aap.StreamNone} {
		t.Run(string(mode), func(t *testing.T) {
			var mu sync.Mutex
			writes := map[string]int{}
			count := func(ctx context.Context, op string) (context.Context, func(error)) {
				return ctx, func(error) {
					mu.Lock()
					defer mu.Unlock()
					switch op {
					case "Lock", "GetSession", "History", "LoadSession", "LockLoadSession":
					default:
						writes[op]++
					}
				}
			}
			e := newEnv(t, demoAgent(t), func(c *aap2agui.Config) { c.Store = store.Observe(store.NewMemory(), count) })
			id := e.createSession(t, aap.PostSessionsRequest{})
			mu.Lock()
			clear(writes)
			mu.Unlock()

			turn := userTurn(mode, "hello")
			_, err := e.Client.Turn(bridgetest.Context(t), id, &turn)
			require.NoError(t, err)
			mu.Lock()
			assert.Equal(t, map[string]int{"SaveSession": 1, "SaveSessionUnlock": 1}, writes)
			mu.Unlock()
			assert.Len(t, e.history(t, id, aap.HistoryFull), 2)
		})
	}
}

// capturingTransport remembers the requests it sends.
type capturingTransport struct {
	mu   sync.Mutex
	reqs []*http.Request
}

func (c *capturingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.reqs = append(c.reqs, r)
	c.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

// TestRunLetGoOnceAnswered: the run sent to the agent holds the whole
// conversation, and the HTTP transport keeps the request for as long as
// the answer streams; once the answer has begun, nothing of the request
// holds the run's bytes any more (a retry could not send it again).
func TestRunLetGoOnceAnswered(t *testing.T) {
	more := make(chan struct{})
	tr := &capturingTransport{}
	e := newEnv(t, pausingAgent(t, "found", more), func(c *aap2agui.Config) { c.HTTPClient = &http.Client{Transport: tr} })
	id := e.createSession(t, aap.PostSessionsRequest{})
	for ev, err := range e.Client.StreamTurn(bridgetest.Context(t), id, &aap.PostSessionTurnRequest{Stream: aap.StreamDelta, Messages: []aap.Message{aap.UserText("hello")}}) {
		require.NoError(t, err)
		if _, ok := ev.(*aap.ToolResult); ok {
			tr.mu.Lock()
			require.Len(t, tr.reqs, 1)
			req := tr.reqs[0]
			tr.mu.Unlock()
			_, err := req.GetBody()
			assert.Error(t, err, "the run can no longer be read again")
			close(more)
		}
	}
}
