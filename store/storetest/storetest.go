package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/store"
)

// Run checks the rules every store.Store follows; open returns a new,
// empty store (closed by the test's cleanup). Each driver's tests run it.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	runSteps(t, open, []step{
		{"threads", testThreads},
		{"thread records", testThreadRecords},
		{"long texts in parts", testTextParts},
		{"leases", testLeases},
		{"limits", testLimits},
		{"AG-UI extras", testEntryAGUI},
		{"run logs", testRunLogs},
		{"session round trip", testSessionRoundTrip},
		{"nil and empty survive", testNilAndEmpty},
		{"create with a taken id", testCreateTaken},
		{"get", testGet},
		{"update", testUpdate},
		{"list", testList},
		{"every page", testListPages},
		{"delete", testDelete},
		{"history round trip", testHistoryRoundTrip},
		{"load session", testLoadSession},
		{"append and replace", testAppendAndReplace},
		{"replace the tail", testReplaceTail},
		{"history version", testHistoryVersion},
		{"history of a missing session", testHistoryOfMissing},
		{"ids no session can have", testImpossibleIDs},
		{"entries without a message are refused", testEntriesWithoutMessage},
		{"lock", testLock},
		{"save session", testSaveSession},
		{"save session and unlock", testSaveSessionUnlock},
		{"lock race", testLockRace},
		{"copies", testCopies},
		{"concurrent writers", testConcurrentWriters},
		{"ping and close", testPingAndClose},
	})
}

// step is a named subtest of the suite: test(t, open).
type step struct {
	name string
	test func(t *testing.T, open func(t *testing.T) store.Store)
}

// runSteps runs each of steps as a subtest, in order.
func runSteps(t *testing.T, open func(t *testing.T) store.Store, steps []step) {
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) { s.test(t, open) })
	}
}

// testSessionRoundTrip checks that a created session reads back whole: times to the millisecond in UTC, raw JSON byte for byte.
func testSessionRoundTrip(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	created := time.Date(2026, 7, 1, 14, 30, 45, 123456789, time.FixedZone("CEST", 2*3600))
	in := RichSession("s1", "alice", created)
	require.NoError(t, s.CreateSession(ctx, in, nil, 0))
	assert.Positive(t, in.Seq, "CreateSession assigns Seq")

	got, err := s.GetSession(ctx, "alice", "s1")
	require.NoError(t, err)
	want := RichSession("s1", "alice", created.Truncate(time.Millisecond).UTC())
	want.Seq, want.HistoryVersion = in.Seq, 1
	assert.Equal(t, want, got)
	assert.True(t, got.CreatedAt.Equal(created.Truncate(time.Millisecond)), "CreatedAt to the millisecond, got %v", got.CreatedAt)
	assert.Equal(t, time.UTC, got.CreatedAt.Location())
	// Raw JSON comes back byte for byte: no HTML escaping, no key order.
	assert.Equal(t, `{"b":1,"a":"<&>"}`, string(got.Tools[0].Parameters))
	assert.Equal(t, `{"z":[1,2],"a":"<b>&"}`, string(got.State))
	assert.Equal(t, "sk-secret", got.Agent.Options["api_key"], "secret options are stored in clear")
}

// testNilAndEmpty checks that empty slices and maps read back empty and absent ones nil.
func testNilAndEmpty(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	empty := &store.Session{ID: "empty", Agent: aap.AgentConfig{
		Name: "a", Tools: []aap.ServerToolRef{}, Options: map[string]string{},
	}, Tools: []aap.ToolSpec{}}
	bare := &store.Session{ID: "bare", Agent: aap.AgentConfig{Name: "a"}}
	require.NoError(t, s.CreateSession(ctx, empty, nil, 0))
	require.NoError(t, s.CreateSession(ctx, bare, nil, 0))

	got, err := s.GetSession(ctx, "", "empty")
	require.NoError(t, err)
	assert.NotNil(t, got.Agent.Tools, "empty server tools (all disabled) stay empty, not nil")
	assert.Empty(t, got.Agent.Tools)
	assert.NotNil(t, got.Agent.Options)
	assert.NotNil(t, got.Tools)
	got, err = s.GetSession(ctx, "", "bare")
	require.NoError(t, err)
	assert.Nil(t, got.Agent.Tools, "tools not given stay nil")
	assert.Nil(t, got.Agent.Options)
	assert.Nil(t, got.Tools)
	assert.Nil(t, got.State)
	assert.Nil(t, got.Interrupts)
}

