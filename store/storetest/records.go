package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/store"
)

// testThreadRecords checks the threads' records: the AG-UI messages of
// each thread's conversation, written by the thread's saves from a
// position on, per owner, byte for byte.
func testThreadRecords(t *testing.T, open func(t *testing.T) store.Store) {
	runSteps(t, open, []step{
		{"appended across saves", testRecordAppend},
		{"a tail from the middle replaces the rest", testRecordReplace},
		{"a gap is refused and stores nothing", testRecordGap},
		{"a save without a tail keeps the record", testRecordKept},
		{"save and unlock", testRecordSaveUnlock},
		{"a save tried again", testRecordRetry},
		{"owners are isolated", testRecordOwners},
		{"deleted with the thread", testRecordDelete},
		{"messages byte for byte", testRecordBytes},
		{"unknown threads", testRecordUnknown},
	})
}

// RecordMessages are AG-UI messages as a record test stores them, one per
// id: JSON as a client may send it (keys out of order, spaces, escapes,
// a byte that is not UTF-8), so that a store that reformats them or keeps
// them as text is found out.
func RecordMessages(ids ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(ids))
	for i, id := range ids {
		out[i] = json.RawMessage(fmt.Sprintf("{\"role\":\"user\", \"id\":%q,\n \"content\":\"<%s> caf\\u00e9 \xff\",\"n\":1.50}", id, id))
	}
	return out
}

// record is owner's thread id's record; the test fails if it cannot be
// read.
func record(t *testing.T, s store.ThreadStore, owner, id string) []json.RawMessage {
	t.Helper()
	rec, err := s.ThreadRecord(context.Background(), owner, id)
	require.NoError(t, err, "record of %s/%s", owner, id)
	return rec
}

// withTail is th with a tail of the messages of ids from position from.
func withTail(th *store.Thread, from int, ids ...string) *store.Thread {
	th.RecordTail = &store.RecordTail{From: from, Messages: RecordMessages(ids...)}
	return th
}

// recordLen is the RecordLen the store gives owner's thread id, read
// alone and in a listing.
func recordLen(t *testing.T, s store.ThreadStore, owner, id string) int {
	t.Helper()
	ctx := context.Background()
	got, err := s.GetThread(ctx, owner, id)
	require.NoError(t, err)
	list, err := s.ListThreads(ctx, owner, store.ThreadPage{}, 100)
	require.NoError(t, err)
	for _, l := range list {
		if l.ID == id {
			assert.Equal(t, got.RecordLen, l.RecordLen, "a listing's RecordLen")
		}
	}
	return got.RecordLen
}

// testRecordAppend checks that saves with a tail at the record's end append to it, and set RecordLen.
func testRecordAppend(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	th := withTail(&store.Thread{Owner: "k1", ID: "t1", SessionID: "s1"}, 0, "m1", "m2")
	require.NoError(t, s.SaveThread(ctx, th, ""))
	assert.Equal(t, 2, th.RecordLen, "the save sets RecordLen")
	assert.Equal(t, RecordMessages("m1", "m2"), record(t, s, "k1", "t1"))
	assert.Equal(t, 2, recordLen(t, s, "k1", "t1"))

	th, err := s.GetThread(ctx, "k1", "t1")
	require.NoError(t, err)
	require.NoError(t, s.SaveThread(ctx, withTail(th, th.RecordLen, "m3"), ""))
	require.NoError(t, s.SaveThread(ctx, withTail(th, 3, "m4", "m5"), ""))
	require.NoError(t, s.SaveThread(ctx, withTail(th, 5), ""))
	assert.Equal(t, RecordMessages("m1", "m2", "m3", "m4", "m5"), record(t, s, "k1", "t1"))
	assert.Equal(t, 5, recordLen(t, s, "k1", "t1"))
}

