package aap2agui_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/internal/testkit/refused"
	"github.com/aapagui/aapagui/store"
)

// closedURL is the URL of a port nothing listens on.
func closedURL(t *testing.T) string { return refused.URL(t) }

// TestUpstreamFailsBeforeStream checks the failures of the upstream call
// before its stream begins: a 502 or 504 with a JSON body and a stable
// code, in every stream mode, no upstream text in the response, and the
// turn not stored (the agent never took it), so it can be sent again.
func TestUpstreamFailsBeforeStream(t *testing.T) {
	handler := func(h http.HandlerFunc) func(*testing.T) string {
		return func(t *testing.T) string {
			s := httptest.NewServer(h)
			t.Cleanup(s.Close)
			return s.URL
		}
	}
	tests := []struct {
		name       string
		upstream   func(t *testing.T) string
		wantStatus int
		wantCode   string
	}{
		{"connection refused", closedURL, http.StatusBadGateway, "upstream_unreachable"},
		{"HTTP 500", handler(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "panic: secret-internal-detail at agent.py:42", http.StatusInternalServerError)
		}), http.StatusBadGateway, "upstream_error"},
		{"HTTP 404", handler(http.NotFound), http.StatusBadGateway, "upstream_error"},
		{"HTTP 401 from the agent", handler(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "bad agent key secret-internal-detail", http.StatusUnauthorized)
		}), http.StatusBadGateway, "upstream_error"},
		{"not an event stream", handler(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"secret-internal-detail":true}`))
		}), http.StatusBadGateway, "upstream_not_sse"},
		{"headers never arrive", handler(func(_ http.ResponseWriter, r *http.Request) {
			// The server notices a closed connection only once the body is
			// read.
			_, _ = io.Copy(io.Discard, r.Body)
			<-r.Context().Done() // until the bridge gives up
		}), http.StatusGatewayTimeout, "upstream_timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, tt.upstream(t), func(c *aap2agui.Config) { c.HeaderTimeout = 200 * time.Millisecond })
			id := e.createSession(t, aap.PostSessionsRequest{})
			for _, mode := range []aap.StreamMode{aap.StreamDelta, aap.StreamMessage, aap.StreamNone} {
				r := doRaw(t, http.MethodPost, e.URL+"/sessions/"+id+"/turns", "", `{"stream":"`+string(mode)+`","messages":[{"role":"user","content":"hi"}]}`)
				requireJSONError(t, r, tt.wantStatus, tt.wantCode)
				assert.NotContains(t, r.Body, "secret-internal-detail", "upstream text stays in the log")
			}
			// Through the AAP client too.
			_, err := e.stream(t, id, userTurn(aap.StreamDelta, "hi"))
			requireHTTPError(t, err, tt.wantStatus, tt.wantCode)
			assert.Empty(t, e.history(t, id, aap.HistoryFull), "a turn the agent never took is not stored")
		})
	}
}

// TestUpstreamFailsMidStream checks failures after the stream began: the
// turn ends with turn_stop{error} (stopReason "error" in none mode), and
// what was received before the failure is in the response and in history.
func TestUpstreamFailsMidStream(t *testing.T) {
	partial := func(in *runInput) []string {
		return []string{
			runStarted(in),
			`{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}`,
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"partial "}`,
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"answer"}`,
		}
	}
	tests := []struct {
		name         string
		maxEventSize int
		respond      func(t *testing.T, w http.ResponseWriter, in *runInput)
	}{
		{"garbage data", 0, func(_ *testing.T, w http.ResponseWriter, in *runInput) {
			sseEvents(w, append(partial(in), `{not json at all`, runFinished(in))...)
		}},
		{"an event that is not an AG-UI event", 0, func(_ *testing.T, w http.ResponseWriter, in *runInput) {
			sseEvents(w, append(partial(in), `42`, runFinished(in))...)
		}},
		{"an event over MaxEventSize", 1024, func(_ *testing.T, w http.ResponseWriter, in *runInput) {
			big := `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"` + strings.Repeat("x", 4096) + `"}`
			sseEvents(w, append(partial(in), big, runFinished(in))...)
		}},
		{"the connection drops", 0, func(t *testing.T, w http.ResponseWriter, in *runInput) {
			conn, buf, err := http.NewResponseController(w).Hijack()
			if !assert.NoError(t, err) {
				return
			}
			defer conn.Close()
			var body strings.Builder
			for _, ev := range partial(in) {
				fmt.Fprintf(&body, "data: %s\n\n", ev)
			}
			// A chunked response cut before its last chunk.
			fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n", body.Len(), body.String())
			_ = buf.Flush()
		}},
		{"the stream ends without RUN_FINISHED", 0, func(_ *testing.T, w http.ResponseWriter, in *runInput) {
			sseEvents(w, partial(in)...)
		}},
		{"RUN_ERROR", 0, func(_ *testing.T, w http.ResponseWriter, in *runInput) {
			sseEvents(w, append(partial(in), `{"type":"RUN_ERROR","message":"model overloaded","code":"OVERLOADED"}`)...)
		}},
		// The agent stops sending and keeps the connection open: the idle
		// timeout (200 ms here) ends the turn instead of the client
		// waiting as long as the agent does.
		{"the stream stalls", -1, func(_ *testing.T, w http.ResponseWriter, in *runInput) {
			sseEvents(w, partial(in)...)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stall := tt.maxEventSize < 0
			up := newFakeUpstream(t, func(w http.ResponseWriter, r *http.Request, in *runInput, _ int) {
				tt.respond(t, w, in)
				if stall {
					<-r.Context().Done()
				}
			})
			e := newEnv(t, up.URL, func(c *aap2agui.Config) {
				c.MaxEventSize = max(tt.maxEventSize, 0)
				if stall {
					c.IdleTimeout = 200 * time.Millisecond
				}
			})
			wantHistory := []string{`{"role":"user","content":"hi"}`, assistantText("partial answer")}
			for _, mode := range []aap.StreamMode{aap.StreamDelta, aap.StreamMessage, aap.StreamNone} {
				t.Run(string(mode), func(t *testing.T) {
					id := e.createSession(t, aap.PostSessionsRequest{})
					if mode == aap.StreamNone {
						resp, err := e.Client.Turn(bridgetest.Context(t), id, &aap.PostSessionTurnRequest{Messages: []aap.Message{aap.UserText("hi")}})
						require.NoError(t, err)
						assert.Equal(t, aap.StopError, resp.StopReason)
						assert.Equal(t, []string{assistantText("partial answer")}, messageLines(t, resp.Messages))
					} else {
						evs, err := e.stream(t, id, userTurn(mode, "hi"))
						require.NoError(t, err, "the stream ends with turn_stop, not a broken connection")
						want := []string{`turn_start {}`, `text_delta {"delta":"partial "}`, `text_delta {"delta":"answer"}`, `turn_stop {"stopReason":"error"}`}
						if mode == aap.StreamMessage {
							want = []string{`turn_start {}`, `text {"text":"partial answer"}`, `turn_stop {"stopReason":"error"}`}
						}
						assert.Equal(t, want, eventLines(t, evs))
					}
					assert.Equal(t, wantHistory, e.history(t, id, aap.HistoryFull))
				})
			}
		})
	}
}

// TestOneTurnAtATime checks that a second turn on a session gets 409
// while one is running, that other sessions are not held up, and that
// the session takes turns again once the first one ends.
func TestOneTurnAtATime(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	up := newFakeUpstream(t, func(w http.ResponseWriter, r *http.Request, in *runInput, n int) {
		if in.Messages[len(in.Messages)-1].Content != "slow" {
			sseEvents(w, textRun(in, fmt.Sprint("m", n), "quick")...)
			return
		}
		sseEvents(w, runStarted(in), `{"type":"TEXT_MESSAGE_START","messageId":"slow","role":"assistant"}`,
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"slow","delta":"working"}`)
		close(started)
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		sseEvents(w, `{"type":"TEXT_MESSAGE_END","messageId":"slow"}`, runFinished(in))
	})
	st := newNotifyStore(store.NewMemory())
	e := newEnv(t, up.URL, func(c *aap2agui.Config) { c.Store = st })
	id := e.createSession(t, aap.PostSessionsRequest{})
	other := e.createSession(t, aap.PostSessionsRequest{})

	type outcome struct {
		evs []aap.Event
		err error
	}
	first := make(chan outcome, 1)
	streaming := make(chan struct{})
	go func() {
		var o outcome
		for ev, err := range e.Client.StreamTurn(bridgetest.Context(t), id, &aap.PostSessionTurnRequest{Stream: aap.StreamDelta, Messages: []aap.Message{aap.UserText("slow")}}) {
			if err != nil {
				o.err = err
				break
			}
			if len(o.evs) == 0 {
				close(streaming)
			}
			o.evs = append(o.evs, ev)
		}
		first <- o
	}()
	// The turn's start is saved before its first event reaches the client.
	for _, ch := range []chan struct{}{started, streaming} {
		select {
		case <-ch:
		case <-bridgetest.Context(t).Done():
			t.Fatal("the first turn never reached the agent")
		}
	}

	for _, mode := range []aap.StreamMode{aap.StreamDelta, aap.StreamMessage, aap.StreamNone} {
		t.Run("a second turn, "+string(mode), func(t *testing.T) {
			r := doRaw(t, http.MethodPost, e.URL+"/sessions/"+id+"/turns", "", `{"stream":"`+string(mode)+`","messages":[{"role":"user","content":"me too"}]}`)
			requireJSONError(t, r, http.StatusConflict, "turn_in_progress")
			bridgetest.RequireLeaseLeft(t, r.Header, r.Body)
		})
	}
	t.Run("a second turn through the client", func(t *testing.T) {
		_, err := e.Client.Turn(bridgetest.Context(t), id, &aap.PostSessionTurnRequest{Messages: []aap.Message{aap.UserText("me too")}})
		requireHTTPError(t, err, http.StatusConflict, "turn_in_progress")
	})
	t.Run("another session is not held up", func(t *testing.T) {
		resp, err := e.Client.Turn(bridgetest.Context(t), other, &aap.PostSessionTurnRequest{Messages: []aap.Message{aap.UserText("hi")}})
		require.NoError(t, err)
		assert.Equal(t, aap.StopEndTurn, resp.StopReason)
		st.waitUnlocked(t, other)
	})
	t.Run("reads are not held up", func(t *testing.T) {
		assert.Equal(t, []string{`{"role":"user","content":"slow"}`}, e.history(t, id, aap.HistoryFull))
	})

	close(release)
	o := <-first
	require.NoError(t, o.err)
	assert.Equal(t, []string{`turn_start {}`, `text_delta {"delta":"working"}`, `turn_stop {"stopReason":"end_turn"}`}, eventLines(t, o.evs))
	st.waitUnlocked(t, id)

	t.Run("after the first turn ends", func(t *testing.T) {
		resp, err := e.Client.Turn(bridgetest.Context(t), id, &aap.PostSessionTurnRequest{Messages: []aap.Message{aap.UserText("next")}})
		require.NoError(t, err)
		assert.Equal(t, aap.StopEndTurn, resp.StopReason)
		assert.Equal(t, []string{
			`{"role":"user","content":"slow"}`, assistantText("working"),
			`{"role":"user","content":"next"}`, assistantText("quick"),
		}, e.history(t, id, aap.HistoryFull), "rejected turns left nothing in history")
	})
}

