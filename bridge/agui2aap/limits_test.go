package agui2aap_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/agui2aap"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/internal/testkit/streamtest"
	"github.com/aapagui/aapagui/store"
)

// requireTooMany checks a 429: the usual JSON error with its code, and a
// Retry-After of whole seconds, at least 1.
func requireTooMany(t *testing.T, r *response, code string) {
	t.Helper()
	require.Equal(t, http.StatusTooManyRequests, r.Status, r.Body)
	assert.Equal(t, "application/json", r.Header.Get("Content-Type"))
	assert.Equal(t, code, r.errorCode(), r.Body)
	assert.NotEmpty(t, r.errorMessage())
	secs, err := strconv.Atoi(r.Header.Get("Retry-After"))
	require.NoError(t, err, "429 without a Retry-After of whole seconds: %q", r.Header.Get("Retry-After"))
	assert.Positive(t, secs)
}

// Limits.ThreadsPerKey: a key holding its limit of threads gets 429
// too_many_threads for a run that would start another (no AAP session is
// made, nothing stored); its threads go on, other keys are not counted
// against it, and deleting a thread frees its place.
func TestThreadsPerKey(t *testing.T) {
	e := newEnv(t, func(c *agui2aap.Config) {
		c.APIKeys = []string{"key-a", "key-b"}
		c.Limits.ThreadsPerKey = 2
	})
	start := func(id, key string) *response {
		c := e.conv(id)
		c.say("hello")
		return e.post(t, "/agents/demo", c.input("", nil), "Authorization", "Bearer "+key)
	}
	for _, id := range []string{"t1", "t2"} {
		require.Equal(t, http.StatusOK, start(id, "key-a").Status)
	}
	sessions := len(e.sessions(t))
	r := start("t3", "key-a")
	requireTooMany(t, r, "too_many_threads")
	assert.Contains(t, r.errorMessage(), "2 threads")
	assert.Len(t, e.sessions(t), sessions, "no AAP session for the refused thread")
	assert.Len(t, e.listThreads(t, "", "key-a").Threads, 2, "nothing stored")

	t1 := e.conv("t1")
	t1.Headers = []string{"Authorization", "Bearer key-a"}
	t1.say("hello")
	t1.run(t)
	t1.say("again")
	assert.Equal(t, http.StatusOK, e.post(t, "/agents/demo", t1.input("", nil), t1.Headers...).Status, "a thread the key holds goes on")
	assert.Equal(t, http.StatusOK, start("t3", "key-b").Status, "another key has places of its own")

	require.Equal(t, http.StatusNoContent, e.deleteThread(t, url.PathEscape("t2"), "key-a").Status)
	assert.Equal(t, http.StatusOK, start("t3", "key-a").Status, "a deleted thread frees its place")
}

// Limits.RunsPerKey: while a key has its limit of runs going, another run
// of that key gets 429 too_many_runs before anything reaches the AAP
// server; another key's run goes on; once the run ends the key may run
// again.
func TestRunsPerKey(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	up := newFakeAAP(t, func(w http.ResponseWriter, r *http.Request, n int, req *aap.PostSessionTurnRequest) {
		if n == 0 {
			close(started)
			<-release
		}
		answerText("hi")(w, r, n, req)
	})
	e := newBridge(t, up.URL, func(c *agui2aap.Config) {
		c.APIKeys = []string{"key-a", "key-b"}
		c.Limits.RunsPerKey = 1
	})
	run := func(id, key string) *response {
		c := e.conv(id)
		c.say("hello")
		return e.post(t, "/agents/demo", c.input("", nil), "Authorization", "Bearer "+key)
	}
	held := make(chan *response, 1)
	go func() { held <- run("held", "key-a") }()
	<-started

	requireTooMany(t, run("second", "key-a"), "too_many_runs")
	assert.Len(t, up.turnRequests(), 1, "the refused run reached nothing")
	assert.Equal(t, http.StatusOK, run("theirs", "key-b").Status, "another key's run goes on")

	close(release)
	require.Equal(t, http.StatusOK, (<-held).Status)
	assert.Equal(t, http.StatusOK, run("second", "key-a").Status, "the run's place is free again")
}

// Limits.RequestsPerSecond: past its burst a key gets 429
// too_many_requests with Retry-After, on every route behind the key;
// another key is not slowed.
func TestRequestsPerKey(t *testing.T) {
	e := newEnv(t, func(c *agui2aap.Config) {
		c.APIKeys = []string{"key-a", "key-b"}
		c.Limits.RequestsPerSecond, c.Limits.Burst = 0.25, 2
	})
	for range 2 {
		require.Equal(t, http.StatusOK, e.get(t, "/agents", "Authorization", "Bearer key-a").Status)
	}
	r := e.get(t, "/agents/demo/threads", "Authorization", "Bearer key-a")
	requireTooMany(t, r, "too_many_requests")
	assert.Equal(t, "4", r.Header.Get("Retry-After"), "a request every 4 s")
	c := e.conv("t1")
	c.say("hello")
	requireTooMany(t, e.post(t, "/agents/demo", c.input("", nil), "Authorization", "Bearer key-a"), "too_many_requests")
	assert.Empty(t, e.listThreads(t, "", "key-b").Threads, "nothing stored, and the other key is served")
	assert.Equal(t, http.StatusOK, e.get(t, "/healthz").Status)
}