// testRecordReplace checks that a tail from before the record's end (a fork) replaces the messages from there on and drops those after it.
func testRecordReplace(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	th := &store.Thread{Owner: "k1", ID: "t1"}
	require.NoError(t, s.SaveThread(ctx, withTail(th, 0, "m1", "m2", "m3", "m4"), ""))
	require.NoError(t, s.SaveThread(ctx, withTail(th, 2, "x3"), ""))
	assert.Equal(t, RecordMessages("m1", "m2", "x3"), record(t, s, "k1", "t1"), "m3 replaced, m4 dropped")
	assert.Equal(t, 3, recordLen(t, s, "k1", "t1"))

	require.NoError(t, s.SaveThread(ctx, withTail(th, 1, "y2", "y3", "y4", "y5"), ""))
	assert.Equal(t, RecordMessages("m1", "y2", "y3", "y4", "y5"), record(t, s, "k1", "t1"), "a longer tail")
	require.NoError(t, s.SaveThread(ctx, withTail(th, 3), ""))
	assert.Equal(t, RecordMessages("m1", "y2", "y3"), record(t, s, "k1", "t1"), "an empty tail cuts the record")
	assert.Equal(t, 3, recordLen(t, s, "k1", "t1"))
	require.NoError(t, s.SaveThread(ctx, withTail(th, 0), ""))
	assert.Empty(t, record(t, s, "k1", "t1"), "a tail from 0 is the whole record")
	assert.Zero(t, recordLen(t, s, "k1", "t1"))
}

// testRecordGap checks that a tail that would leave a gap (From past the record's end, or negative) or holds a message that is not JSON is refused, and that nothing of its save is stored: not the thread, its time, the record, nor the lock's release.
func testRecordGap(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	require.NoError(t, s.SaveThread(ctx, withTail(&store.Thread{Owner: "k1", ID: "t1", SessionID: "s1"}, 0, "m1", "m2"), ""))
	before, err := s.GetThread(ctx, "k1", "t1")
	require.NoError(t, err)
	ok, _, err := s.LockThread(ctx, "k1", "t1", "h1", time.Minute)
	require.NoError(t, err)
	require.True(t, ok)
	time.Sleep(2 * time.Millisecond) // a save that went through would move UpdatedAt

	refused := map[string]*store.Thread{
		"past the end": withTail(&store.Thread{Owner: "k1", ID: "t1", SessionID: "s2"}, 3, "m4"),
		"negative":     withTail(&store.Thread{Owner: "k1", ID: "t1", SessionID: "s2"}, -1, "m0"),
	}
	for name, th := range refused {
		require.ErrorIs(t, s.SaveThread(ctx, th, "h1"), store.ErrRecordGap, name)
	}
	bad := withTail(&store.Thread{Owner: "k1", ID: "t1", SessionID: "s2"}, 2, "m3")
	bad.RecordTail.Messages = append(bad.RecordTail.Messages, json.RawMessage(`{"id":`))
	require.Error(t, s.SaveThread(ctx, bad, "h1"), "a message that is not JSON")

	after, err := s.GetThread(ctx, "k1", "t1")
	require.NoError(t, err)
	assert.Equal(t, before, after, "the thread as it was, RecordLen and UpdatedAt included")
	assert.Equal(t, RecordMessages("m1", "m2"), record(t, s, "k1", "t1"))
	ok, _, err = s.LockThread(ctx, "k1", "t1", "h2", time.Minute)
	require.NoError(t, err)
	assert.False(t, ok, "the lock is still h1's")

	require.ErrorIs(t, s.SaveThread(ctx, withTail(&store.Thread{Owner: "k1", ID: "new"}, 1, "m2"), ""), store.ErrRecordGap,
		"a new thread's record is empty")
	_, err = s.GetThread(ctx, "k1", "new")
	require.ErrorIs(t, err, store.ErrNotFound, "and the thread is not created")
}

