package transfer_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/internal/testkit/pgtest"
	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/store/postgres"
	"github.com/aapagui/aapagui/store/sqlite"
	"github.com/aapagui/aapagui/store/storetest"
	"github.com/aapagui/aapagui/store/transfer"
)

// Everything in a SQLite store reads the same from PostgreSQL after Copy:
// sessions of every owner (listing order and seq included), their
// histories, threads with their records; a second copy adds nothing.
func TestCopySQLiteToPostgres(t *testing.T) {
	ctx := context.Background()
	src := openFile(t, filepath.Join(t.TempDir(), "src.db"))
	created := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	require.NoError(t, src.CreateSession(ctx, storetest.RichSession("s1", "alice", created), storetest.AllMessages(), 0))
	require.NoError(t, src.CreateSession(ctx, storetest.Session("gone", "alice"), storetest.Users("x"), 0))
	require.NoError(t, src.CreateSession(ctx, storetest.Session("s2", "bob"), storetest.Users("b1", "b2"), 0))
	require.NoError(t, src.CreateSession(ctx, storetest.Session("s3", "alice"), nil, 0))
	require.NoError(t, src.DeleteSession(ctx, "alice", "gone")) // a gap in seq
	ok, _, err := src.Lock(ctx, "s1", "holder", time.Hour)
	require.NoError(t, err)
	require.True(t, ok)
	th := &store.Thread{Owner: "k1", ID: "t1", Agent: "demo", SessionID: "sess_1", Delivered: []string{"m1", "m2"},
		Interrupts: []types.Interrupt{{ID: "perm-c", Reason: "tool_call", ToolCallID: "c"}}, RunID: "r1"}
	require.NoError(t, src.SaveThread(ctx, th, ""))
	th.RecordTail = &store.RecordTail{Messages: storetest.RecordMessages("m1", "m2", "m3")}
	require.NoError(t, src.SaveThread(ctx, th, ""))
	th.RecordTail = &store.RecordTail{From: 2, Messages: storetest.RecordMessages("x3", "x4")}
	require.NoError(t, src.SaveThread(ctx, th, ""))
	// A long text held in parts, in a history and in a record: copied
	// whole.
	held := storetest.HoldInParts(t, storetest.PartsText, "ref-1", 100, func(p store.TextPart) error {
		return src.AddHistoryPart(ctx, "s3", p)
	})
	require.NoError(t, src.AppendHistory(ctx, "s3", []store.Entry{{Message: &aap.AssistantMessage{Content: aap.TextContent(held)}, AGUIID: "long"}}))
	held = storetest.HoldInParts(t, storetest.PartsText, "ref-2", 100, func(p store.TextPart) error {
		return src.AddRecordPart(ctx, "k2", "t1", p)
	})
	long, err := json.Marshal(map[string]string{"id": "long", "role": "assistant", "content": held})
	require.NoError(t, err)
	require.NoError(t, src.SaveThread(ctx, &store.Thread{Owner: "k2", ID: "t1", SessionID: "sess_2",
		RecordTail: &store.RecordTail{Messages: []json.RawMessage{long}}}, ""))

	dst := openPostgresDSN(t, pgtest.Schema(t))
	rep, err := transfer.Copy(ctx, dst, src)
	require.NoError(t, err)
	assert.Equal(t, transfer.Report{Sessions: 3, Messages: len(storetest.AllMessages()) + 3, Threads: 2, RecordMessages: 5}, rep)

	for _, owner := range []string{"alice", "bob", "nobody"} {
		want, err := src.ListSessions(ctx, owner, 0, 100)
		require.NoError(t, err)
		got, err := dst.ListSessions(ctx, owner, 0, 100)
		require.NoError(t, err)
		assert.Equal(t, want, got, "owner %s: sessions, seq and order", owner)
		for _, s := range want {
			assert.Equal(t, storetest.History(t, src, s.ID), storetest.History(t, dst, s.ID), "history of %s", s.ID)
		}
		if owner == "alice" {
			hist := storetest.History(t, dst, "s3")
			require.Len(t, hist, 1)
			assert.True(t, hist[0].Message.(*aap.AssistantMessage).Content.Text == storetest.PartsText, "the long text, whole")
		}
	}
	for _, key := range [][2]string{{"k1", "t1"}, {"k2", "t1"}} {
		want, err := src.GetThread(ctx, key[0], key[1])
		require.NoError(t, err)
		got, err := dst.GetThread(ctx, key[0], key[1])
		require.NoError(t, err)
		assert.Equal(t, want, got, "the thread and its RecordLen")
		wantRec, err := src.ThreadRecord(ctx, key[0], key[1])
		require.NoError(t, err)
		gotRec, err := dst.ThreadRecord(ctx, key[0], key[1])
		require.NoError(t, err)
		assert.Equal(t, wantRec, gotRec, "the record of %s/%s, byte for byte", key[0], key[1])
	}
	rec, err := dst.ThreadRecord(ctx, "k1", "t1")
	require.NoError(t, err)
	assert.Equal(t, storetest.RecordMessages("m1", "m2", "x3", "x4"), rec)
	k1, err := dst.GetThread(ctx, "k1", "t1")
	require.NoError(t, err)
	k1.RecordTail = &store.RecordTail{From: k1.RecordLen, Messages: storetest.RecordMessages("m5")}
	require.NoError(t, dst.SaveThread(ctx, k1, ""), "a copied record goes on")
	assert.Equal(t, 5, k1.RecordLen)
	l, err := store.TakeSession(ctx, dst, "s1", store.LeaseOptions{})
	require.NoError(t, err, "locks are not copied")
	l.Release()

	// New sessions come after the copied ones; appends go on.
	fresh := storetest.Session("s4", "alice")
	require.NoError(t, dst.CreateSession(ctx, fresh, nil, 0))
	s3, err := dst.GetSession(ctx, "alice", "s3")
	require.NoError(t, err)
	assert.Greater(t, fresh.Seq, s3.Seq)
	require.NoError(t, dst.AppendHistory(ctx, "s2", storetest.Users("b3")))
	assert.Equal(t, storetest.Users("b1", "b2", "b3"), storetest.History(t, dst, "s2"))

	// Again: everything is there already.
	rep, err = transfer.Copy(ctx, dst, src)
	require.NoError(t, err)
	assert.Equal(t, transfer.Report{SkippedSessions: 3, SkippedThreads: 2}, rep)
	rec, err = dst.ThreadRecord(ctx, "k1", "t1")
	require.NoError(t, err)
	assert.Equal(t, storetest.RecordMessages("m1", "m2", "x3", "x4", "m5"), rec, "a thread already there keeps its record")
	assert.Equal(t, storetest.Users("b1", "b2", "b3"), storetest.History(t, dst, "s2"), "nothing copied twice")
}

func openFile(t *testing.T, path string) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, s.Close()) })
	return s
}

func openPostgresDSN(t *testing.T, dsn string) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(context.Background(), dsn)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, s.Close()) })
	return s
}
