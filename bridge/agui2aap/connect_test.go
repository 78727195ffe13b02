package agui2aap_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/agui2aap"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/internal/testkit/pgtest"
	"github.com/aapagui/aapagui/internal/testkit/streamtest"
	"github.com/aapagui/aapagui/store/postgres"
)

// pausingAnswer is an AAP server's answer of words deltas, the first
// before of them at once, the rest once release is closed (a model that
// pauses): the turn a client drops in the middle of.
func pausingAnswer(words, before int, release <-chan struct{}) func(http.ResponseWriter, *http.Request, int, *aap.PostSessionTurnRequest) {
	return func(w http.ResponseWriter, r *http.Request, _ int, _ *aap.PostSessionTurnRequest) {
		writeEvents(w, &aap.TurnStart{})
		for i := range words {
			if i == before {
				select {
				case <-release:
				case <-r.Context().Done():
					return
				}
			}
			writeEvents(w, &aap.TextDelta{Delta: fmt.Sprintf("w%d ", i)})
			_ = http.NewResponseController(w).Flush()
		}
		writeEvents(w, &aap.TurnStop{StopReason: aap.StopEndTurn})
	}
}

// joined checks that a run joined from its start has, right after its
// RUN_STARTED, a MESSAGES_SNAPSHOT (no id: it is not the run's) holding
// the conversation the run continues, ending with the user message last;
// it returns the run's own frames.
func joined(t *testing.T, frames []streamtest.Frame, last string) []streamtest.Frame {
	t.Helper()
	require.Greater(t, len(frames), 2)
	snap := frames[1]
	require.Empty(t, snap.ID, "the conversation is not an event of the run")
	var ev struct {
		Type     string
		Messages []struct{ Role, Content string }
	}
	require.NoError(t, json.Unmarshal([]byte(snap.Data), &ev))
	require.Equal(t, "MESSAGES_SNAPSHOT", ev.Type)
	require.NotEmpty(t, ev.Messages)
	assert.Equal(t, "user", ev.Messages[len(ev.Messages)-1].Role)
	assert.Equal(t, last, ev.Messages[len(ev.Messages)-1].Content)
	return append([]streamtest.Frame{frames[0]}, frames[2:]...)
}

// A run whose client left after 50 deltas (OnClientGone finish) goes on;
// a client that connects to the thread while it runs gets the run from
// its RUN_STARTED, the same events with the same ids, and follows it live
// to RUN_FINISHED; one that connects with the last id it had, after the
// run finished, gets exactly the rest.
func TestConnectRejoinsRun(t *testing.T) {
	release := make(chan struct{})
	f := newFakeAAP(t, pausingAnswer(60, 50, release))
	e := newBridge(t, f.URL, func(c *agui2aap.Config) { c.OnClientGone = agui2aap.ClientGoneFinish })
	let := sync.OnceFunc(func() { close(release) })
	t.Cleanup(let) // a test that fails lets the run end
	c := e.conv("rejoin")
	c.say("tell me a long story")
	body, err := json.Marshal(c.input("run-1", nil))
	require.NoError(t, err)

	first := streamtest.Open(t, bridgetest.Context(t), http.MethodPost, e.URL+"/agents/demo", string(body), nil)
	require.Equal(t, http.StatusOK, first.Status, first.Body)
	had := first.Until(t, "TEXT_MESSAGE_CONTENT", 50)
	first.Leave()
	streamtest.RequireNumbered(t, had, 1)

	// Joined while the run is paused: from its start, live.
	join := streamtest.Open(t, bridgetest.Context(t), http.MethodPost, e.URL+"/agents/demo/connect", `{"threadId":"rejoin"}`, nil)
	require.Equal(t, http.StatusOK, join.Status, join.Body)
	assert.Equal(t, had, joined(t, join.Until(t, "TEXT_MESSAGE_CONTENT", 50), "tell me a long story"), "the run from its RUN_STARTED, ids and bytes as the first client had them")
	let()
	rest := join.Rest()
	all := append(append([]streamtest.Frame{}, had...), rest...)
	streamtest.RequireNumbered(t, all, 1)
	require.Contains(t, all[len(all)-1].Data, `"type":"RUN_FINISHED"`)
	var text strings.Builder
	for _, f := range all {
		var ev struct{ Type, Delta string }
		require.NoError(t, json.Unmarshal([]byte(f.Data), &ev))
		if ev.Type == "TEXT_MESSAGE_CONTENT" {
			text.WriteString(ev.Delta)
		}
	}
	for i := range 60 {
		assert.Contains(t, text.String(), fmt.Sprintf("w%d ", i))
	}
	assert.Equal(t, 60, strings.Count(text.String(), " "), "every word once")

	// With the last id the first client had, the run finished: exactly
	// the rest.
	h := http.Header{"Last-Event-ID": {had[len(had)-1].ID}}
	again := streamtest.Open(t, bridgetest.Context(t), http.MethodPost, e.URL+"/agents/demo/connect", `{"threadId":"rejoin"}`, h)
	require.Equal(t, http.StatusOK, again.Status, again.Body)
	assert.Equal(t, rest, again.Rest())

	// No run in flight and no id: the thread's conversation, as a
	// hydration answers.
	hyd := streamtest.Open(t, bridgetest.Context(t), http.MethodPost, e.URL+"/agents/demo/connect", `{"threadId":"rejoin"}`, nil)
	frames := hyd.Rest()
	require.Len(t, frames, 3)
	assert.Contains(t, frames[1].Data, `"type":"MESSAGES_SNAPSHOT"`)
	assert.Empty(t, frames[1].ID, "a hydration is answered again, not recorded")
}

