package agui2aap_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/agui2aap"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/internal/testkit/metricstest"
	"github.com/aapagui/aapagui/internal/testkit/refused"
	"github.com/aapagui/aapagui/translate"
)

// deadUpstream is the URL of an AAP server that is gone.
func deadUpstream(t testing.TB) string { return refused.URL(t) }

// Upstream failures before the stream starts are HTTP errors (502) with a
// JSON body; nothing is stored.
func TestUpstreamFailureBeforeStream(t *testing.T) {
	status := func(code int, what string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			writeJSON(w, code, aap.ErrorResponse{Error: aap.ErrorBody{Code: "boom", Message: what}})
		}
	}
	cases := []struct {
		name     string
		upstream func(t testing.TB) string
		code     string
	}{
		{name: "AAP server down", upstream: deadUpstream, code: "upstream_unreachable"},
		{
			name: "AAP 500 on the turn",
			upstream: func(t testing.TB) string {
				return newFakeAAP(t, func(w http.ResponseWriter, _ *http.Request, _ int, _ *aap.PostSessionTurnRequest) {
					status(http.StatusInternalServerError, "the model is down")(w, nil)
				}).URL
			},
			code: "upstream_error",
		},
		{
			name: "AAP 500 on /meta",
			upstream: func(t testing.TB) string {
				s := httptest.NewServer(status(http.StatusInternalServerError, "meta broke"))
				t.Cleanup(s.Close)
				return s.URL
			},
			code: "upstream_error",
		},
		{
			name: "AAP 500 creating the session",
			upstream: func(t testing.TB) string {
				f := newFakeAAP(t, answerText("never"))
				mux := http.NewServeMux()
				mux.Handle("/", f.server.Config.Handler)
				mux.HandleFunc("POST /sessions", status(http.StatusInternalServerError, "no room"))
				s := httptest.NewServer(mux)
				t.Cleanup(s.Close)
				return s.URL
			},
			code: "upstream_error",
		},
		{
			name: "AAP refuses the bridge's key",
			upstream: func(t testing.TB) string {
				return newFakeAAP(t, func(w http.ResponseWriter, _ *http.Request, _ int, _ *aap.PostSessionTurnRequest) {
					status(http.StatusUnauthorized, "who are you")(w, nil)
				}).URL
			},
			code: "upstream_unauthorized",
		},
		{
			name: "a proxy answers the turn with an HTML page",
			upstream: func(t testing.TB) string {
				return newFakeAAP(t, func(w http.ResponseWriter, _ *http.Request, _ int, _ *aap.PostSessionTurnRequest) {
					w.Header().Set("Content-Type", "text/html")
					_, _ = io.WriteString(w, "<html>Sign in to the proxy</html>")
				}).URL
			},
			code: "upstream_not_sse",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newBridge(t, tc.upstream(t))
			c := e.conv("down")
			c.say("hello")
			r := e.post(t, "/agents/demo", c.input("", nil))
			assert.Equal(t, http.StatusBadGateway, r.Status, r.Body)
			assert.Equal(t, "application/json", r.Header.Get("Content-Type"))
			assert.Equal(t, tc.code, r.errorCode())
			assert.NotContains(t, r.Body, "the model is down", "the upstream's own message is not passed on")
		})
	}
}