// testRecordKept checks that a save without a tail keeps the record and its stored RecordLen, whatever RecordLen the saved thread holds.
func testRecordKept(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	require.NoError(t, s.SaveThread(ctx, &store.Thread{Owner: "k1", ID: "t1", RecordLen: 7}, ""))
	assert.Zero(t, recordLen(t, s, "k1", "t1"), "a new thread has no record, whatever it says")
	assert.Empty(t, record(t, s, "k1", "t1"))

	stale, err := s.GetThread(ctx, "k1", "t1")
	require.NoError(t, err)
	require.NoError(t, s.SaveThread(ctx, withTail(&store.Thread{Owner: "k1", ID: "t1"}, 0, "m1", "m2", "m3"), ""))
	for _, n := range []int{0, 1, 9} {
		stale.RecordLen, stale.SessionID = n, fmt.Sprint("s", n)
		require.NoError(t, s.SaveThread(ctx, stale, ""))
		got, err := s.GetThread(ctx, "k1", "t1")
		require.NoError(t, err)
		assert.Equal(t, stale.SessionID, got.SessionID, "the thread saved")
		assert.Equal(t, 3, got.RecordLen, "RecordLen %d not stored", n)
		assert.Equal(t, RecordMessages("m1", "m2", "m3"), record(t, s, "k1", "t1"))
	}
	require.NoError(t, s.SaveThread(ctx, withTail(stale, 3, "m4"), ""), "the stored RecordLen is the one a tail continues")
	assert.Equal(t, 4, recordLen(t, s, "k1", "t1"))
}

// testRecordSaveUnlock checks that SaveThread with a holder writes the record and frees the holder's lock in one write.
func testRecordSaveUnlock(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	ok, _, err := s.LockThread(ctx, "k1", "t1", "h1", time.Minute)
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, s.SaveThread(ctx, withTail(&store.Thread{Owner: "k1", ID: "t1"}, 0, "m1"), "h1"))
	assert.Equal(t, RecordMessages("m1"), record(t, s, "k1", "t1"))
	ok, _, err = s.LockThread(ctx, "k1", "t1", "h2", time.Minute)
	require.NoError(t, err)
	assert.True(t, ok, "the lock is free after the save")

	require.NoError(t, s.SaveThread(ctx, withTail(&store.Thread{Owner: "k1", ID: "t1"}, 1, "m2"), "h2"))
	assert.Equal(t, RecordMessages("m1", "m2"), record(t, s, "k1", "t1"))
	assert.Equal(t, 2, recordLen(t, s, "k1", "t1"))
}

// testRecordRetry checks that a save tried again (its answer lost) writes the same record, as an append and as a fork.
func testRecordRetry(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	th := &store.Thread{Owner: "k1", ID: "t1"}
	require.NoError(t, s.SaveThread(ctx, withTail(th, 0, "m1", "m2"), ""))
	appended := withTail(&store.Thread{Owner: "k1", ID: "t1"}, 2, "m3", "m4")
	fork := withTail(&store.Thread{Owner: "k1", ID: "t1"}, 1, "x2")
	for _, tt := range []struct {
		th   *store.Thread
		want []json.RawMessage
	}{
		{appended, RecordMessages("m1", "m2", "m3", "m4")},
		{fork, RecordMessages("m1", "x2")},
	} {
		for try := range 2 {
			require.NoError(t, s.SaveThread(ctx, tt.th, ""), "try %d", try)
			assert.Equal(t, tt.want, record(t, s, "k1", "t1"), "try %d", try)
			assert.Equal(t, len(tt.want), recordLen(t, s, "k1", "t1"), "try %d", try)
		}
	}
}

// testRecordOwners checks that the same thread id of two owners has two records, each checked against its own.
func testRecordOwners(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	require.NoError(t, s.SaveThread(ctx, withTail(&store.Thread{Owner: "k1", ID: "same"}, 0, "a1", "a2", "a3"), ""))
	require.NoError(t, s.SaveThread(ctx, withTail(&store.Thread{Owner: "k2", ID: "same"}, 0, "b1"), ""))
	require.ErrorIs(t, s.SaveThread(ctx, withTail(&store.Thread{Owner: "k2", ID: "same"}, 3, "b4"), ""), store.ErrRecordGap,
		"k1's record is not k2's")
	require.NoError(t, s.SaveThread(ctx, withTail(&store.Thread{Owner: "k2", ID: "same"}, 0, "b0"), ""))
	assert.Equal(t, RecordMessages("a1", "a2", "a3"), record(t, s, "k1", "same"))
	assert.Equal(t, RecordMessages("b0"), record(t, s, "k2", "same"))
	assert.Equal(t, 3, recordLen(t, s, "k1", "same"))
	assert.Equal(t, 1, recordLen(t, s, "k2", "same"))
	_, err := s.ThreadRecord(ctx, "k3", "same")
	require.ErrorIs(t, err, store.ErrNotFound, "another owner's thread")
}

