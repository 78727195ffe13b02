package storetest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/internal/textparts"
	"github.com/aapagui/aapagui/store"
)

// PartsText is a long text as a test holds it in parts: escapes, runes of
// every length and a NUL, so that a store that joins or escapes its parts
// wrongly is found out.
var PartsText = strings.Repeat("héllo \"wörld\" 🎉 <a&b>\n\x00 ", 40)

// HoldInParts writes text's parts of about size bytes, named ref, with
// add and returns what a message holds in the text's place: the marker
// and the rest.
func HoldInParts(t *testing.T, text, ref string, size int, add func(store.TextPart) error) string {
	t.Helper()
	b, n := []byte(text), 0
	for len(b) > size {
		k := textparts.Cut(b, size)
		require.NoError(t, add(store.TextPart{Ref: ref, Index: n, Data: b[:k]}), "part %d", n)
		b, n = b[k:], n+1
	}
	return textparts.Marker(ref, n) + string(b)
}

// lastText is the text of the last entry of a history.
func lastText(t *testing.T, hist []store.Entry) string {
	t.Helper()
	require.NotEmpty(t, hist)
	a, ok := hist[len(hist)-1].Message.(*aap.AssistantMessage)
	require.True(t, ok, "the last entry is the assistant's")
	return a.Content.Text
}

// testTextParts checks the long texts held in parts (AddHistoryPart, AddRecordPart):
// every read of a history or a record gives the whole text; the parts are
// the session's or the thread's only, and go with it.
func testTextParts(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	now := time.Now()
	require.NoError(t, s.CreateSession(ctx, &store.Session{ID: "s1", Owner: "alice", CreatedAt: now}, nil, 0))
	held := HoldInParts(t, PartsText, "ref-1", 97, func(p store.TextPart) error {
		return s.AddHistoryPart(ctx, "s1", p)
	})
	entry := store.Entry{Message: &aap.AssistantMessage{Content: aap.TextContent(held)}, AGUIID: "m1"}
	require.NoError(t, s.AppendHistory(ctx, "s1", []store.Entry{entry}))

	hist, err := s.History(ctx, "s1")
	require.NoError(t, err)
	assert.True(t, lastText(t, hist) == PartsText, "History gives the whole text")
	_, hist, err = loadSession(ctx, s, "alice", "s1")
	require.NoError(t, err)
	assert.True(t, lastText(t, hist) == PartsText, "LoadSession gives the whole text")
	{
		_, hist, taken, _, err := s.LockLoadSession(ctx, "alice", "s1", "h1", 0, time.Minute)
		require.NoError(t, err)
		require.True(t, taken)
		assert.True(t, lastText(t, hist) == PartsText, "LockLoadSession gives the whole text")
		require.NoError(t, s.Unlock(ctx, "s1", "h1"))
	}

	// Another session holding the same marker has no such parts: its
	// text is what it holds.
	require.NoError(t, s.CreateSession(ctx, &store.Session{ID: "s2", Owner: "bob", CreatedAt: now}, []store.Entry{entry}, 0))
	hist, err = s.History(ctx, "s2")
	require.NoError(t, err)
	assert.Equal(t, held, lastText(t, hist), "parts are their session's only")

	// A marker naming more parts than were written is left as it is.
	short := textparts.Marker("ref-1", 1000) + "rest"
	require.NoError(t, s.AppendHistory(ctx, "s1", []store.Entry{{Message: &aap.AssistantMessage{Content: aap.TextContent(short)}, AGUIID: "m2"}}))
	hist, err = s.History(ctx, "s1")
	require.NoError(t, err)
	assert.Equal(t, short, lastText(t, hist))

	// The parts go with their session: one created again under its id
	// does not find them.
	require.NoError(t, s.DeleteSession(ctx, "alice", "s1"))
	require.NoError(t, s.CreateSession(ctx, &store.Session{ID: "s1", Owner: "alice", CreatedAt: now}, []store.Entry{entry}, 0))
	hist, err = s.History(ctx, "s1")
	require.NoError(t, err)
	assert.Equal(t, held, lastText(t, hist), "the deleted session's parts are gone")

	testRecordParts(t, s)
}

// testRecordParts is testTextParts of a thread's record, whose parts come
// before the thread's first save.
func testRecordParts(t *testing.T, s store.Store) {
	ctx := context.Background()
	held := HoldInParts(t, PartsText, "ref-2", 64, func(p store.TextPart) error {
		return s.AddRecordPart(ctx, "alice", "t1", p)
	})
	msg, err := json.Marshal(map[string]string{"id": "m1", "role": "assistant", "content": held})
	require.NoError(t, err)
	save := func(owner string) {
		require.NoError(t, s.SaveThread(ctx, &store.Thread{Owner: owner, ID: "t1", SessionID: "sess",
			RecordTail: &store.RecordTail{Messages: []json.RawMessage{msg}}}, ""))
	}
	content := func(owner string) string {
		rec := record(t, s, owner, "t1")
		require.Len(t, rec, 1)
		var m struct{ Content string }
		require.NoError(t, json.Unmarshal(rec[0], &m))
		return m.Content
	}
	save("alice")
	assert.True(t, content("alice") == PartsText, "ThreadRecord gives the whole text")
	save("bob")
	assert.Equal(t, held, content("bob"), "parts are their thread's only")
	require.NoError(t, s.DeleteThread(ctx, "alice", "t1"))
	save("alice")
	assert.Equal(t, held, content("alice"), "the deleted thread's parts are gone")
}