// A stream that ends or breaks mid-turn ends the run with RUN_ERROR,
// closing whatever was open, with a code naming the failure: an end
// without turn_stop is UPSTREAM_INCOMPLETE, a cut connection UPSTREAM_CUT,
// an oversized event UPSTREAM_EVENT_TOO_LARGE, an unreadable one
// UPSTREAM_BAD_EVENT; never a hang.
func TestUpstreamStreamCut(t *testing.T) {
	cases := []struct {
		name string
		code string
		turn func(w http.ResponseWriter)
	}{
		{name: "clean end without turn_stop", code: translate.CodeIncomplete, turn: func(w http.ResponseWriter) {
			writeEvents(w, &aap.TurnStart{}, &aap.TextDelta{Delta: "half an "})
		}},
		{name: "connection aborted", code: "UPSTREAM_CUT", turn: func(w http.ResponseWriter) {
			writeEvents(w, &aap.TurnStart{}, &aap.TextDelta{Delta: "half an "})
			panic(http.ErrAbortHandler)
		}},
		{name: "cut inside an event", code: "UPSTREAM_CUT", turn: func(w http.ResponseWriter) {
			writeEvents(w, &aap.TurnStart{}, &aap.TextDelta{Delta: "half an "})
			_, _ = io.WriteString(w, "event: text_delta\ndata: {\"delta\":\"ans")
			_ = http.NewResponseController(w).Flush()
			panic(http.ErrAbortHandler)
		}},
		{name: "cut with a tool call open", code: translate.CodeIncomplete, turn: func(w http.ResponseWriter) {
			writeEvents(w, &aap.TurnStart{}, &aap.TextDelta{Delta: "let me check "},
				&aap.ToolCall{ToolCallID: "call_1", Name: demo.SearchTool, Input: json.RawMessage(`{"query":"q"}`)})
		}},
		{name: "an event over the size limit", code: "UPSTREAM_EVENT_TOO_LARGE", turn: func(w http.ResponseWriter) {
			writeEvents(w, &aap.TurnStart{}, &aap.TextDelta{Delta: "half an "}, &aap.TextDelta{Delta: strings.Repeat("x", 70<<10)})
		}},
		{name: "an event that is not JSON", code: "UPSTREAM_BAD_EVENT", turn: func(w http.ResponseWriter) {
			writeEvents(w, &aap.TurnStart{}, &aap.TextDelta{Delta: "half an "})
			_, _ = io.WriteString(w, "event: text_delta\ndata: {\"delta\":\n\n")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeAAP(t, func(w http.ResponseWriter, _ *http.Request, _ int, _ *aap.PostSessionTurnRequest) { tc.turn(w) })
			e := newBridge(t, f.URL, func(c *agui2aap.Config) { c.MaxEventSize = 64 << 10 })
			c := e.conv("cut")
			c.say("hello")
			r := c.run(t)
			assert.Equal(t, tc.code, r.errorCodeInBand())
			assert.Nil(t, r.Finished)
			require.NotEmpty(t, r.Text)
			assert.True(t, strings.HasPrefix(r.Text[0], "half an ") || strings.HasPrefix(r.Text[0], "let me check "), "the partial text is kept: %q", r.Text)
		})
	}
}

// An agent that fails (turn_stop error) gives RUN_ERROR with its code
// after the partial text; the thread goes on.
func TestAgentError(t *testing.T) {
	e := newEnv(t)
	c := e.conv("fail")
	c.say("please fail")
	r := c.run(t)
	assert.Equal(t, translate.CodeAgentError, r.errorCodeInBand())
	assert.Equal(t, []string{demo.FailPrefix}, r.Text)
	c.say("hello")
	r = c.run(t)
	assert.Equal(t, []string{demo.EchoText("hello")}, r.Text)
}

// modeLimiter wraps the AAP demo agent so that its /meta declares only
// the given stream modes, and records the mode of every turn.
type modeLimiter struct {
	next  http.Handler
	modes aap.StreamCapabilities
	mu    sync.Mutex
	seen  []aap.StreamMode
}

func (m *modeLimiter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.URL.Path == "/meta" {
		rec := httptest.NewRecorder()
		m.next.ServeHTTP(rec, r)
		var meta aap.GetMetaResponse
		if err := json.Unmarshal(rec.Body.Bytes(), &meta); err != nil {
			writeJSON(w, http.StatusInternalServerError, err.Error())
			return
		}
		for i := range meta.Agents {
			caps := *meta.Agents[i].Capabilities
			modes := m.modes
			caps.Stream = &modes
			meta.Agents[i].Capabilities = &caps
		}
		writeJSON(w, http.StatusOK, meta)
		return
	}
	if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/turns") {
		body, _ := io.ReadAll(r.Body)
		var req aap.PostSessionTurnRequest
		_ = req.UnmarshalJSON(body)
		m.mu.Lock()
		m.seen = append(m.seen, req.Mode())
		m.mu.Unlock()
		r.Body = io.NopCloser(strings.NewReader(string(body)))
	}
	m.next.ServeHTTP(w, r)
}