// testCreateTaken checks that creating a session with a taken id is refused and leaves the first one untouched.
func testCreateTaken(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	require.NoError(t, s.CreateSession(ctx, Session("s1", "alice"), []store.Entry{User("u1", "first")}, 0))
	tests := []struct{ name, owner string }{
		{name: "same owner", owner: "alice"},
		{name: "other owner", owner: "bob"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dup := Session("s1", tt.owner)
			dup.Agent.Name = "other"
			err := s.CreateSession(ctx, dup, []store.Entry{User("u2", "second")}, 0)
			require.ErrorIs(t, err, store.ErrExists)
			got, err := s.GetSession(ctx, "alice", "s1")
			require.NoError(t, err)
			assert.Equal(t, "agent", got.Agent.Name, "the first session is untouched")
			assert.Equal(t, []store.Entry{User("u1", "first")}, History(t, s, "s1"))
		})
	}
}

// testGet checks that GetSession finds a session for its owner only.
func testGet(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	require.NoError(t, s.CreateSession(ctx, Session("s1", "alice"), nil, 0))
	tests := []struct {
		name, owner, id string
		wantErr         error
	}{
		{name: "owner", owner: "alice", id: "s1"},
		{name: "other owner", owner: "bob", id: "s1", wantErr: store.ErrNotFound},
		{name: "no owner", owner: "", id: "s1", wantErr: store.ErrNotFound},
		{name: "missing", owner: "alice", id: "s2", wantErr: store.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.GetSession(ctx, tt.owner, tt.id)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				assert.Nil(t, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.id, got.ID)
		})
	}
}

// testUpdate checks that SaveSession replaces a session's data but not its Seq and CreatedAt, for its owner only.
func testUpdate(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	created := time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC)
	orig := RichSession("s1", "alice", created)
	require.NoError(t, s.CreateSession(ctx, orig, nil, 0))

	upd := &store.Session{
		ID: "s1", Owner: "alice",
		Agent: aap.AgentConfig{Name: "agent", Options: map[string]string{"model": "big"}},
		Tools: []aap.ToolSpec{{Name: "t2", Description: "d", Parameters: json.RawMessage(`{"type":"object"}`)}},
		State: json.RawMessage(`{"n":2}`),
		// Seq and CreatedAt are the store's: an update does not move them.
		Seq: 999, CreatedAt: created.Add(time.Hour),
	}
	require.NoError(t, s.SaveSession(ctx, upd, nil, ""))
	got, err := s.GetSession(ctx, "alice", "s1")
	require.NoError(t, err)
	assert.Equal(t, upd.Agent, got.Agent)
	assert.Equal(t, upd.Tools, got.Tools)
	assert.Equal(t, `{"n":2}`, string(got.State))
	assert.Nil(t, got.Interrupts, "cleared interrupts stay cleared")
	assert.Equal(t, orig.Seq, got.Seq)
	assert.True(t, got.CreatedAt.Equal(created), "CreatedAt %v", got.CreatedAt)

	tests := []struct{ name, owner, id string }{
		{name: "other owner", owner: "bob", id: "s1"},
		{name: "missing", owner: "alice", id: "s2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := Session(tt.id, tt.owner)
			bad.Agent.Name = "hijack"
			require.ErrorIs(t, s.SaveSession(ctx, bad, nil, ""), store.ErrNotFound)
			got, err := s.GetSession(ctx, "alice", "s1")
			require.NoError(t, err)
			assert.Equal(t, "agent", got.Agent.Name)
		})
	}
}

