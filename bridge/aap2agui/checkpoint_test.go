package aap2agui_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/store"
)

// Checkpoints of a streaming answer (here at every read of the agent's
// stream, which sends one event at a time) leave the same history as a run
// without them once the turn ends, whether it ends well or the agent's
// stream breaks off: the draft is replaced, never doubled.
func TestCheckpointsLeaveTheSameHistory(t *testing.T) {
	up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
		evs := concat([]string{runStarted(in)}, textMessage("m1", "thinking ", "aloud"),
			toolCallEvents("call_1", "web_search", "m2", `{"query":"q"}`),
			[]string{`{"type":"TOOL_CALL_RESULT","messageId":"r1","toolCallId":"call_1","content":"found"}`},
			textMessage("m3", "so ", "there", " it is"))
		if n%2 == 0 {
			evs = append(evs, runFinished(in))
		} else {
			evs = evs[:len(evs)-1] // cut before the last message ends
		}
		for _, ev := range evs {
			sseEvents(w, ev)
			time.Sleep(time.Millisecond) // one read each
		}
	})
	histories := map[string][]string{}
	drafts := map[string]int{}
	for name, every := range map[string]time.Duration{"checkpoints": time.Nanosecond, "none": -1} {
		var mu sync.Mutex
		count := func(ctx context.Context, op string) (context.Context, func(error)) {
			return ctx, func(error) {
				if op == "ReplaceTail" || op == "ReplaceHistory" {
					mu.Lock()
					drafts[name]++
					mu.Unlock()
				}
			}
		}
		e := newEnv(t, up.URL, func(c *aap2agui.Config) {
			c.CheckpointInterval = every
			c.Store = store.Observe(store.NewMemory(), count)
		})
		id := e.createSession(t, aap.PostSessionsRequest{})
		for i := range 4 {
			_, err := e.stream(t, id, userTurn(aap.StreamDelta, "turn "+string(rune('a'+i))))
			assert.NoError(t, err)
		}
		histories[name] = e.history(t, id, aap.HistoryFull)
	}
	assert.Positive(t, drafts["checkpoints"], "no checkpoint was stored")
	assert.Zero(t, drafts["none"])
	assert.NotEmpty(t, histories["none"])
	assert.Equal(t, histories["none"], histories["checkpoints"])
}

// tailBytes counts the bytes of the entries checkpoints write.
type tailBytes struct {
	store.Store
	mu    sync.Mutex
	bytes int
	n     int
}

func (s *tailBytes) ReplaceTail(ctx context.Context, id string, from int, entries []store.Entry) error {
	s.mu.Lock()
	for _, e := range entries {
		b, _ := json.Marshal(e.Message)
		s.bytes += len(b)
	}
	s.n++
	s.mu.Unlock()
	return s.Store.ReplaceTail(ctx, id, from, entries)
}

// A checkpoint costs what changed: a long message checkpointed at every
// read of the agent's stream is written a few times its size in all, not
// once per read (each checkpoint rewrote the whole message, and the whole
// history with it: quadratic in the message).
func TestCheckpointsCostWhatChanged(t *testing.T) {
	const deltas, size = 1000, 1 << 10
	up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, _ int) {
		sseEvents(w, runStarted(in), `{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}`)
		chunk := strings.Repeat("x", size)
		for range deltas {
			sseEvents(w, `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"`+chunk+`"}`)
		}
		sseEvents(w, `{"type":"TEXT_MESSAGE_END","messageId":"m1"}`, runFinished(in))
	})
	st := &tailBytes{Store: store.NewMemory()}
	e := newEnv(t, up.URL, func(c *aap2agui.Config) {
		c.CheckpointInterval = time.Nanosecond
		c.Store = st
	})
	id := e.createSession(t, aap.PostSessionsRequest{Messages: []aap.Message{aap.UserText(strings.Repeat("earlier ", 1000))}})
	_, err := e.stream(t, id, userTurn(aap.StreamDelta, "a long one"))
	require.NoError(t, err)
	st.mu.Lock()
	defer st.mu.Unlock()
	t.Logf("%d checkpoints wrote %d bytes for a message of %d", st.n, st.bytes, deltas*size)
	require.Positive(t, st.n, "checkpoints were stored")
	assert.Less(t, st.bytes, 4*deltas*size, "%d checkpoints wrote %d bytes for a message of %d", st.n, st.bytes, deltas*size)
	h := e.history(t, id, aap.HistoryFull)
	require.Len(t, h, 3)
	assert.Len(t, h[2], len(`{"role":"assistant","content":""}`)+deltas*size)
}

// Checkpoints do not pile up: turns streaming at once share
// Config.MaxCheckpoints a second, each one's interval growing with their
// number.
func TestCheckpointsShareABudget(t *testing.T) {
	counts := map[int]int{}
	for _, max := range []int{1000, 1} {
		var ended atomic.Int32
		up := endlessUpstream(t, 5*time.Millisecond, func(n int) string { return delta("w ") }, &ended, true)
		st := &tailBytes{Store: store.NewMemory()}
		e := newEnv(t, up.URL, func(c *aap2agui.Config) {
			c.Store = st
			c.CheckpointInterval = 10 * time.Millisecond
			c.MaxCheckpoints = max
			c.MaxTurnDuration = 600 * time.Millisecond
		})
		var wg sync.WaitGroup
		for range 3 {
			id := e.createSession(t, aap.PostSessionsRequest{})
			wg.Go(func() {
				_, err := e.stream(t, id, userTurn(aap.StreamDelta, "talk"))
				assert.NoError(t, err)
			})
		}
		wg.Wait()
		st.mu.Lock()
		counts[max] = st.n
		st.mu.Unlock()
	}
	t.Logf("checkpoints: %v", counts)
	assert.Greater(t, counts[1000], 30, "every 10 ms while few turns stream")
	// Sharing one a second, each of 3 turns waits 3 s, longer than it
	// streams: at most the few made before the others began streaming.
	assert.Less(t, counts[1], 6)
}