// Limits that make no sense stop New.
func TestLimitsValidation(t *testing.T) {
	for _, l := range []agui2aap.Limits{{ThreadsPerKey: -1}, {RunsPerKey: -1}, {RequestsPerSecond: -1}, {Burst: -1}} {
		_, err := agui2aap.New(agui2aap.Config{Upstream: "http://127.0.0.1:1", Store: store.NewMemory(), Limits: l})
		require.Error(t, err, "%+v", l)
		assert.Contains(t, err.Error(), "Limits")
	}
}

// A message the AAP server streams past MaxMessageSize ends the run with
// RUN_ERROR MESSAGE_TOO_LARGE, the text up to the cap kept and the AAP
// turn cancelled; the count starts again with each message.
func TestMaxMessageSize(t *testing.T) {
	cancelled := make(chan bool, 1)
	f := newFakeAAP(t, func(w http.ResponseWriter, r *http.Request, _ int, _ *aap.PostSessionTurnRequest) {
		writeEvents(w, &aap.TurnStart{}, &aap.Text{Text: strings.Repeat("a", 80)},
			&aap.ToolCall{ToolCallID: "c1", Name: demo.SearchTool, Input: json.RawMessage(`{"query":"x"}`)},
			&aap.ToolResult{ToolCallID: "c1", Content: aap.TextContent("found")})
		for range 10 {
			writeEvents(w, &aap.TextDelta{Delta: strings.Repeat("b", 30)})
			select {
			case <-r.Context().Done():
				cancelled <- true
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
		writeEvents(w, &aap.TurnStop{StopReason: aap.StopEndTurn})
		cancelled <- false
	})
	e := newBridge(t, f.URL, func(c *agui2aap.Config) { c.MaxMessageSize = 100 })
	c := e.conv("big")
	c.say("write a lot")
	r := c.run(t)
	assert.Equal(t, "MESSAGE_TOO_LARGE", r.errorCodeInBand())
	require.Len(t, r.Text, 2, "the first message whole, the second up to the cap")
	assert.Equal(t, strings.Repeat("a", 80), r.Text[0], "80 bytes: under the cap, whatever came before")
	assert.Equal(t, strings.Repeat("b", 90), r.Text[1], "three deltas fit, the fourth would pass 100 bytes")
	select {
	case c := <-cancelled:
		assert.True(t, c, "the AAP turn is cancelled")
	case <-time.After(bridgetest.Timeout):
		t.Fatal("the AAP turn went on")
	}
}

// runLogReads counts the store's reads of a thread's run log, the first
// read of a connect.
type runLogReads struct {
	store.Threads
	reads atomic.Int64
}

func (s *runLogReads) LatestRunLog(ctx context.Context, owner, key string) (*store.RunLog, error) {
	s.reads.Add(1)
	return s.Threads.LatestRunLog(ctx, owner, key)
}

// Limits.RunsPerKey bounds the connects a key holds open too: 4 for each
// run it may have going (a bound of their own, so that a key running its
// one run still connects to it). Past it POST /agents/:name/connect gets
// 429 too_many_streams naming the bound, before the store is read; a
// connect that ended gives its place back.
func TestConnectsPerKey(t *testing.T) {
	release := make(chan struct{})
	f := newFakeAAP(t, pausingAnswer(60, 50, release))
	st := &runLogReads{Threads: store.NewMemory()}
	e := newBridge(t, f.URL, func(c *agui2aap.Config) {
		c.Store = st
		c.Limits.RunsPerKey = 1
	})
	let := sync.OnceFunc(func() { close(release) })
	t.Cleanup(let)
	c := e.conv("held")
	c.say("tell me a long story")
	body, err := json.Marshal(c.input("run-1", nil))
	require.NoError(t, err)
	first := streamtest.Open(t, bridgetest.Context(t), http.MethodPost, e.URL+"/agents/demo", string(body), nil)
	require.Equal(t, http.StatusOK, first.Status, first.Body)
	had := first.Until(t, "TEXT_MESSAGE_CONTENT", 50)

	connect := func(h http.Header) *streamtest.Stream {
		return streamtest.Open(t, bridgetest.Context(t), http.MethodPost, e.URL+"/agents/demo/connect", `{"threadId":"held"}`, h)
	}
	var joins []*streamtest.Stream
	for range 4 {
		j := connect(nil)
		require.Equal(t, http.StatusOK, j.Status, "the key runs its one run and still connects to it: %s", j.Body)
		j.Until(t, "TEXT_MESSAGE_CONTENT", 50)
		joins = append(joins, j)
	}
	reads := st.reads.Load()
	past := connect(nil)
	require.Equal(t, http.StatusTooManyRequests, past.Status, past.Body)
	var er aap.ErrorResponse
	require.NoError(t, json.Unmarshal([]byte(past.Body), &er), past.Body)
	assert.Equal(t, "too_many_streams", er.Error.Code)
	assert.Contains(t, er.Error.Message, "4 streams", "the bound is named")
	assert.Equal(t, reads, st.reads.Load(), "refused before the store is read")

	let()
	first.Rest()
	for _, j := range joins {
		j.Rest()
	}
	again := connect(http.Header{"Last-Event-ID": {had[len(had)-1].ID}})
	assert.Equal(t, http.StatusOK, again.Status, "the connects that ended gave their places back: %s", again.Body)
	again.Rest()
}