// testList checks that ListSessions lists an owner's sessions oldest first, paged by Seq, which is never reused.
func testList(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	var alice []string
	for i := range 5 {
		id := fmt.Sprintf("a%d", i)
		alice = append(alice, id)
		require.NoError(t, s.CreateSession(ctx, Session(id, "alice"), nil, 0))
		if i%2 == 0 {
			require.NoError(t, s.CreateSession(ctx, Session(fmt.Sprintf("b%d", i), "bob"), nil, 0))
		}
	}

	all, err := s.ListSessions(ctx, "alice", 0, 100)
	require.NoError(t, err)
	assert.Equal(t, alice, IDs(all), "oldest first, only alice's")
	for i := 1; i < len(all); i++ {
		assert.Greater(t, all[i].Seq, all[i-1].Seq)
	}
	assert.Equal(t, "agent", all[0].Agent.Name, "listed sessions are whole")

	var paged []string
	after := int64(0)
	for page := 0; ; page++ {
		require.Less(t, page, 10, "paging does not end")
		got, err := s.ListSessions(ctx, "alice", after, 2)
		require.NoError(t, err)
		require.LessOrEqual(t, len(got), 2)
		if len(got) == 0 {
			break
		}
		paged = append(paged, IDs(got)...)
		after = got[len(got)-1].Seq
	}
	assert.Equal(t, alice, paged)

	tests := []struct {
		name  string
		owner string
		after int64
		limit int
		want  []string
	}{
		{name: "other owner", owner: "bob", limit: 10, want: []string{"b0", "b2", "b4"}},
		{name: "no owner", owner: "", limit: 10},
		{name: "after the last", owner: "alice", after: all[4].Seq, limit: 10},
		{name: "after the middle", owner: "alice", after: all[2].Seq, limit: 10, want: alice[3:]},
		{name: "limit 1", owner: "alice", limit: 1, want: alice[:1]},
		{name: "limit 0", owner: "alice", limit: 0},
		{name: "negative limit", owner: "alice", limit: -1},
		{name: "negative after", owner: "alice", after: -5, limit: 2, want: alice[:2]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.ListSessions(ctx, tt.owner, tt.after, tt.limit)
			require.NoError(t, err)
			assert.Equal(t, tt.want, IDs(got))
		})
	}

	t.Run("seq is never reused", func(t *testing.T) {
		last := all[len(all)-1]
		require.NoError(t, s.DeleteSession(ctx, "alice", last.ID))
		again := Session("a-new", "alice")
		require.NoError(t, s.CreateSession(ctx, again, nil, 0))
		assert.Greater(t, again.Seq, last.Seq, "a cursor past a deleted session must not skip a new one")
	})
}

// testDelete checks that DeleteSession removes an owner's session with its history, and the id can be taken again.
func testDelete(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	require.NoError(t, s.CreateSession(ctx, Session("s1", "alice"), []store.Entry{User("u1", "hi")}, 0))
	require.NoError(t, s.CreateSession(ctx, Session("s2", "alice"), []store.Entry{User("u2", "other")}, 0))

	require.ErrorIs(t, s.DeleteSession(ctx, "bob", "s1"), store.ErrNotFound, "other owner")
	_, err := s.GetSession(ctx, "alice", "s1")
	require.NoError(t, err, "still there after another owner's delete")

	require.NoError(t, s.DeleteSession(ctx, "alice", "s1"))
	_, err = s.GetSession(ctx, "alice", "s1")
	require.ErrorIs(t, err, store.ErrNotFound)
	_, err = s.History(ctx, "s1")
	require.ErrorIs(t, err, store.ErrNotFound)
	require.ErrorIs(t, s.AppendHistory(ctx, "s1", []store.Entry{User("u3", "x")}), store.ErrNotFound)
	_, _, err = s.Lock(ctx, "s1", "h", time.Minute)
	require.ErrorIs(t, err, store.ErrNotFound)
	require.ErrorIs(t, s.DeleteSession(ctx, "alice", "s1"), store.ErrNotFound, "twice")
	assert.Equal(t, []store.Entry{User("u2", "other")}, History(t, s, "s2"), "other sessions keep their history")

	// The id can be taken again, and the old history is gone with it.
	require.NoError(t, s.CreateSession(ctx, Session("s1", "bob"), nil, 0))
	assert.Empty(t, History(t, s, "s1"))
}

// testHistoryRoundTrip checks that every kind of message reads back from the history as written.
func testHistoryRoundTrip(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	seed := []store.Entry{
		{AGUIID: "sys-1", Message: &aap.SystemMessage{Content: "Be <brief> & kind"}},
		{AGUIID: "u-1", Message: aap.UserText("hello")},
	}
	more := AllMessages()
	require.NoError(t, s.CreateSession(ctx, Session("s1", ""), seed, 0))
	require.NoError(t, s.AppendHistory(ctx, "s1", more))

	got := History(t, s, "s1")
	assert.Equal(t, append(append([]store.Entry{}, seed...), more...), got)
	tu := got[4].Message.(*aap.AssistantMessage).Content.Blocks[1].(*aap.ToolUseBlock)
	assert.Equal(t, `{"z":1,"a":9007199254740993}`, string(tu.Input), "tool input kept byte for byte")
	tu = got[4].Message.(*aap.AssistantMessage).Content.Blocks[3].(*aap.ToolUseBlock)
	assert.Equal(t, `{"q":"<a&b>"}`, string(tu.Input), "no HTML escaping")
}

