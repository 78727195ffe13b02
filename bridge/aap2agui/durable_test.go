package aap2agui_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/store/sqlite"
)

// endFaults makes a turn's last write (SaveSession with the holder) fail, as a
// PostgreSQL restart does ("unexpected EOF", "terminating connection"):
// the next fail writes fail and store nothing; the next lost writes are
// stored and fail all the same (the connection broke at the commit, the
// outcome unknown to the client); failAll fails every one.
type endFaults struct {
	store.Store
	fail, lost atomic.Int32
	failAll    atomic.Bool
	calls      atomic.Int32
}

var errConnection = errors.New("unexpected EOF")

// SaveSession fails a turn's end (the save that frees the lock).
func (s *endFaults) SaveSession(ctx context.Context, sess *store.Session, appended []store.Entry, holder string) error {
	if holder == "" {
		return s.Store.SaveSession(ctx, sess, appended, holder)
	}
	s.calls.Add(1)
	if s.failAll.Load() || s.fail.Add(-1) >= 0 {
		return errConnection
	}
	if s.lost.Add(-1) >= 0 {
		if err := s.Store.SaveSession(ctx, sess, appended, holder); err != nil {
			return err
		}
		return errConnection
	}
	return s.Store.SaveSession(ctx, sess, appended, holder)
}

// turnRaw sends a turn and returns its status and body as they came.
func turnRaw(t *testing.T, e *env, id string, mode aap.StreamMode, text string) rawResponse {
	t.Helper()
	return doRaw(t, http.MethodPost, e.URL+"/sessions/"+id+"/turns", "",
		fmt.Sprintf(`{"stream":%q,"messages":[{"role":"user","content":%q}]}`, mode, text))
}

// TestTurnStopMeansStored: a turn's end reaches the client only once the
// turn is stored. A last write that fails is tried again (its outcome
// looked up first: a write that broke at its commit may be stored), so
// the client sees a clean end and history holds the answer exactly once;
// a store that does not come back ends the turn with an error stop (a 500
// in mode none), never with end_turn.
func TestTurnStopMeansStored(t *testing.T) {
	stores := map[string]func(t *testing.T) store.Store{
		"memory": func(*testing.T) store.Store { return store.NewMemory() },
		"sqlite": func(t *testing.T) store.Store {
			st, err := sqlite.Open(filepath.Join(t.TempDir(), "s.db"))
			require.NoError(t, err)
			t.Cleanup(func() { st.Close() })
			return st
		},
	}
	for _, mode := range []aap.StreamMode{aap.StreamDelta, aap.StreamMessage, aap.StreamNone} {
		for name, open := range stores {
			t.Run(string(mode)+"/"+name, func(t *testing.T) {
				t.Parallel()
				testTurnStopMeansStored(t, mode, open)
			})
		}
	}
}

func testTurnStopMeansStored(t *testing.T, mode aap.StreamMode, open func(t *testing.T) store.Store) {
	for _, c := range []struct {
		name       string
		fail, lost int32
	}{
		{"failed twice, then stored", 2, 0},
		{"stored although the write failed", 0, 1},
		{"both", 1, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := &endFaults{Store: open(t)}
			e := newEnv(t, demoAgent(t), func(cfg *aap2agui.Config) { cfg.Store = st })
			id := e.createSession(t, aap.PostSessionsRequest{})
			st.fail.Store(c.fail)
			st.lost.Store(c.lost)
			r := turnRaw(t, e, id, mode, "hello there")
			require.Equal(t, http.StatusOK, r.Status, r.Body)
			assert.Contains(t, r.Body, "end_turn")
			// Tried again after each failure; after one whose
			// outcome was unknown, looked up and found stored.
			assert.Equal(t, 1+c.fail, st.calls.Load())
			h := e.history(t, id, aap.HistoryFull)
			require.Len(t, h, 2, "the question and the answer, once: %v", h)
			assert.Contains(t, h[0], "hello there")
			assert.Contains(t, h[1], `"assistant"`)

			// The session is free and whole for the next turn.
			r = turnRaw(t, e, id, aap.StreamNone, "again")
			require.Equal(t, http.StatusOK, r.Status, r.Body)
			assert.Len(t, e.history(t, id, aap.HistoryFull), 4)
		})
	}
}

// TestTurnNotStoredIsNotAcknowledged: when the store does not come back
// while the lease holds, the client never gets end_turn: an error stop
// closes the stream, or a 500 store_error answers mode none; the session
// then takes turns again.
func TestTurnNotStoredIsNotAcknowledged(t *testing.T) {
	for _, mode := range []aap.StreamMode{aap.StreamDelta, aap.StreamNone} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			st := &endFaults{Store: store.NewMemory()}
			e := newEnv(t, demoAgent(t), func(cfg *aap2agui.Config) { cfg.Store = st })
			id := e.createSession(t, aap.PostSessionsRequest{})
			st.failAll.Store(true)
			start := time.Now()
			r := turnRaw(t, e, id, mode, "hello there")
			took := time.Since(start)
			assert.NotContains(t, r.Body, "end_turn")
			if mode == aap.StreamNone {
				requireJSONError(t, r, http.StatusInternalServerError, "store_error")
			} else {
				require.Equal(t, http.StatusOK, r.Status)
				frames := strings.Split(strings.TrimSpace(r.Body), "\n\n")
				assert.Regexp(t, "^id: [A-Za-z0-9_-]{11}:[0-9]+\nevent: turn_stop\ndata: {\"stopReason\":\"error\"}$", frames[len(frames)-1])
			}
			assert.Greater(t, st.calls.Load(), int32(2), "tried again while the lease held")
			assert.Less(t, took, store.LeaseTTL, "the tries end before the lease could")

			st.failAll.Store(false)
			require.Eventually(t, func() bool {
				return turnRaw(t, e, id, aap.StreamNone, "again").Status == http.StatusOK
			}, bridgetest.Timeout, 50*time.Millisecond, "the session takes turns again")
		})
	}
}

