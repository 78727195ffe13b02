package bridgetest

import (
	"context"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/store"
)

// AllocStore counts what the store itself allocates in a turn's writes of
// its history or its thread (encoding them, copying them) in Bytes, so
// that a test can tell it from what the bridge allocates; a run log's
// batches are stored without their frames (the recorder has its own test).
type AllocStore struct {
	store.Store
	mu    sync.Mutex
	Bytes uint64
}

// count runs a write, adding what it allocated (the process's, while it
// ran: the turn waits for it) to s.Bytes.
func (s *AllocStore) count(write func() error) error {
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	err := write()
	runtime.ReadMemStats(&m1)
	s.mu.Lock()
	s.Bytes += m1.TotalAlloc - m0.TotalAlloc
	s.mu.Unlock()
	return err
}

// SaveSession counts a turn's end (the write that frees the lock).
func (s *AllocStore) SaveSession(ctx context.Context, sess *store.Session, appended []store.Entry, holder string) error {
	if holder == "" {
		return s.Store.SaveSession(ctx, sess, appended, holder)
	}
	return s.count(func() error { return s.Store.SaveSession(ctx, sess, appended, holder) })
}

// ReplaceTail counts the write.
func (s *AllocStore) ReplaceTail(ctx context.Context, id string, from int, entries []store.Entry) error {
	return s.count(func() error { return s.Store.ReplaceTail(ctx, id, from, entries) })
}

// SaveThread counts a run's end (the write that frees the lock).
func (s *AllocStore) SaveThread(ctx context.Context, th *store.Thread, holder string) error {
	if holder == "" {
		return s.Store.SaveThread(ctx, th, holder)
	}
	return s.count(func() error { return s.Store.SaveThread(ctx, th, holder) })
}

// AppendRunLog stores the batch without its frames.
func (s *AllocStore) AppendRunLog(ctx context.Context, id string, b store.RunLogBatch, finished bool) error {
	b.Frames = nil
	return s.Store.AppendRunLog(ctx, id, b, finished)
}

// PostAllocating posts the JSON body to url and reads the whole answer:
// how many bytes it had, and what the process allocated meanwhile.
func PostAllocating(t *testing.T, url, body string) (read int64, allocated uint64) {
	t.Helper()
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	require.NoError(t, err)
	read, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	runtime.ReadMemStats(&m1)
	return read, m1.TotalAlloc - m0.TotalAlloc
}
