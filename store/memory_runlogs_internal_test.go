package store

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The memory store keeps its finished run logs' frames up to its budget:
// past it the logs that finished first go, whatever their key, while
// running logs and the newest finished ones stay readable.
func TestMemoryRunLogBudget(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	m.runLogs.budget = 3000
	frames := bytes.Repeat([]byte("x"), 1000)
	run := func(key string, finish bool) string {
		t.Helper()
		l := &RunLog{ID: fmt.Sprintf("log-%s-%d", key, len(m.runLogs.byID)), Owner: "o", Key: key}
		require.NoError(t, m.StartRunLog(ctx, l))
		require.NoError(t, m.AppendRunLog(ctx, l.ID, RunLogBatch{First: 1, Count: 1, Frames: frames}, finish))
		return l.ID
	}
	running := run("session/live", false)
	var done []string
	for i := range 5 {
		done = append(done, run(fmt.Sprintf("session/%d", i), true))
	}
	for i, id := range done {
		_, err := m.GetRunLog(ctx, "o", id)
		if i < 2 {
			assert.ErrorIs(t, err, ErrNotFound, "log %d finished among the first, past the budget", i)
			_, err = m.LatestRunLog(ctx, "o", fmt.Sprintf("session/%d", i))
			assert.ErrorIs(t, err, ErrNotFound, "its key has no log left")
		} else {
			assert.NoError(t, err, "log %d is within the budget", i)
		}
	}
	got, err := m.ReadRunLog(ctx, running, 0, 1<<20)
	require.NoError(t, err, "a running log is kept whatever the budget")
	assert.Equal(t, frames, got[0].Frames)

	// Logs dropped otherwise (a deleted session's) free their share.
	require.NoError(t, m.DeleteRunLogs(ctx, "o", "session/4"))
	id := run("session/5", true)
	for _, id := range append(done[2:4], id) {
		_, err := m.GetRunLog(ctx, "o", id)
		assert.NoError(t, err, "%s is within the budget once session/4's log is gone", id)
	}
	assert.Equal(t, 3000, m.runLogs.finishedBytes)
}