// endlessUpstream answers its first run (every run, with all) with
// RUN_STARTED, an open text message and then, until the run is cancelled,
// what more writes every interval; it counts the runs that ended (their
// request cancelled). Later runs get a short answer.
func endlessUpstream(t *testing.T, interval time.Duration, more func(n int) string, ended *atomic.Int32, all bool) *fakeUpstream {
	return newFakeUpstream(t, func(w http.ResponseWriter, r *http.Request, in *runInput, run int) {
		if run > 0 && !all {
			sseEvents(w, textRun(in, "m2", "here")...)
			return
		}
		defer ended.Add(1)
		sseEvents(w, runStarted(in), `{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}`)
		bridgetest.Trickle(w, r, interval, more)
	})
}

func delta(text string) string {
	return fmt.Sprintf("data: {\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m1\",\"delta\":%q}\n\n", text)
}

// TestClientThatStopsReading: a client that keeps its connection open but
// stops reading, while the agent keeps talking, ends its turn once a write
// to it has made no progress for StallTimeout, as a client that leaves
// does: the agent's run is cancelled, what it said is stored, and the
// session takes a new turn (it stayed locked for as long as the socket
// was open).
func TestClientThatStopsReading(t *testing.T) {
	big := strings.Repeat("x", 32<<10)
	var ended atomic.Int32
	up := endlessUpstream(t, time.Millisecond, func(int) string { return delta(big) }, &ended, false)
	const stall = 300 * time.Millisecond
	e := newEnv(t, up.URL, func(c *aap2agui.Config) { c.StallTimeout = stall })
	id := e.createSession(t, aap.PostSessionsRequest{})

	conn, err := net.Dial("tcp", strings.TrimPrefix(e.Root, "http://"))
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.(*net.TCPConn).SetReadBuffer(4<<10))
	body := `{"stream":"delta","messages":[{"role":"user","content":"talk forever"}]}`
	_, err = fmt.Fprintf(conn, "POST %s/sessions/%s/turns HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		strings.TrimPrefix(e.URL, e.Root), id, len(body), body)
	require.NoError(t, err)
	status, err := bufio.NewReader(conn).ReadString('\n') // and then never read again
	require.NoError(t, err)
	require.Contains(t, status, "200")

	// The stalled turn's lease is renewed for as long as the turn lives:
	// the session takes a new turn only once the stall has ended it.
	require.Eventually(t, func() bool {
		return turnRaw(t, e, id, aap.StreamNone, "are you there?").Status == http.StatusOK
	}, bridgetest.Timeout, 50*time.Millisecond, "the session takes a new turn")
	assert.Positive(t, ended.Load(), "the agent's run was cancelled")
	h := e.history(t, id, aap.HistoryFull)
	require.Len(t, h, 4)
	assert.Contains(t, h[1], "xxxx", "the part the agent said is kept")
}

// TestUpstreamBounds: an upstream that only sends SSE comments is idle
// (IdleTimeout counts events), one that talks past MaxTurnDuration is cut,
// and a message past MaxMessageSize ends the turn; each ends with an error
// stop, what came before kept.
func TestUpstreamBounds(t *testing.T) {
	for _, c := range []struct {
		name      string
		more      func(n int) string
		configure func(*aap2agui.Config)
		kept      string
	}{
		{"comments only", func(int) string { return ": keep-alive\n\n" },
			func(c *aap2agui.Config) { c.IdleTimeout = 300 * time.Millisecond }, ""},
		{"endless talk", func(n int) string { return delta(fmt.Sprintf("w%d ", n)) },
			func(c *aap2agui.Config) { c.MaxTurnDuration = 400 * time.Millisecond }, "w0 w1 "},
		{"a message too large", func(n int) string { return delta(strings.Repeat(string(rune('a'+n%26)), 1000)) },
			func(c *aap2agui.Config) { c.MaxMessageSize = 4500 }, strings.Repeat("a", 1000) + strings.Repeat("b", 1000)},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var ended atomic.Int32
			up := endlessUpstream(t, 20*time.Millisecond, c.more, &ended, true)
			e := newEnv(t, up.URL, c.configure)
			id := e.createSession(t, aap.PostSessionsRequest{})
			evs, err := e.stream(t, id, userTurn(aap.StreamDelta, "go"))
			require.NoError(t, err)
			require.NotEmpty(t, evs)
			assert.Equal(t, &aap.TurnStop{StopReason: aap.StopError}, evs[len(evs)-1])
			h := e.history(t, id, aap.HistoryFull)
			if c.kept == "" {
				assert.Len(t, h, 1, "nothing but the question")
				return
			}
			require.Len(t, h, 2)
			msgs, err := e.Client.History(bridgetest.Context(t), id, aap.HistoryFull)
			require.NoError(t, err)
			text := msgs[1].(*aap.AssistantMessage).Content.PlainText()
			assert.True(t, strings.HasPrefix(text, c.kept), "kept %q", text)
			if c.configure != nil && strings.Contains(c.name, "too large") {
				assert.Len(t, text, 4000, "the deltas that fit")
			}
		})
	}
}