// testLoadSession checks that store.LoadSession gives what GetSession and History give, for the owner only.
func testLoadSession(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	// store.LoadSession (one round trip on PostgreSQL) gives what
	// GetSession and History give, and hides other owners' sessions.
	s := open(t)
	created := time.Date(2026, 7, 1, 14, 30, 45, 0, time.UTC)
	require.NoError(t, s.CreateSession(ctx, RichSession("s1", "alice", created), Users("u-1"), 0))
	require.NoError(t, s.AppendHistory(ctx, "s1", AllMessages()))
	require.NoError(t, s.CreateSession(ctx, Session("empty", "alice"), nil, 0))

	got, hist, err := loadSession(ctx, s, "alice", "s1")
	require.NoError(t, err)
	want, err := s.GetSession(ctx, "alice", "s1")
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.Equal(t, History(t, s, "s1"), hist)
	assert.Len(t, hist, 1+len(AllMessages()))

	_, hist, err = loadSession(ctx, s, "alice", "empty")
	require.NoError(t, err)
	assert.Empty(t, hist)
	_, _, err = loadSession(ctx, s, "bob", "s1")
	assert.ErrorIs(t, err, store.ErrNotFound, "another owner's session")
	_, _, err = loadSession(ctx, s, "alice", "nope")
	assert.ErrorIs(t, err, store.ErrNotFound)
}

// testAppendAndReplace checks AppendHistory and ReplaceTail step by step.
func testAppendAndReplace(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	require.NoError(t, s.CreateSession(ctx, Session("s1", ""), nil, 0))
	assert.Empty(t, History(t, s, "s1"), "no seed, no history")

	steps := []struct {
		name    string
		replace bool
		add     []store.Entry
		want    []string
	}{
		{name: "append three", add: Users("1", "2", "3"), want: []string{"1", "2", "3"}},
		{name: "append two", add: Users("4", "5"), want: []string{"1", "2", "3", "4", "5"}},
		{name: "append none", add: nil, want: []string{"1", "2", "3", "4", "5"}},
		{name: "replace", replace: true, add: Users("x", "y"), want: []string{"x", "y"}},
		{name: "append after replace", add: Users("z"), want: []string{"x", "y", "z"}},
		{name: "replace with nothing", replace: true, add: nil, want: nil},
		{name: "append to emptied", add: Users("again"), want: []string{"again"}},
	}
	for _, st := range steps {
		if st.replace {
			require.NoError(t, s.ReplaceTail(ctx, "s1", 0, st.add), st.name)
		} else {
			require.NoError(t, s.AppendHistory(ctx, "s1", st.add), st.name)
		}
		var got []string
		for _, e := range History(t, s, "s1") {
			got = append(got, e.AGUIID)
		}
		assert.Equal(t, st.want, got, st.name)
	}
}

// testReplaceTail checks that ReplaceTail replaces the history from an index on, and refuses one past its end.
func testReplaceTail(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	require.NoError(t, s.CreateSession(ctx, Session("s1", ""), Users("1", "2"), 0))
	steps := []struct {
		name string
		from int
		add  []store.Entry
		want []string
	}{
		{"a draft after the history", 2, Users("d1"), []string{"1", "2", "d1"}},
		{"the draft again, longer", 2, Users("a", "d2"), []string{"1", "2", "a", "d2"}},
		{"the draft taken out", 2, Users("a"), []string{"1", "2", "a"}},
		{"nothing after the end", 3, nil, []string{"1", "2", "a"}},
		{"from the start", 0, Users("x"), []string{"x"}},
	}
	for _, st := range steps {
		require.NoError(t, s.ReplaceTail(ctx, "s1", st.from, st.add), st.name)
		var got []string
		for _, e := range History(t, s, "s1") {
			got = append(got, e.AGUIID)
		}
		assert.Equal(t, st.want, got, st.name)
	}
	require.NoError(t, s.AppendHistory(ctx, "s1", Users("y")))
	assert.Len(t, History(t, s, "s1"), 2, "appends go after the new tail")
	assert.ErrorIs(t, s.ReplaceTail(ctx, "s1", 3, Users("z")), store.ErrShortHistory)
	assert.Len(t, History(t, s, "s1"), 2, "a refused tail changes nothing")
	assert.ErrorIs(t, s.ReplaceTail(ctx, "missing", 0, Users("z")), store.ErrNotFound)
}