// TestClientDisconnect checks that a client that leaves mid-turn cancels
// the upstream call, and that what the agent said until then is saved.
func TestClientDisconnect(t *testing.T) {
	for _, mode := range []aap.StreamMode{aap.StreamDelta, aap.StreamNone} {
		t.Run(string(mode), func(t *testing.T) {
			sent, cancelled := make(chan struct{}), make(chan struct{})
			up := newFakeUpstream(t, func(w http.ResponseWriter, r *http.Request, in *runInput, _ int) {
				sseEvents(w, runStarted(in), `{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}`,
					`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"hello "}`)
				close(sent)
				<-r.Context().Done() // only a cancelled upstream call gets past this
				close(cancelled)
			})
			st := newNotifyStore(store.NewMemory())
			// In none mode nothing reaches the client before the end: the
			// bridge's read of the upstream body tells when it has the
			// first words.
			watch := &readWatcher{base: http.DefaultTransport, want: `"delta":"hello "`, seen: make(chan struct{})}
			e := newEnv(t, up.URL, func(c *aap2agui.Config) {
				c.Store = st
				c.HTTPClient = &http.Client{Transport: watch}
			})
			id := e.createSession(t, aap.PostSessionsRequest{})

			ctx, cancel := context.WithCancel(bridgetest.Context(t))
			defer cancel()
			done := make(chan error, 1)
			if mode == aap.StreamNone {
				go func() {
					_, err := e.Client.Turn(ctx, id, &aap.PostSessionTurnRequest{Messages: []aap.Message{aap.UserText("go")}})
					done <- err
				}()
				<-sent
				<-watch.seen
				cancel()
			} else {
				go func() {
					for ev, err := range e.Client.StreamTurn(ctx, id, &aap.PostSessionTurnRequest{Stream: mode, Messages: []aap.Message{aap.UserText("go")}}) {
						if err != nil {
							done <- err
							return
						}
						if _, ok := ev.(*aap.TextDelta); ok {
							cancel() // the client got the first words and leaves
						}
					}
					done <- nil
				}()
			}
			assert.ErrorIs(t, <-done, context.Canceled)

			select {
			case <-cancelled:
			case <-bridgetest.Context(t).Done():
				t.Fatal("the upstream call was not cancelled")
			}
			st.waitUnlocked(t, id)
			assert.Equal(t, []string{`{"role":"user","content":"go"}`, assistantText("hello ")}, e.history(t, id, aap.HistoryFull))
		})
	}
}

// readWatcher is an upstream transport that closes seen once the bridge
// has read want from a response body.
type readWatcher struct {
	base http.RoundTripper
	want string
	seen chan struct{}
	once sync.Once
}

func (w *readWatcher) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := w.base.RoundTrip(r)
	if err == nil {
		resp.Body = &watchedBody{ReadCloser: resp.Body, w: w}
	}
	return resp, err
}

type watchedBody struct {
	io.ReadCloser
	w    *readWatcher
	read []byte
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.read = append(b.read, p[:n]...)
	if strings.Contains(string(b.read), b.w.want) {
		b.w.once.Do(func() { close(b.w.seen) })
	}
	return n, err
}