// An AAP server that streams only whole messages, or does not stream at
// all, still gives the client a complete AG-UI event stream.
func TestUpstreamStreamModes(t *testing.T) {
	cases := []struct {
		name  string
		modes aap.StreamCapabilities
		want  aap.StreamMode
	}{
		{name: "delta", modes: aap.StreamCapabilities{Delta: &aap.Empty{}, Message: &aap.Empty{}, None: &aap.Empty{}}, want: aap.StreamDelta},
		{name: "message only", modes: aap.StreamCapabilities{Message: &aap.Empty{}}, want: aap.StreamMessage},
		{name: "message and none", modes: aap.StreamCapabilities{Message: &aap.Empty{}, None: &aap.Empty{}}, want: aap.StreamMessage},
		{name: "none only", modes: aap.StreamCapabilities{None: &aap.Empty{}}, want: aap.StreamNone},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lim := &modeLimiter{next: demo.NewAAPAgent(demo.AAPAgentOptions{}), modes: tc.modes}
			up := httptest.NewServer(lim)
			t.Cleanup(up.Close)
			e := newBridge(t, up.URL)
			c := e.conv("modes")
			c.Tools = []types.Tool{weatherTool}

			c.say("please think")
			r := c.run(t)
			assert.Equal(t, []string{demo.ThinkingText("please think")}, r.Reasoning)
			assert.Equal(t, []string{demo.DoneThinking}, r.Text)

			c.say("weather in Paris")
			r = c.run(t)
			require.Len(t, r.Calls, 1)
			assert.JSONEq(t, `{"location":"Paris"}`, r.Calls[0].Args)
			assert.Nil(t, r.Finished.Outcome)
			c.answer(r.Calls[0].ID, "Sunny")
			r = c.run(t)
			assert.Equal(t, []string{demo.WeatherText("Paris", "Sunny")}, r.Text)

			c.say("search cats")
			r = c.run(t)
			require.Equal(t, "interrupt", r.outcome())
			it := r.interrupts()[0]
			r = c.run(t, approve(it.ID))
			assert.Equal(t, demo.SearchResult("cats"), r.Results[it.ToolCallID])
			assert.Equal(t, demo.SearchAnswer(demo.SearchResult("cats")), r.lastText())

			c.say("please fail")
			r = c.run(t)
			assert.Equal(t, translate.CodeAgentError, r.errorCodeInBand())

			lim.mu.Lock()
			defer lim.mu.Unlock()
			for _, m := range lim.seen {
				assert.Equal(t, tc.want, m, "the bridge asks for the best mode declared")
			}
			assert.Len(t, e.sessions(t), 1)
		})
	}
}

// A client that goes away cancels the upstream turn.
func TestClientDisconnectCancelsUpstream(t *testing.T) {
	ended := make(chan struct{})
	f := newFakeAAP(t, func(w http.ResponseWriter, r *http.Request, n int, req *aap.PostSessionTurnRequest) {
		if n > 0 {
			answerText("quick")(w, r, n, req)
			return
		}
		writeEvents(w, &aap.TurnStart{}, &aap.TextDelta{Delta: "thinking very slowly"})
		select {
		case <-r.Context().Done():
			close(ended)
		case <-time.After(bridgetest.Timeout):
		}
	})
	e := newBridge(t, f.URL)
	c := e.conv("leave")
	c.say("hello")
	body, err := json.Marshal(c.input("", nil))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(bridgetest.Context(t))
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.URL+"/agents/demo", strings.NewReader(string(body)))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	br := bufio.NewReader(resp.Body)
	var seen []string
	for len(seen) < 2 { // RUN_STARTED, TEXT_MESSAGE_START at least
		line, err := br.ReadString('\n')
		require.NoError(t, err)
		if strings.HasPrefix(line, "data: ") {
			seen = append(seen, line)
		}
	}
	cancel()
	resp.Body.Close()
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the upstream turn was not cancelled when the client left")
	}
	// The thread is free again.
	c2 := e.conv("leave")
	c2.say("hello")
	require.Eventually(t, func() bool {
		r := e.post(t, "/agents/demo", c2.input("", nil))
		return r.Status != http.StatusConflict
	}, 5*time.Second, 50*time.Millisecond)
}

