package aap2agui_test

import (
	"context"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/store"
)

// allocStore counts what the store itself allocates in a turn's writes of
// its history (encoding the entries, copying them), so that a test can
// tell it from what the bridge allocates; a run log's batches are stored
// without their frames (the recorder has its own test).
type allocStore struct {
	store.Store
	mu    sync.Mutex
	bytes uint64
}

// count runs a write, adding what it allocated (the process's, while it
// ran: the turn waits for it) to s.bytes.
func (s *allocStore) count(write func() error) error {
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	err := write()
	runtime.ReadMemStats(&m1)
	s.mu.Lock()
	s.bytes += m1.TotalAlloc - m0.TotalAlloc
	s.mu.Unlock()
	return err
}

func (s *allocStore) SaveSessionUnlock(ctx context.Context, sess *store.Session, appended []store.Entry, holder string) error {
	return s.count(func() error { return s.Store.SaveSessionUnlock(ctx, sess, appended, holder) })
}

func (s *allocStore) ReplaceTail(ctx context.Context, id string, from int, entries []store.Entry) error {
	return s.count(func() error { return s.Store.ReplaceTail(ctx, id, from, entries) })
}

func (s *allocStore) AppendRunLog(ctx context.Context, id string, b store.RunLogBatch, finished bool) error {
	b.Frames = nil
	return s.Store.AppendRunLog(ctx, id, b, finished)
}

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
	st := &allocStore{Store: store.NewMemory()}
	e := newEnv(t, up.URL, func(c *aap2agui.Config) {
		c.Store = st
		c.MaxMessageSize = 2 * size
		c.CheckpointInterval = -1 // the store's writes alone
	})
	id := e.createSession(t, aap.PostSessionsRequest{})
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	resp, err := http.Post(e.URL+"/sessions/"+id+"/turns", "application/json",
		strings.NewReader(`{"stream":"delta","messages":[{"role":"user","content":"a long answer"}]}`))
	require.NoError(t, err)
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	runtime.ReadMemStats(&m1)

	turn, stored := m1.TotalAlloc-m0.TotalAlloc, st.bytes
	t.Logf("a message of %d MiB: the turn allocated %.1f MiB, the store's writes %.1f of them", size>>20,
		float64(turn)/(1<<20), float64(stored)/(1<<20))
	assert.Greater(t, n, int64(size), "the client got the message")
	assert.Less(t, turn-stored, uint64(4*size), "what the bridge allocated for a message of %d bytes", size)
	hist, err := st.History(testContext(t), id)
	require.NoError(t, err)
	require.Len(t, hist, 2)
	am, ok := hist[1].Message.(*aap.AssistantMessage)
	require.True(t, ok)
	assert.Len(t, am.Content.Text, size, "the history holds the message")
}
