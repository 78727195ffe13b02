package storetest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/store"
)

// Migration checks, the same for each driver: a driver's test stores with
// a Migration's Fill on the current schema, takes the schema back to the
// one before the change with SQL of its own, opens the store again (which
// migrates it) and runs Check.
type Migration struct {
	Fill, Check func(t *testing.T, s store.Store)
}

// StopMarksMigration is the change that marks running logs to stop: the
// running log can be asked to stop, the finished one cannot.
var StopMarksMigration = Migration{
	Fill: func(t *testing.T, s store.Store) {
		StartLog(t, s, "L1", "alice", "thread/t1", time.Time{})
		require.NoError(t, s.AppendRunLog(context.Background(), "L1", Batch(1, 2), true))
		StartLog(t, s, "L2", "alice", "thread/t1", time.Time{})
	},
	Check: func(t *testing.T, s store.Store) {
		ctx := context.Background()
		ids, err := s.StoppingRunLogs(ctx)
		require.NoError(t, err)
		assert.Empty(t, ids, "no log was asked to stop")
		require.ErrorIs(t, s.StopRunLog(ctx, "alice", "L1"), store.ErrNotFound, "a finished log")
		require.NoError(t, s.StopRunLog(ctx, "alice", "L2"))
		ids, err = s.StoppingRunLogs(ctx)
		require.NoError(t, err)
		assert.Equal(t, []string{"L2"}, ids)
	},
}

// RunLogInputMigration is the change that keeps a run's input with its
// log: the logs before it are there without one, and new logs keep
// theirs, byte for byte.
var RunLogInputMigration = Migration{
	Fill: func(t *testing.T, s store.Store) {
		StartLog(t, s, "L1", "alice", "thread/t1", time.Time{})
		require.NoError(t, s.AppendRunLog(context.Background(), "L1", Batch(1, 2), true))
	},
	Check: func(t *testing.T, s store.Store) {
		ctx := context.Background()
		got, err := s.GetRunLog(ctx, "alice", "L1")
		require.NoError(t, err)
		assert.Nil(t, got.Input, "a log stored before the column")
		assert.Equal(t, int64(2), got.Events)
		assert.True(t, got.Finished)
		batches, err := s.ReadRunLog(ctx, "L1", 0, 1<<20)
		require.NoError(t, err)
		assert.Equal(t, []store.RunLogBatch{Batch(1, 2)}, batches)

		input := []byte("[{\"id\":\"m1\",\"role\":\"user\",\"content\":\"\xff\xfe\x00\"}]")
		l := &store.RunLog{ID: "L2", Owner: "alice", Key: "thread/t1", RunID: "run-L2", Form: "agui", Input: input}
		require.NoError(t, s.StartRunLog(ctx, l))
		got, err = s.LatestRunLog(ctx, "alice", "thread/t1")
		require.NoError(t, err)
		assert.Equal(t, "L2", got.ID)
		assert.Equal(t, input, got.Input)
	},
}

// ThreadRecordsMigration is the change that keeps each thread's record:
// the threads before it are there with empty records, which saves then
// write.
var ThreadRecordsMigration = Migration{
	Fill: func(t *testing.T, s store.Store) {
		require.NoError(t, s.SaveThread(context.Background(), &store.Thread{Owner: "k", ID: "t", SessionID: "sess"}, ""))
	},
	Check: func(t *testing.T, s store.Store) {
		ctx := context.Background()
		th, err := s.GetThread(ctx, "k", "t")
		require.NoError(t, err)
		assert.Equal(t, "sess", th.SessionID)
		assert.Zero(t, th.RecordLen)
		th.RecordTail = &store.RecordTail{Messages: RecordMessages("m1", "m2")}
		require.NoError(t, s.SaveThread(ctx, th, ""))
		got, err := s.ThreadRecord(ctx, "k", "t")
		require.NoError(t, err)
		assert.Equal(t, RecordMessages("m1", "m2"), got)
	},
}

// FillDelivered saves thread "t" of owner "k" with the ids m1 and m2, for
// DeliveredMigrated.
func FillDelivered(t *testing.T, s store.Store) {
	require.NoError(t, s.SaveThread(context.Background(), &store.Thread{Owner: "k", ID: "t", SessionID: "sess", Delivered: []string{"m1", "m2"}}, ""))
}

// DeliveredMigrated checks a store whose thread "t" of owner "k" was saved
// with the ids m1 and m2 in its row (FillDelivered), by the build before
// the ids had rows of their own, and which then migrated: the thread has
// them, and a run's save adds to them. row reads the thread's row as
// stored, which the earlier build cannot read; earlierSave writes the ids
// o1 and o2 into the row, as a replica of the earlier build still running
// saves it: the thread then has those.
func DeliveredMigrated(t *testing.T, s store.Store, row func() string, earlierSave func()) {
	t.Helper()
	ctx := context.Background()
	th, err := s.GetThread(ctx, "k", "t")
	require.NoError(t, err)
	assert.Equal(t, []string{"m1", "m2"}, th.Delivered)
	th.Delivered, th.DeliveredFrom = append(th.Delivered, "m3"), 2
	require.NoError(t, s.SaveThread(ctx, th, ""))
	th, err = s.GetThread(ctx, "k", "t")
	require.NoError(t, err)
	assert.Equal(t, []string{"m1", "m2", "m3"}, th.Delivered)

	data := row()
	var earlier struct{ Delivered []string }
	require.Error(t, json.Unmarshal([]byte(data), &earlier), "an earlier build's reading of %s", data)
	earlierSave()
	th, err = s.GetThread(ctx, "k", "t")
	require.NoError(t, err)
	assert.Equal(t, []string{"o1", "o2"}, th.Delivered, "an earlier build's save")
}
