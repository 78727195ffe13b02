package aap2agui_test

import (
	"bufio"
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/store"
)

// gatedStore is a memory store whose SaveSession, while gate is set,
// first calls gate: the save of a turn's own messages, which aap2agui
// starts beside the upstream call. gate's error fails the save, storing
// nothing.
type gatedStore struct {
	store.Store
	gate atomic.Pointer[func() error]
}

// SaveSession without a holder is a turn's start.
func (s *gatedStore) SaveSession(ctx context.Context, sess *store.Session, appended []store.Entry, holder string) error {
	if holder != "" {
		return s.Store.SaveSession(ctx, sess, appended, holder)
	}
	if g := s.gate.Swap(nil); g != nil {
		if err := (*g)(); err != nil {
			return err
		}
	}
	return s.Store.SaveSession(ctx, sess, appended, "")
}

func (s *gatedStore) setGate(g func() error) { s.gate.Store(&g) }

// TestTurnStartSaveFails: when the turn's own messages cannot be stored,
// the client gets the store error as JSON (500, as when the store fails
// before the agent is called), nothing of the answer, and the session is
// as it was: the next turn finds neither the failed message nor a held
// lock.
func TestTurnStartSaveFails(t *testing.T) {
	for _, mode := range []aap.StreamMode{aap.StreamDelta, aap.StreamMessage, aap.StreamNone} {
		t.Run(string(mode), func(t *testing.T) {
			st := &gatedStore{Store: store.NewMemory()}
			e := newEnv(t, demoAgent(t), func(c *aap2agui.Config) { c.Store = st })
			id := e.createSession(t, aap.PostSessionsRequest{})

			st.setGate(func() error { return errors.New("disk full") })
			r := doRaw(t, http.MethodPost, e.URL+"/sessions/"+id+"/turns", "",
				`{"stream":"`+string(mode)+`","messages":[{"role":"user","content":"hello"}]}`)
			requireJSONError(t, r, http.StatusInternalServerError, "store_error")
			assert.NotContains(t, r.Body, "turn_start")
			assert.Empty(t, e.history(t, id, aap.HistoryFull), "nothing of the failed turn is stored")

			evs, err := e.stream(t, id, userTurn(aap.StreamDelta, "hello again"))
			require.NoError(t, err)
			require.NotEmpty(t, evs)
			h := e.history(t, id, aap.HistoryFull)
			require.Len(t, h, 2)
			assert.Contains(t, h[0], "hello again")
		})
	}
}

// TestNothingSentBeforeTheTurnIsSaved: the turn's own messages are stored
// before any of the answer reaches the client, although the save runs
// beside the agent's call. The save here waits until the agent has sent
// its whole answer, so an answer passed on before the save returned would
// be read by the client first.
func TestNothingSentBeforeTheTurnIsSaved(t *testing.T) {
	answered := make(chan struct{})
	agent := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		demo.AGUIAgent{}.ServeHTTP(w, r)
		select {
		case <-answered:
		default:
			close(answered)
		}
	})
	st := &gatedStore{Store: store.NewMemory()}
	e := newEnv(t, serve(t, agent), func(c *aap2agui.Config) { c.Store = st })
	id := e.createSession(t, aap.PostSessionsRequest{})

	var saved atomic.Bool
	st.setGate(func() error {
		select {
		case <-answered:
		case <-time.After(bridgetest.Timeout / 2):
			return errors.New("the agent was not called while the turn was being saved")
		}
		saved.Store(true)
		return nil
	})
	first := true
	for ev, err := range e.Client.StreamTurn(bridgetest.Context(t), id, &aap.PostSessionTurnRequest{Stream: aap.StreamDelta, Messages: []aap.Message{aap.UserText("hello")}}) {
		require.NoError(t, err)
		if first {
			assert.True(t, saved.Load(), "the client got %s before the turn's messages were stored", ev.EventName())
			first = false
		}
	}
	h := e.history(t, id, aap.HistoryFull)
	require.Len(t, h, 2)
	assert.Contains(t, h[0], `"hello"`)
}

// TestTurnSaveFailsAfterKeepAlive: a save that fails after a keep-alive
// has gone out (the stream is open: no status can be sent) ends the
// stream with an error stop, and stores nothing of the turn.
func TestTurnSaveFailsAfterKeepAlive(t *testing.T) {
	speak := make(chan struct{})
	agent := lateUpstream(t, func(r *http.Request) bool {
		select {
		case <-speak:
			return true
		case <-r.Context().Done():
			return false
		}
	})
	st := &gatedStore{Store: store.NewMemory()}
	e := newEnv(t, agent, func(c *aap2agui.Config) {
		c.Store = st
		c.KeepAlive = 20 * time.Millisecond
	})
	id := e.createSession(t, aap.PostSessionsRequest{})

	release := make(chan struct{})
	st.setGate(func() error {
		<-release
		return errors.New("disk full")
	})
	req, err := http.NewRequestWithContext(bridgetest.Context(t), http.MethodPost, e.URL+"/sessions/"+id+"/turns",
		strings.NewReader(`{"stream":"delta","messages":[{"role":"user","content":"hello"}]}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	rd := bufio.NewReader(resp.Body)
	line, err := rd.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, ": keep-alive\n", line)
	close(speak)
	close(release)

	var events []string
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			break
		}
		if name, ok := strings.CutPrefix(line, "event: "); ok {
			events = append(events, strings.TrimSpace(name))
		}
		if strings.HasPrefix(line, "data: ") && strings.Contains(line, `"stopReason"`) {
			assert.Contains(t, line, `"stopReason":"error"`)
		}
	}
	assert.Equal(t, []string{"turn_start", "turn_stop"}, events)
	assert.Empty(t, e.history(t, id, aap.HistoryFull), "nothing of the failed turn is stored")
}
