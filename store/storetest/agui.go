package storetest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/store"
)

// testEntryAGUI checks that Entry.AGUI (the AG-UI extras of a message:
// encrypted reasoning) is kept byte for byte by every write of the store,
// and an entry without it reads back with none.
func testEntryAGUI(t *testing.T, open func(*testing.T) store.Store) {
	s := open(t)
	ctx := context.Background()
	extras := json.RawMessage(`{"encryptedValue":"sig<&>==","toolCalls":{"call-1":"gAAA"}}`)
	with := store.Entry{AGUIID: "a-1", Message: &aap.AssistantMessage{Content: aap.TextContent("hi")}, AGUI: extras}
	plain := User("u-1", "hello")
	require.NoError(t, s.CreateSession(ctx, Session("s1", ""), []store.Entry{plain, with}, 0))
	h := History(t, s, "s1")
	require.Len(t, h, 2)
	require.Nil(t, h[0].AGUI)
	require.JSONEq(t, string(extras), string(h[1].AGUI))
	require.Equal(t, string(extras), string(h[1].AGUI), "the bytes as written")

	// Every kind of write keeps it.
	next := store.Entry{AGUIID: "a-2", Message: &aap.AssistantMessage{Content: aap.TextContent("more")}, AGUI: json.RawMessage(`{"encryptedValue":"x"}`)}
	require.NoError(t, s.AppendHistory(ctx, "s1", []store.Entry{next}))
	require.Equal(t, `{"encryptedValue":"x"}`, string(History(t, s, "s1")[2].AGUI))
	next.AGUI = json.RawMessage(`{"encryptedValue":"y"}`)
	require.NoError(t, s.ReplaceTail(ctx, "s1", 2, []store.Entry{next}))
	require.Equal(t, `{"encryptedValue":"y"}`, string(History(t, s, "s1")[2].AGUI))
	require.NoError(t, s.ReplaceTail(ctx, "s1", 0, []store.Entry{with}))
	h = History(t, s, "s1")
	require.Len(t, h, 1)
	require.Equal(t, string(extras), string(h[0].AGUI))
	sess, err := s.GetSession(ctx, "", "s1")
	require.NoError(t, err)
	require.NoError(t, s.SaveSession(ctx, sess, []store.Entry{next}, ""))
	_, h, err = loadSession(ctx, s, "", "s1")
	require.NoError(t, err)
	require.Equal(t, `{"encryptedValue":"y"}`, string(h[1].AGUI))
}

// loadSession reads owner's session id and its history as a turn's start
// does (LockLoadSession), and frees the lock it took.
func loadSession(ctx context.Context, s store.Sessions, owner, id string) (*store.Session, []store.Entry, error) {
	const holder = "storetest-load"
	sess, hist, ok, _, err := s.LockLoadSession(ctx, owner, id, holder, 0, time.Minute)
	if err != nil {
		return nil, nil, err
	}
	if ok {
		_ = s.Unlock(ctx, id, holder)
	}
	return sess, hist, nil
}