// testRecordDelete checks that DeleteThread drops the record with the thread: a thread saved again under its id starts with none.
func testRecordDelete(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	require.NoError(t, s.SaveThread(ctx, withTail(&store.Thread{Owner: "k1", ID: "t1"}, 0, "m1", "m2"), ""))
	require.NoError(t, s.SaveThread(ctx, withTail(&store.Thread{Owner: "k2", ID: "t1"}, 0, "b1"), ""))
	require.NoError(t, s.DeleteThread(ctx, "k1", "t1"))
	_, err := s.ThreadRecord(ctx, "k1", "t1")
	require.ErrorIs(t, err, store.ErrNotFound)
	assert.Equal(t, RecordMessages("b1"), record(t, s, "k2", "t1"), "another owner's record stays")

	require.ErrorIs(t, s.SaveThread(ctx, withTail(&store.Thread{Owner: "k1", ID: "t1"}, 2, "m3"), ""), store.ErrRecordGap,
		"the deleted record is not continued")
	require.NoError(t, s.SaveThread(ctx, &store.Thread{Owner: "k1", ID: "t1"}, ""))
	assert.Empty(t, record(t, s, "k1", "t1"), "nothing left of the deleted record")
	assert.Zero(t, recordLen(t, s, "k1", "t1"))
	require.NoError(t, s.SaveThread(ctx, withTail(&store.Thread{Owner: "k1", ID: "t1"}, 0, "n1"), ""))
	assert.Equal(t, RecordMessages("n1"), record(t, s, "k1", "t1"))
}

// testRecordBytes checks that messages come back byte for byte, large ones too, and that neither the saved nor the returned bytes are shared with the store.
func testRecordBytes(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	msgs := []json.RawMessage{
		json.RawMessage(`{"z":1,"a":[true,null,1e3,-0.0],"s":"\u0000\n\"<&>"}`),
		json.RawMessage(" \t{ \"spaced\" : [ ] }\n"),
		json.RawMessage(`"a string"`),
		json.RawMessage(`{"content":"` + strings.Repeat("é\xfe", 100_000) + `"}`),
		json.RawMessage(`{}`),
	}
	sent := make([]json.RawMessage, len(msgs))
	for i, m := range msgs {
		sent[i] = append(json.RawMessage(nil), m...)
	}
	require.NoError(t, s.SaveThread(ctx, &store.Thread{Owner: "k1", ID: "t1", RecordTail: &store.RecordTail{Messages: sent}}, ""))
	sent[0][1] = 'y' // the caller's bytes, changed after the save
	got := record(t, s, "k1", "t1")
	require.Len(t, got, len(msgs))
	for i := range msgs {
		assert.Equal(t, string(msgs[i]), string(got[i]), "message %d", i)
	}
	got[0][1] = 'y'
	assert.Equal(t, string(msgs[0]), string(record(t, s, "k1", "t1")[0]), "a read's bytes are the caller's own")
}

// testRecordUnknown checks that ThreadRecord of a thread never saved is ErrNotFound, even where a lock or another owner's thread of the id exists.
func testRecordUnknown(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	_, err := s.ThreadRecord(ctx, "k1", "t1")
	require.ErrorIs(t, err, store.ErrNotFound)
	ok, _, err := s.LockThread(ctx, "k1", "locked", "h1", time.Minute)
	require.NoError(t, err)
	require.True(t, ok)
	_, err = s.ThreadRecord(ctx, "k1", "locked")
	require.ErrorIs(t, err, store.ErrNotFound, "a locked thread never saved")
	require.NoError(t, s.SaveThread(ctx, withTail(&store.Thread{Owner: "k2", ID: "t1"}, 0, "m1"), ""))
	for _, key := range [][2]string{{"k1", "t1"}, {"", "t1"}, {"k2", ""}, {"k2", "t1\x00"}, {"k2\xff", "t1"}} {
		_, err = s.ThreadRecord(ctx, key[0], key[1])
		require.ErrorIs(t, err, store.ErrNotFound, "%q", key)
	}
}