// testHistoryVersion checks that Session.HistoryVersion counts the
// history's writes that succeeded, one each, whatever they wrote, and
// that TakeAndLoadSession leaves out a history its caller knows.
func testHistoryVersion(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	sess := Session("s1", "alice")
	require.NoError(t, s.CreateSession(ctx, sess, Users("1"), 0))
	version := func() int64 {
		got, err := s.GetSession(ctx, "alice", "s1")
		require.NoError(t, err)
		return got.HistoryVersion
	}
	assert.Equal(t, int64(1), sess.HistoryVersion, "set by CreateSession")
	assert.Equal(t, int64(1), version(), "a new session, its seed stored")
	writes := []struct {
		name  string
		write func() error
		adds  int64
	}{
		{"append", func() error { return s.AppendHistory(ctx, "s1", Users("2")) }, 1},
		{"append nothing", func() error { return s.AppendHistory(ctx, "s1", nil) }, 1},
		{"replace the tail", func() error { return s.ReplaceTail(ctx, "s1", 1, Users("d")) }, 1},
		{"replace the tail with the same", func() error { return s.ReplaceTail(ctx, "s1", 1, Users("d")) }, 1},
		{"replace", func() error { return s.ReplaceTail(ctx, "s1", 0, Users("x", "y")) }, 1},
		{"save the session", func() error { return s.SaveSession(ctx, sess, Users("z"), "") }, 1},
		{"save the session alone", func() error { return s.SaveSession(ctx, sess, nil, "") }, 1},
		{"save and unlock", func() error { return s.SaveSession(ctx, sess, Users("w"), "h") }, 1},
		{"lock", func() error { _, _, err := s.Lock(ctx, "s1", "h", time.Minute); return err }, 0},
		{"unlock", func() error { return s.Unlock(ctx, "s1", "h") }, 0},
	}
	for _, w := range writes {
		before := version()
		require.NoError(t, w.write(), w.name)
		assert.Equal(t, before+w.adds, version(), w.name)
	}
	before := version()
	assert.ErrorIs(t, s.ReplaceTail(ctx, "s1", 99, Users("q")), store.ErrShortHistory)
	assert.Equal(t, before, version(), "a refused write counts nothing")

	list, err := s.ListSessions(ctx, "alice", 0, 10)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, before, list[0].HistoryVersion, "listed")
	loaded, _, err := loadSession(ctx, s, "alice", "s1")
	require.NoError(t, err)
	assert.Equal(t, before, loaded.HistoryVersion, "loaded")

	want := History(t, s, "s1")
	for _, tt := range []struct {
		name     string
		known    int64
		withHist bool
	}{
		{"nothing known", 0, true},
		{"an older history known", before - 1, true},
		{"the history known", before, false},
	} {
		l, got, hist, err := store.TakeAndLoadSession(ctx, s, "alice", "s1", tt.known, store.LeaseOptions{})
		require.NoError(t, err, tt.name)
		assert.Equal(t, before, got.HistoryVersion, tt.name)
		assert.Equal(t, "agent", got.Agent.Name, tt.name)
		if tt.withHist {
			assert.Equal(t, want, hist, tt.name)
		} else {
			assert.Nil(t, hist, tt.name)
		}
		l.Release()
	}
}

// testHistoryOfMissing checks that history reads and writes of a missing session are ErrNotFound and create nothing.
func testHistoryOfMissing(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	tests := []struct {
		name string
		call func() error
	}{
		{name: "History", call: func() error { _, err := s.History(ctx, "nope"); return err }},
		{name: "AppendHistory", call: func() error { return s.AppendHistory(ctx, "nope", Users("a")) }},
		{name: "AppendHistory nothing", call: func() error { return s.AppendHistory(ctx, "nope", nil) }},
		{name: "ReplaceTail from 0", call: func() error { return s.ReplaceTail(ctx, "nope", 0, Users("a")) }},
		{name: "ReplaceTail from 0 nothing", call: func() error { return s.ReplaceTail(ctx, "nope", 0, nil) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.ErrorIs(t, tt.call(), store.ErrNotFound)
		})
	}
	_, err := s.GetSession(ctx, "", "nope")
	require.ErrorIs(t, err, store.ErrNotFound, "writing history does not create a session")
}

// testImpossibleIDs checks that ids with NUL or bytes that are not UTF-8 find nothing.
func testImpossibleIDs(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	// Ids come from request paths as clients wrote them: NUL and bytes
	// that are not UTF-8 (which PostgreSQL's text cannot hold) find
	// nothing, as any other unknown id.
	s := open(t)
	require.NoError(t, s.CreateSession(ctx, &store.Session{ID: "s1", Owner: "k"}, Users("a"), 0))
	for _, id := range []string{"s1\x00", "\xff", "a\x00b"} {
		_, err := s.GetSession(ctx, "k", id)
		assert.ErrorIs(t, err, store.ErrNotFound, "GetSession %q", id)
		_, _, err = loadSession(ctx, s, "k", id)
		assert.ErrorIs(t, err, store.ErrNotFound, "LoadSession %q", id)
		_, err = s.History(ctx, id)
		assert.ErrorIs(t, err, store.ErrNotFound, "History %q", id)
		assert.ErrorIs(t, s.DeleteSession(ctx, "k", id), store.ErrNotFound, "DeleteSession %q", id)
		_, _, _, err = store.TakeAndLoadSession(ctx, s, "k", id, 0, store.LeaseOptions{})
		assert.ErrorIs(t, err, store.ErrNotFound, "TakeAndLoadSession %q", id)
		_, err = s.GetThread(ctx, "k", id)
		assert.ErrorIs(t, err, store.ErrNotFound, "GetThread %q", id)
		assert.ErrorIs(t, s.DeleteThread(ctx, "k", id), store.ErrNotFound, "DeleteThread %q", id)
	}
	_, err := s.GetSession(ctx, "k", "s1")
	assert.NoError(t, err, "the session with the id's valid prefix is untouched")
}