// What an AAP server may send that needs care: events the bridge does not
// know are skipped, max_tokens is a success with the stop reason in the
// result, a tool call without input gets "{}", and an event over
// MaxEventSize ends the run with RUN_ERROR.
func TestUpstreamOddities(t *testing.T) {
	cases := []struct {
		name  string
		evs   []aap.Event
		check func(t *testing.T, r *result)
	}{
		{
			name: "unknown event",
			evs: []aap.Event{&aap.TurnStart{}, &aap.UnknownEvent{Name: "usage", Data: json.RawMessage(`{"tokens":3}`)},
				&aap.TextDelta{Delta: "fine"}, &aap.TurnStop{StopReason: aap.StopEndTurn}},
			check: func(t *testing.T, r *result) {
				assert.Equal(t, []string{"fine"}, r.Text)
				assert.Equal(t, "success", r.outcome())
			},
		},
		{
			name: "max_tokens",
			evs:  []aap.Event{&aap.TurnStart{}, &aap.TextDelta{Delta: "trunc"}, &aap.TurnStop{StopReason: aap.StopMaxTokens}},
			check: func(t *testing.T, r *result) {
				assert.Equal(t, "success", r.outcome())
				assert.Equal(t, map[string]any{"stopReason": "max_tokens"}, r.Finished.Result)
			},
		},
		{
			name: "client tool call without input",
			evs: []aap.Event{&aap.TurnStart{}, &aap.ToolCall{ToolCallID: "call_1", Name: demo.WeatherTool},
				&aap.TurnStop{StopReason: aap.StopToolUse}},
			check: func(t *testing.T, r *result) {
				require.Len(t, r.Calls, 1)
				assert.Equal(t, "{}", r.Calls[0].Args)
				assert.Nil(t, r.Finished.Outcome)
			},
		},
		{
			name: "event over MaxEventSize",
			evs:  []aap.Event{&aap.TurnStart{}, &aap.TextDelta{Delta: "ok "}, &aap.TextDelta{Delta: strings.Repeat("x", 8192)}, &aap.TurnStop{StopReason: aap.StopEndTurn}},
			check: func(t *testing.T, r *result) {
				assert.Equal(t, "UPSTREAM_EVENT_TOO_LARGE", r.errorCodeInBand())
				assert.Equal(t, []string{"ok "}, r.Text)
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeAAP(t, func(w http.ResponseWriter, _ *http.Request, _ int, _ *aap.PostSessionTurnRequest) {
				writeEvents(w, tc.evs...)
			})
			e := newBridge(t, f.URL, func(c *agui2aap.Config) { c.MaxEventSize = 4096 })
			c := e.conv("odd")
			c.Tools = []types.Tool{weatherTool}
			c.say("hello")
			tc.check(t, c.run(t))
		})
	}
}

// A turn whose headers never come is a 504 after the header timeout,
// counted as upstream_timeout; a
// stream that stalls is ended after the idle timeout with RUN_ERROR
// UPSTREAM_IDLE_TIMEOUT, the partial text kept. Neither waits for the
// upstream.
func TestUpstreamTimeouts(t *testing.T) {
	stall := make(chan struct{})
	defer close(stall)
	t.Run("response headers", func(t *testing.T) {
		f := newFakeAAP(t, func(_ http.ResponseWriter, r *http.Request, _ int, _ *aap.PostSessionTurnRequest) {
			select {
			case <-stall:
			case <-r.Context().Done():
			}
		})
		e := newBridge(t, f.URL, func(c *agui2aap.Config) { c.HeaderTimeout = 200 * time.Millisecond })
		c := e.conv("slow-headers")
		c.say("hello")
		r := e.post(t, "/agents/demo", c.input("", nil))
		assert.Equal(t, http.StatusGatewayTimeout, r.Status, r.Body)
		assert.Equal(t, "upstream_timeout", r.errorCode())
		m := metricstest.Scrape(t, e.URL+"/metrics", "")
		assert.Equal(t, 1.0, m.Value("agui2aap_upstream_requests_total", "call", "turn", "outcome", "error", "code", "upstream_timeout"),
			"the turn is counted as timed out, not as cancelled")
	})
	t.Run("idle stream", func(t *testing.T) {
		f := newFakeAAP(t, func(w http.ResponseWriter, r *http.Request, _ int, _ *aap.PostSessionTurnRequest) {
			writeEvents(w, &aap.TurnStart{}, &aap.TextDelta{Delta: "half an "})
			select {
			case <-stall:
			case <-r.Context().Done():
			}
		})
		e := newBridge(t, f.URL, func(c *agui2aap.Config) { c.IdleTimeout = 200 * time.Millisecond })
		c := e.conv("stalled")
		c.say("hello")
		r := c.run(t)
		assert.Equal(t, "UPSTREAM_IDLE_TIMEOUT", r.errorCodeInBand())
		require.NotEmpty(t, r.Text)
		assert.Equal(t, "half an ", r.Text[0], "the partial text is kept")
	})
}
