package aap2agui_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/store"
)

// hugeChunk is the text of each delta of a huge message.
var hugeChunk = strings.Repeat("a huge answer ", 64<<10/14+1)[:64<<10]

// One huge message costs the bridge about its size, not several times
// it: what the turn allocates, but for the store's own writes, stays
// under 4 times the message (its deltas decoded, its text made one
// string, bounded buffers). A buffer that copies the text as it grows, a
// string made of it at each read, or a run log that makes garbage of its
// frames would each take it past that. (Allocations, not memory in use:
// they are counted exactly, whatever the collector does.)
func TestHugeMessageAllocations(t *testing.T) {
	const size = 40 << 20
	frame := []byte(`data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"` + hugeChunk + "\"}\n\n")
	up := newFakeUpstream(t, func(w http.ResponseWriter, r *http.Request, in *runInput, _ int) {
		sseEvents(w, runStarted(in), `{"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}`)
		for sent := 0; sent < size && r.Context().Err() == nil; sent += len(hugeChunk) {
			if _, err := w.Write(frame); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
		sseEvents(w, `{"type":"TEXT_MESSAGE_END","messageId":"m"}`, runFinished(in))
	})
	st := &bridgetest.AllocStore{Store: store.NewMemory()}
	e := newEnv(t, up.URL, func(c *aap2agui.Config) {
		c.Store = st
		c.MaxMessageSize = 2 * size
		c.CheckpointInterval = -1 // the store's writes alone
	})
	id := e.createSession(t, aap.PostSessionsRequest{})
	n, turn := bridgetest.PostAllocating(t, e.URL+"/sessions/"+id+"/turns",
		`{"stream":"delta","messages":[{"role":"user","content":"a long answer"}]}`)
	stored := st.Bytes
	t.Logf("a message of %d MiB: the turn allocated %.1f MiB, the store's writes %.1f of them", size>>20,
		float64(turn)/(1<<20), float64(stored)/(1<<20))
	assert.Greater(t, n, int64(size), "the client got the message")
	assert.Less(t, turn-stored, uint64(4*size), "what the bridge allocated for a message of %d bytes", size)
	hist, err := st.History(bridgetest.Context(t), id)
	require.NoError(t, err)
	require.Len(t, hist, 2)
	am, ok := hist[1].Message.(*aap.AssistantMessage)
	require.True(t, ok)
	assert.Len(t, am.Content.Text, size, "the history holds the message")
}

// A long answer streamed in delta mode goes to the store in parts as it
// comes (the bridge holds a part of it at most), and everything that
// reads it back gets it whole: the history, and the next turn's agent,
// although this process kept the session's history from the turn. On
// every store.
func TestLongAnswerHeldInParts(t *testing.T) {
	deltas := bridgetest.LongDeltas()
	long := strings.Join(deltas, "")
	up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
		if n%2 == 0 {
			sseEvents(w, textRun(in, fmt.Sprintf("long-%d", n), deltas...)...)
			return
		}
		sseEvents(w, textRun(in, fmt.Sprintf("answer-%d", n), "ok")...)
	})
	for i, bs := range bridgetest.Stores() {
		t.Run(bs.Name, func(t *testing.T) {
			st := &bridgetest.PartsStore{Store: bs.Open(t)}
			e := newEnv(t, up.URL, func(c *aap2agui.Config) { c.Store = st })
			id := e.createSession(t, aap.PostSessionsRequest{})
			evs, err := e.stream(t, id, userTurn(aap.StreamDelta, "a long answer"))
			require.NoError(t, err)
			var streamed strings.Builder
			for _, ev := range evs {
				if d, ok := ev.(*aap.TextDelta); ok {
					streamed.WriteString(d.Delta)
				}
			}
			assert.True(t, streamed.String() == long, "the client got the answer")
			assert.Equal(t, int64(2), st.Parts.Load(), "2.5 MiB: two parts of a MiB, the rest in the entry")

			msgs, err := e.Client.History(bridgetest.Context(t), id, aap.HistoryFull)
			require.NoError(t, err)
			require.Len(t, msgs, 2)
			assert.True(t, msgs[1].(*aap.AssistantMessage).Content.Text == long, "the history holds the whole answer")

			_, err = e.stream(t, id, userTurn(aap.StreamDelta, "and now?"))
			require.NoError(t, err)
			in := up.input(t, 2*i+1)
			require.Len(t, in.Messages, 3)
			text, _ := in.Messages[1].Content.(string)
			assert.True(t, text == long, "the next turn's agent gets the whole answer (%d bytes of %d)", len(text), len(long))
		})
	}
}