// testEntriesWithoutMessage checks that writes of an entry without a message are refused and write nothing.
func testEntriesWithoutMessage(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	require.NoError(t, s.CreateSession(ctx, Session("s1", ""), Users("a"), 0))
	tests := []struct {
		name  string
		entry store.Entry
	}{
		{name: "nil", entry: store.Entry{AGUIID: "x"}},
		{name: "nil pointer", entry: store.Entry{AGUIID: "x", Message: (*aap.UserMessage)(nil)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := []store.Entry{User("ok", "fine"), tt.entry}
			require.Error(t, s.AppendHistory(ctx, "s1", bad))
			require.Error(t, s.ReplaceTail(ctx, "s1", 0, bad))
			require.Error(t, s.CreateSession(ctx, Session("s2", ""), bad, 0))
			assert.Equal(t, Users("a"), History(t, s, "s1"), "nothing was written")
			_, err := s.GetSession(ctx, "", "s2")
			require.ErrorIs(t, err, store.ErrNotFound)
		})
	}
}

// testLock checks Lock and Unlock of a session: holders, refusals, expiry and extension.
func testLock(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	require.NoError(t, s.CreateSession(ctx, Session("s1", ""), nil, 0))
	lock := func(holder string, ttl time.Duration) bool {
		t.Helper()
		ok, _, err := s.Lock(ctx, "s1", holder, ttl)
		require.NoError(t, err)
		return ok
	}

	require.True(t, lock("a", time.Hour), "free lock")
	assert.False(t, lock("b", time.Hour), "second holder refused")
	_, left, err := s.Lock(ctx, "s1", "b", time.Hour)
	require.NoError(t, err)
	assert.Greater(t, left, 59*time.Minute, "a refusal says how long the lock has left")
	assert.LessOrEqual(t, left, time.Hour)
	assert.True(t, lock("a", time.Hour), "same holder extends")
	require.NoError(t, s.Unlock(ctx, "s1", "b"))
	assert.False(t, lock("b", time.Hour), "Unlock by a non-holder does nothing")
	require.NoError(t, s.Unlock(ctx, "s1", "a"))
	assert.True(t, lock("b", time.Hour), "free after Unlock")
	require.NoError(t, s.Unlock(ctx, "s1", "b"))

	// Expiry.
	require.True(t, lock("a", time.Millisecond))
	time.Sleep(10 * time.Millisecond)
	assert.True(t, lock("b", time.Hour), "an expired lock can be taken")
	assert.False(t, lock("a", time.Hour), "by the new holder only")
	require.NoError(t, s.Unlock(ctx, "s1", "b"))

	// Extending moves the expiry.
	require.True(t, lock("c", 30*time.Millisecond))
	require.True(t, lock("c", time.Hour))
	time.Sleep(40 * time.Millisecond)
	assert.False(t, lock("d", time.Hour), "the extended lock still holds")

	// Other sessions have their own locks.
	require.NoError(t, s.CreateSession(ctx, Session("s2", ""), nil, 0))
	ok, _, err := s.Lock(ctx, "s2", "d", time.Hour)
	require.NoError(t, err)
	assert.True(t, ok)

	_, _, err = s.Lock(ctx, "missing", "a", time.Hour)
	require.ErrorIs(t, err, store.ErrNotFound)
	require.NoError(t, s.Unlock(ctx, "missing", "a"), "Unlock of a missing session is a no-op")
	_, _, err = s.Lock(ctx, "s2", "", time.Hour)
	require.Error(t, err, "an empty holder would lock nothing")
}