// A connect names its run by an id the bridge gave: a malformed id is
// 400, one of a run that is not the thread's (or no longer kept) 404,
// both before any stream.
func TestConnectBadLastEventID(t *testing.T) {
	release := make(chan struct{})
	close(release)
	f := newFakeAAP(t, pausingAnswer(3, 0, release))
	e := newBridge(t, f.URL)
	var last string // an id of thread b's run
	for _, id := range []string{"a", "b"} {
		c := e.conv(id)
		c.say("hi")
		body, err := json.Marshal(c.input("", nil))
		require.NoError(t, err)
		frames := streamtest.Open(t, bridgetest.Context(t), http.MethodPost, e.URL+"/agents/demo", string(body), nil).Rest()
		last = frames[len(frames)-1].ID
	}
	for _, tc := range []struct {
		id     string
		status int
		code   string
	}{
		{"no-number", http.StatusBadRequest, "bad_last_event_id"},
		{"0123456789abcdef:-1", http.StatusBadRequest, "bad_last_event_id"},
		{"0123456789abcdef:3", http.StatusNotFound, "run_not_kept"},
		{last, http.StatusNotFound, "run_not_kept"}, // b's run, connecting to a
	} {
		s := streamtest.Open(t, bridgetest.Context(t), http.MethodPost, e.URL+"/agents/demo/connect", `{"threadId":"a"}`, http.Header{"Last-Event-ID": {tc.id}})
		assert.Equal(t, tc.status, s.Status, tc.id)
		assert.Contains(t, s.Body, `"code":"`+tc.code+`"`, tc.id)
	}
	// b's own id: the run's end (nothing after its last event).
	s := streamtest.Open(t, bridgetest.Context(t), http.MethodPost, e.URL+"/agents/demo/connect", `{"threadId":"b"}`, http.Header{"Last-Event-ID": {last}})
	require.Equal(t, http.StatusOK, s.Status, s.Body)
	assert.Empty(t, s.Rest())
}

