package agui2aap_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/agui2aap"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/store"
)

// One huge message costs the bridge about its size, not several times
// it: what the run allocates, but for the store's own writes, stays under
// 4 times the message (its deltas decoded, its text made one string, the
// thread record's JSON of it, bounded buffers). A buffer that copies the
// text as it grows, a string made of it at each read, a record encoded
// in a buffer and copied out, or a run log that makes garbage of its
// frames would each take it past that. (Allocations, not memory in use:
// they are counted exactly, whatever the collector does.)
func TestHugeMessageAllocations(t *testing.T) {
	const size = 40 << 20
	chunk := strings.Repeat("a huge answer ", 64<<10/14+1)[:64<<10]
	frame, err := aap.AppendFrame(nil, &aap.TextDelta{Delta: chunk})
	require.NoError(t, err)
	up := newFakeAAP(t, func(w http.ResponseWriter, r *http.Request, _ int, _ *aap.PostSessionTurnRequest) {
		writeEvents(w, &aap.TurnStart{})
		for sent := 0; sent < size && r.Context().Err() == nil; sent += len(chunk) {
			if _, err := w.Write(frame); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
		writeEvents(w, &aap.TurnStop{StopReason: aap.StopEndTurn})
	})
	st := &bridgetest.AllocStore{Store: store.NewMemory()}
	e := newBridge(t, up.URL, func(c *agui2aap.Config) {
		c.Store = st
		c.MaxMessageSize = 2 * size
	})
	n, run := bridgetest.PostAllocating(t, e.URL+"/agents/demo",
		`{"threadId":"t1","runId":"r1","messages":[{"id":"u1","role":"user","content":"a long answer"}],"tools":[],"context":[],"state":{},"forwardedProps":{}}`)
	stored := st.Bytes
	t.Logf("a message of %d MiB: the run allocated %.1f MiB, the store's writes %.1f of them", size>>20,
		float64(run)/(1<<20), float64(stored)/(1<<20))
	assert.Greater(t, n, int64(size), "the client got the message")
	assert.Less(t, run-stored, uint64(4*size), "what the bridge allocated for a message of %d bytes", size)
	th := e.thread(t, "t1")
	raw, err := st.ThreadRecord(bridgetest.Context(t), th.Owner, th.ID)
	require.NoError(t, err)
	require.Len(t, raw, 2)
	var m types.Message
	require.NoError(t, m.UnmarshalJSON(raw[1]))
	assert.Len(t, m.Content, size, "the thread's record holds the message")
}

// A long answer goes to the thread's record in parts as it comes (the
// bridge holds a part of it at most), and the record gives it back whole.
// On every store.
func TestLongAnswerHeldInParts(t *testing.T) {
	deltas := bridgetest.LongDeltas()
	long := strings.Join(deltas, "")
	up := newFakeAAP(t, func(w http.ResponseWriter, _ *http.Request, _ int, _ *aap.PostSessionTurnRequest) {
		writeEvents(w, &aap.TurnStart{})
		for _, d := range deltas {
			writeEvents(w, &aap.TextDelta{Delta: d})
		}
		writeEvents(w, &aap.TurnStop{StopReason: aap.StopEndTurn})
	})
	for _, bs := range bridgetest.Stores() {
		t.Run(bs.Name, func(t *testing.T) {
			st := &bridgetest.PartsStore{Store: bs.Open(t)}
			e := newBridge(t, up.URL, func(c *agui2aap.Config) { c.Store = st })
			r := e.post(t, "/agents/demo", map[string]any{"threadId": "t1", "runId": "r1",
				"messages": []map[string]any{{"id": "u1", "role": "user", "content": "a long answer"}},
				"tools":    []any{}, "context": []any{}, "state": map[string]any{}, "forwardedProps": map[string]any{}})
			var streamed strings.Builder
			for _, ev := range r.Events {
				if c, ok := ev.(*events.TextMessageContentEvent); ok {
					streamed.WriteString(c.Delta)
				}
			}
			assert.True(t, streamed.String() == long, "the client got the answer")
			assert.Equal(t, "RUN_FINISHED", r.types()[len(r.Events)-1])
			assert.Equal(t, int64(2), st.Parts.Load(), "2.5 MiB: two parts of a MiB, the rest in the record")

			raw, err := st.ThreadRecord(bridgetest.Context(t), "", "t1")
			require.NoError(t, err)
			require.Len(t, raw, 2)
			var m types.Message
			require.NoError(t, m.UnmarshalJSON(raw[1]))
			text, _ := m.Content.(string)
			assert.True(t, text == long, "the thread's record holds the whole answer (%d bytes of %d)", len(text), len(long))
		})
	}
}