// testSaveSession checks that SaveSession updates a session and appends to its history in one step, for its owner only.
func testSaveSession(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	require.NoError(t, s.CreateSession(ctx, Session("s1", "alice"), Users("a"), 0))
	upd := Session("s1", "alice")
	upd.State = json.RawMessage(`{"n":1}`)
	require.NoError(t, s.SaveSession(ctx, upd, Users("b", "c"), ""))
	got, err := s.GetSession(ctx, "alice", "s1")
	require.NoError(t, err)
	assert.JSONEq(t, `{"n":1}`, string(got.State))
	assert.Equal(t, Users("a", "b", "c"), History(t, s, "s1"))
	require.NoError(t, s.AppendHistory(ctx, "s1", Users("d")))
	assert.Equal(t, Users("a", "b", "c", "d"), History(t, s, "s1"), "appends go on after it")

	other := Session("s1", "bob")
	other.State = json.RawMessage(`{"n":2}`)
	require.ErrorIs(t, s.SaveSession(ctx, other, Users("x"), ""), store.ErrNotFound, "another owner's session")
	missing := Session("nope", "alice")
	require.ErrorIs(t, s.SaveSession(ctx, missing, nil, ""), store.ErrNotFound)
	upd.State = json.RawMessage(`{"n":3}`)
	require.Error(t, s.SaveSession(ctx, upd, []store.Entry{{AGUIID: "x"}}, ""), "an entry without a message")
	got, err = s.GetSession(ctx, "alice", "s1")
	require.NoError(t, err)
	assert.JSONEq(t, `{"n":1}`, string(got.State), "refused saves changed nothing")
	assert.Equal(t, Users("a", "b", "c", "d"), History(t, s, "s1"))
}

// testSaveSessionUnlock checks that SaveSession with a holder saves and frees the holder's lock only.
func testSaveSessionUnlock(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	require.NoError(t, s.CreateSession(ctx, Session("s1", "alice"), Users("a"), 0))
	lock := func(holder string) bool {
		t.Helper()
		ok, _, err := s.Lock(ctx, "s1", holder, time.Hour)
		require.NoError(t, err)
		return ok
	}
	state := func() string {
		t.Helper()
		got, err := s.GetSession(ctx, "alice", "s1")
		require.NoError(t, err)
		return string(got.State)
	}
	upd := Session("s1", "alice")

	require.True(t, lock("h1"))
	upd.State = json.RawMessage(`{"n":1}`)
	require.NoError(t, s.SaveSession(ctx, upd, Users("b"), "h1"))
	assert.JSONEq(t, `{"n":1}`, state())
	assert.Equal(t, Users("a", "b"), History(t, s, "s1"))
	assert.True(t, lock("h2"), "the holder's lock is free after its save")

	upd.State = json.RawMessage(`{"n":2}`)
	require.NoError(t, s.SaveSession(ctx, upd, Users("c"), "h1"))
	assert.JSONEq(t, `{"n":2}`, state(), "saved whoever holds the lock")
	assert.Equal(t, Users("a", "b", "c"), History(t, s, "s1"))
	assert.False(t, lock("h3"), "another holder's lock is left alone")

	upd.State = json.RawMessage(`{"n":3}`)
	require.NoError(t, s.SaveSession(ctx, upd, nil, "h2"))
	assert.JSONEq(t, `{"n":3}`, state(), "a save with no entries")
	assert.Equal(t, Users("a", "b", "c"), History(t, s, "s1"))
	assert.True(t, lock("h3"), "frees the lock too")

	other := Session("s1", "bob")
	other.State = json.RawMessage(`{"n":4}`)
	require.ErrorIs(t, s.SaveSession(ctx, other, Users("x"), "h3"), store.ErrNotFound, "another owner's session")
	require.ErrorIs(t, s.SaveSession(ctx, other, nil, "h3"), store.ErrNotFound, "another owner's session")
	require.Error(t, s.SaveSession(ctx, upd, []store.Entry{{AGUIID: "x"}}, "h3"), "an entry without a message")
	assert.JSONEq(t, `{"n":3}`, state(), "refused saves changed nothing")
	assert.Equal(t, Users("a", "b", "c"), History(t, s, "s1"))
	assert.False(t, lock("h4"), "nor freed the lock")
}

// testLockRace checks that of many concurrent lockers exactly one wins.
func testLockRace(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	require.NoError(t, s.CreateSession(ctx, Session("s1", ""), nil, 0))
	var wg sync.WaitGroup
	wins := make(chan string, 16)
	for i := range 16 {
		wg.Go(func() {
			holder := fmt.Sprintf("h%d", i)
			ok, _, err := s.Lock(ctx, "s1", holder, time.Hour)
			assert.NoError(t, err)
			if ok {
				wins <- holder
			}
		})
	}
	wg.Wait()
	close(wins)
	assert.Len(t, wins, 1, "exactly one holder wins")
}