// Two replicas of agui2aap on one PostgreSQL database: a run whose client
// left after 50 deltas, in the middle of a pause of its AAP server, is
// joined on the other replica, which gets it from its RUN_STARTED and then
// the rest live as the AAP server produces it; joined there again with the
// last id the first client had, once the run finished, exactly the rest.
func TestConnectOnAnotherReplica(t *testing.T) {
	dsn := pgtest.Schema(t)
	release := make(chan struct{})
	f := newFakeAAP(t, pausingAnswer(60, 50, release))
	replica := func() *env {
		st, err := postgres.Open(context.Background(), dsn)
		require.NoError(t, err)
		t.Cleanup(func() { _ = st.Close() })
		return newBridge(t, f.URL, func(c *agui2aap.Config) {
			c.Store = st
			c.OnClientGone = agui2aap.ClientGoneFinish
		})
	}
	a, b := replica(), replica()
	let := sync.OnceFunc(func() { close(release) })
	t.Cleanup(let) // a test that fails lets the run end
	c := a.conv("replicas")
	c.say("tell me a long story")
	body, err := json.Marshal(c.input("run-1", nil))
	require.NoError(t, err)
	first := streamtest.Open(t, bridgetest.Context(t), http.MethodPost, a.URL+"/agents/demo", string(body), nil)
	require.Equal(t, http.StatusOK, first.Status, first.Body)
	had := first.Until(t, "TEXT_MESSAGE_CONTENT", 50)
	first.Leave()

	join := streamtest.Open(t, bridgetest.Context(t), http.MethodPost, b.URL+"/agents/demo/connect", `{"threadId":"replicas"}`, nil)
	require.Equal(t, http.StatusOK, join.Status, join.Body)
	assert.Equal(t, had, joined(t, join.Until(t, "TEXT_MESSAGE_CONTENT", 50), "tell me a long story"), "the run from its RUN_STARTED, on the other replica")
	let() // the AAP server goes on: the rest comes live
	rest := join.Rest()
	require.NotEmpty(t, rest)
	require.Contains(t, rest[len(rest)-1].Data, `"type":"RUN_FINISHED"`)
	streamtest.RequireNumbered(t, append(append([]streamtest.Frame{}, had...), rest...), 1)
	assert.Equal(t, 10, strings.Count(fmt.Sprint(rest), "TEXT_MESSAGE_CONTENT"), "the ten words after the pause, once")

	h := http.Header{"Last-Event-ID": {had[len(had)-1].ID}}
	again := streamtest.Open(t, bridgetest.Context(t), http.MethodPost, b.URL+"/agents/demo/connect", `{"threadId":"replicas"}`, h)
	require.Equal(t, http.StatusOK, again.Status, again.Body)
	assert.Equal(t, rest, again.Rest())
}

// A run of a thread with a conversation, joined from its start: the
// snapshot after its RUN_STARTED holds the conversation before it (from
// agui2aap's record) and the user message the run answers.
func TestConnectJoinsWithTheConversation(t *testing.T) {
	release := make(chan struct{})
	paused := pausingAnswer(5, 2, release)
	f := newFakeAAP(t, func(w http.ResponseWriter, r *http.Request, n int, req *aap.PostSessionTurnRequest) {
		if n == 0 {
			writeEvents(w, &aap.TurnStart{}, &aap.TextDelta{Delta: "first answer"}, &aap.TurnStop{StopReason: aap.StopEndTurn})
			return
		}
		paused(w, r, n, req)
	})
	e := newBridge(t, f.URL, func(c *agui2aap.Config) { c.OnClientGone = agui2aap.ClientGoneFinish })
	let := sync.OnceFunc(func() { close(release) })
	t.Cleanup(let)
	c := e.conv("talk")
	c.say("first question")
	c.apply(c.run(t).Events)
	c.say("second question")
	body, err := json.Marshal(c.input("run-2", nil))
	require.NoError(t, err)
	first := streamtest.Open(t, bridgetest.Context(t), http.MethodPost, e.URL+"/agents/demo", string(body), nil)
	first.Until(t, "TEXT_MESSAGE_CONTENT", 2)
	first.Leave()

	join := streamtest.Open(t, bridgetest.Context(t), http.MethodPost, e.URL+"/agents/demo/connect", `{"threadId":"talk"}`, nil)
	frames := join.Until(t, "TEXT_MESSAGE_CONTENT", 2)
	joined(t, frames, "second question")
	var snap struct {
		Messages []struct{ ID, Role, Content string }
	}
	require.NoError(t, json.Unmarshal([]byte(frames[1].Data), &snap))
	var got []string
	for _, m := range snap.Messages {
		got = append(got, m.Role+": "+m.Content)
	}
	assert.Equal(t, []string{"user: first question", "assistant: first answer", "user: second question"}, got)
	assert.Equal(t, "user-talk-1", snap.Messages[0].ID, "the ids the client had")
	let()
	rest := join.Rest()
	require.Contains(t, rest[len(rest)-1].Data, `"type":"RUN_FINISHED"`)
}
