package demo_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/demo"
)

// TestAAPVersionEndpoints checks the endpoints of versions 1 and 2 beyond
// the conversations: tool specs with inputSchema, history inline (1) or
// at its own endpoint (2), lists of ids (1) or objects (2), deletion, and
// the errors.
func TestAAPVersionEndpoints(t *testing.T) {
	for _, version := range []int{1, 2} {
		t.Run(fmt.Sprintf("v%d", version), func(t *testing.T) {
			srv := newAAPServer(t, demo.AAPAgentOptions{Version: version, APIKeys: []string{"k"}})
			do := func(method, path, body string) (int, string) {
				resp := postRaw(t, srv, method, path, "k", body)
				return resp.StatusCode, readAll(t, resp)
			}

			status, body := do("GET", "/meta", "")
			require.Equal(t, 200, status)
			assert.Contains(t, body, `"version":`+strconv.Itoa(version)+`,`)
			assert.Contains(t, body, `"inputSchema":{"type":"object"`)
			assert.NotContains(t, body, `"parameters"`)

			status, body = do("PUT", "/session", `{"agent":{"name":"demo","options":{"api_key":"sk"}},"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hello there"}],"tools":[{"name":"get_weather","description":"d","inputSchema":{"type":"object"}}]}`)
			require.Equal(t, 200, status, body)
			var put aap.PutSessionResponse
			require.NoError(t, json.Unmarshal([]byte(body), &put))
			id := put.SessionID
			require.NotEmpty(t, id)
			assert.Equal(t, `{"sessionId":"`+id+`","stopReason":"end_turn","messages":[{"role":"assistant","content":"You said: hello there"}]}`+"\n", body)

			status, body = do("GET", "/session/"+id, "")
			require.Equal(t, 200, status)
			assert.Equal(t, `{"sessionId":"`+id+`","agent":{"name":"demo","options":{"api_key":"***"}},"tools":[{"name":"get_weather","description":"d","inputSchema":{"type":"object"}}]}`+"\n", body)
			hist := `[{"role":"system","content":"be brief"},{"role":"user","content":"hello there"},{"role":"assistant","content":"You said: hello there"}]`
			status, body = do("GET", "/session/"+id+"?history=full", "")
			require.Equal(t, 200, status)
			if version == 1 {
				assert.Contains(t, body, `"history":{"full":`+hist+`}`)
				status, _ = do("GET", "/session/"+id+"?history=all", "")
				assert.Equal(t, 400, status)
				status, _ = do("GET", "/session/"+id+"/history?type=full", "")
				assert.Equal(t, 404, status, "version 1 has no history endpoint")
			} else {
				assert.NotContains(t, body, `"history"`, "version 2 has no inline history")
				status, body = do("GET", "/session/"+id+"/history?type=compacted", "")
				require.Equal(t, 200, status)
				assert.Equal(t, `{"history":{"compacted":`+hist+`}}`+"\n", body)
			}

			status, body = do("GET", "/sessions", "")
			require.Equal(t, 200, status)
			if version == 1 {
				assert.Equal(t, `{"sessions":["`+id+`"]}`+"\n", body)
			} else {
				assert.True(t, strings.HasPrefix(body, `{"sessions":[{"sessionId":"`+id+`","agent":`), body)
				assert.Contains(t, body, `"inputSchema"`)
			}

			// Errors.
			for _, tt := range []struct {
				method, path, body string
				status             int
			}{
				{"PUT", "/session", `{"agent":{"name":"demo"},"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"}]}`, 400},
				{"PUT", "/session", `{"agent":{"name":"demo"},"messages":[]}`, 400},
				{"PUT", "/session", `{"agent":{"name":"other"},"messages":[{"role":"user","content":"a"}]}`, 404},
				{"PUT", "/session", `{"agent":{"name":"demo"},"messages":[{"role":"user","content":"a"}],"tools":[{"name":"t","description":"d","parameters":{}}]}`, 400},
				{"POST", "/session/nope", `{"messages":[{"role":"user","content":"a"}]}`, 404},
				{"GET", "/session/nope", "", 404},
				{"DELETE", "/session/nope", "", 404},
				{"POST", "/session/" + id, `{"messages":[{"role":"tool","toolCallId":"c","content":"x"}]}`, 400},
				{"POST", "/sessions", `{"agent":{"name":"demo"}}`, 405},
				{"POST", "/sessions/" + id + "/turns", `{"messages":[{"role":"user","content":"a"}]}`, 404},
				{"GET", "/session", "", 405},
			} {
				status, body := do(tt.method, tt.path, tt.body)
				assert.Equal(t, tt.status, status, "%s %s %s: %s", tt.method, tt.path, tt.body, body)
			}

			status, _ = do("DELETE", "/session/"+id, "")
			assert.Equal(t, 204, status)
			status, _ = do("GET", "/session/"+id, "")
			assert.Equal(t, 404, status)
		})
	}
}

// TestAAPVersionPutStream checks the bytes of a streamed PUT /session:
// session_start, then the turn.
func TestAAPVersionPutStream(t *testing.T) {
	srv := newAAPServer(t, demo.AAPAgentOptions{Version: 1})
	resp := postRaw(t, srv, "PUT", "/session", "", `{"agent":{"name":"demo"},"stream":"message","messages":[{"role":"user","content":"please think"}]}`)
	require.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	body := readAll(t, resp)
	id := strings.TrimSuffix(strings.TrimPrefix(strings.SplitN(body, "\n", 3)[1], `data: {"sessionId":"`), `"}`)
	assert.Equal(t, "event: session_start\ndata: {\"sessionId\":\""+id+"\"}\n\n"+
		"event: turn_start\ndata: {}\n\n"+
		"event: thinking\ndata: {\"thinking\":\""+demo.ThinkingText("please think")+"\"}\n\n"+
		"event: text\ndata: {\"text\":\""+demo.DoneThinking+"\"}\n\n"+
		"event: turn_stop\ndata: {\"stopReason\":\"end_turn\"}\n\n", body)

	c := newClient(srv, "")
	hist, err := c.History(context.Background(), id, aap.HistoryCompacted)
	require.NoError(t, err)
	assert.Len(t, hist, 2)
}