// testCopies checks that mutating what was passed in or read out changes nothing in the store.
func testCopies(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	in := RichSession("s1", "alice", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	entries := AllMessages()
	require.NoError(t, s.CreateSession(ctx, in, entries, 0))
	want, err := s.GetSession(ctx, "alice", "s1")
	require.NoError(t, err)
	wantHist := History(t, s, "s1")

	// Mutating what was passed in...
	in.Agent.Options["api_key"] = "changed"
	in.Agent.Tools[0].Name = "changed"
	in.Tools[0].Parameters[2] = 'X'
	in.State[2] = 'X'
	in.Interrupts[0].Metadata["k"] = "changed"
	entries[0].AGUIID = "changed"
	entries[2].Message.(*aap.AssistantMessage).Content.Blocks[1].(*aap.ToolUseBlock).Input[2] = 'X'
	// ...and what came out...
	got, err := s.GetSession(ctx, "alice", "s1")
	require.NoError(t, err)
	got.Agent.Options["api_key"] = "changed"
	got.Agent.Tools[0].Name = "changed"
	got.Tools[0].Parameters[2] = 'X'
	got.Tools = append(got.Tools[:0], aap.ToolSpec{Name: "changed"})
	got.State[2] = 'X'
	got.Interrupts[0].ID = "changed"
	got.Interrupts[0].ResponseSchema["type"] = "changed"
	listed, err := s.ListSessions(ctx, "alice", 0, 10)
	require.NoError(t, err)
	listed[0].Agent.Options["model"] = "changed"
	listed[0].State[3] = 'X'
	hist := History(t, s, "s1")
	hist[0].AGUIID = "changed"
	hist[0].Message.(*aap.UserMessage).Content.Text = "changed"
	hist[2].Message.(*aap.AssistantMessage).Content.Blocks[1].(*aap.ToolUseBlock).Input[2] = 'X'

	// ...changes nothing in the store.
	again, err := s.GetSession(ctx, "alice", "s1")
	require.NoError(t, err)
	assert.Equal(t, want, again)
	assert.Equal(t, wantHist, History(t, s, "s1"))

	upd := Session("s1", "alice")
	upd.State = json.RawMessage(`{"v":1}`)
	require.NoError(t, s.SaveSession(ctx, upd, nil, ""))
	upd.State[2] = 'X'
	again, err = s.GetSession(ctx, "alice", "s1")
	require.NoError(t, err)
	assert.Equal(t, `{"v":1}`, string(again.State), "mutating an updated session after the fact")
}

// testConcurrentWriters checks that concurrent appends lose, duplicate and reorder nothing.
func testConcurrentWriters(t *testing.T, open func(t *testing.T) store.Store) {
	s := open(t)
	testConcurrentAppends(t, []store.Store{s}, 16, 10)
}

// testPingAndClose checks Ping, and that Close is idempotent.
func testPingAndClose(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	s := open(t)
	require.NoError(t, s.Ping(ctx))
	require.NoError(t, s.Close())
	require.NoError(t, s.Close(), "Close is idempotent")
}

// testConcurrentAppends runs n goroutines, spread over the handles, each
// appending rounds entries one at a time both to its own session and to
// one shared session, then checks that nothing was lost, duplicated or
// reordered.
func testConcurrentAppends(t *testing.T, handles []store.Store, n, rounds int) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, handles[0].CreateSession(ctx, Session("shared", ""), nil, 0))
	for g := range n {
		require.NoError(t, handles[g%len(handles)].CreateSession(ctx, Session(fmt.Sprintf("own%d", g), ""), nil, 0))
	}
	var wg sync.WaitGroup
	for g := range n {
		s := handles[g%len(handles)]
		wg.Go(func() {
			for r := range rounds {
				id := fmt.Sprintf("g%d-%d", g, r)
				if !assert.NoError(t, s.AppendHistory(ctx, fmt.Sprintf("own%d", g), Users(id))) {
					return
				}
				if !assert.NoError(t, s.AppendHistory(ctx, "shared", Users(id))) {
					return
				}
				if r%3 == 0 {
					_, err := s.History(ctx, "shared")
					assert.NoError(t, err)
				}
			}
		})
	}
	wg.Wait()

	for g := range n {
		got := History(t, handles[(g+1)%len(handles)], fmt.Sprintf("own%d", g))
		require.Len(t, got, rounds)
		for r, e := range got {
			assert.Equal(t, fmt.Sprintf("g%d-%d", g, r), e.AGUIID)
		}
	}
	shared := History(t, handles[len(handles)-1], "shared")
	require.Len(t, shared, n*rounds)
	next := make([]int, n) // next round expected from each goroutine
	for _, e := range shared {
		var g, r int
		_, err := fmt.Sscanf(e.AGUIID, "g%d-%d", &g, &r)
		require.NoError(t, err)
		require.Equal(t, next[g], r, "goroutine %d's entries in its order", g)
		next[g]++
	}
}
