package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/internal/testkit/pgtest"
	"github.com/aapagui/aapagui/internal/testkit/proctest"
	"github.com/aapagui/aapagui/internal/testkit/streamtest"
)

// deadRunArgs are the flags of a replica in front of the AAP agent at
// upstream whose dead runs end soon: a lease of one second, runs that
// outlive their clients.
func deadRunArgs(storeArg, upstream string) []string {
	return []string{"--listen", "127.0.0.1:0", "--store", storeArg, "--upstream", upstream,
		"--lease-ttl", "1s", "--on-client-gone", "finish"}
}

// pacedDemo is the AAP demo agent answering "long <n>" a word every 5 ms.
func pacedDemo(t *testing.T) string {
	agent := httptest.NewServer(demo.NewAAPAgent(demo.AAPAgentOptions{LongPace: 5 * time.Millisecond}))
	t.Cleanup(agent.Close)
	return agent.URL
}

func runInput(thread, run string, messages ...map[string]any) string {
	if messages == nil {
		messages = []map[string]any{}
	}
	b, _ := json.Marshal(map[string]any{"threadId": thread, "runId": run, "state": map[string]any{},
		"messages": messages, "tools": []any{}, "context": []any{}, "forwardedProps": map[string]any{}})
	return string(b)
}

var sseAccept = http.Header{"Accept": {"text/event-stream"}}

// startLongRun runs a first, short run of thread th on url, then starts
// a long one, read for 100 events.
func startLongRun(t *testing.T, ctx context.Context, url, th string) []streamtest.Frame {
	t.Helper()
	u0 := map[string]any{"id": "u0", "role": "user", "content": "echo hi"}
	first := streamtest.Open(t, ctx, http.MethodPost, url+"/agents/demo", runInput(th, "r0", u0), sseAccept)
	require.Equal(t, http.StatusOK, first.Status, first.Body)
	var a0 map[string]any
	for _, f := range first.Rest() {
		if strings.Contains(f.Data, `"TEXT_MESSAGE_START"`) {
			var ev map[string]any
			require.NoError(t, json.Unmarshal([]byte(f.Data), &ev))
			a0 = map[string]any{"id": ev["messageId"], "role": "assistant", "content": "hi"}
		}
	}
	require.NotNil(t, a0, "the first run's answer")
	run := streamtest.Open(t, ctx, http.MethodPost, url+"/agents/demo", runInput(th, "r1", u0, a0, map[string]any{"id": "u1", "role": "user", "content": "long 100000"}), sseAccept)
	require.Equal(t, http.StatusOK, run.Status, run.Body)
	return run.Until(t, "TEXT_MESSAGE_CONTENT", 100)
}

// rejoin rejoins thread th's run on url (after last, when not empty) and
// reads it to its end, which must be the RUN_ERROR of a run whose server
// stopped.
func rejoin(t *testing.T, ctx context.Context, url, th, last string) []streamtest.Frame {
	t.Helper()
	h := sseAccept.Clone()
	if last != "" {
		h.Set("Last-Event-ID", last)
	}
	join := streamtest.Open(t, ctx, http.MethodPost, url+"/agents/demo/connect", runInput(th, "r2"), h)
	require.Equal(t, http.StatusOK, join.Status, join.Body)
	got := join.Rest()
	interruptedRunError(t, got)
	return got
}

func interruptedRunError(t *testing.T, frames []streamtest.Frame) {
	t.Helper()
	require.NotEmpty(t, frames)
	last := frames[len(frames)-1].Data
	assert.Contains(t, last, `"type":"RUN_ERROR"`)
	assert.Contains(t, last, `"code":"RUN_INTERRUPTED"`)
}

// afterDeadRun checks, on url, what a dead run left of thread th: the
// conversation (a hydration) holds the partial answer, the agent's words
// from the first, and the thread takes its next run.
func afterDeadRun(t *testing.T, ctx context.Context, url, th string) {
	t.Helper()
	hyd := streamtest.Open(t, ctx, http.MethodPost, url+"/agents/demo/connect", runInput(th, "r3"), sseAccept)
	require.Equal(t, http.StatusOK, hyd.Status, hyd.Body)
	var snap struct {
		Messages []map[string]any `json:"messages"`
	}
	for _, f := range hyd.Rest() {
		if strings.Contains(f.Data, `"MESSAGES_SNAPSHOT"`) {
			require.NoError(t, json.Unmarshal([]byte(f.Data), &snap))
		}
	}
	require.Len(t, snap.Messages, 4, "the first run, the user's message and the partial answer")
	answer, _ := snap.Messages[3]["content"].(string)
	require.True(t, strings.HasPrefix(answer, "word word"), "the partial answer: %.40q", answer)
	assert.Equal(t, strings.Repeat(" word", strings.Count(answer, "word"))[1:], answer, "the agent's words, up to a point")

	next := streamtest.Open(t, ctx, http.MethodPost, url+"/agents/demo", runInput(th, "r4", append(snap.Messages, map[string]any{"id": "u2", "role": "user", "content": "echo hi"})...), sseAccept)
	require.Equal(t, http.StatusOK, next.Status, next.Body)
	frames := next.Rest()
	require.NotEmpty(t, frames)
	assert.Contains(t, frames[len(frames)-1].Data, `"RUN_FINISHED"`, "the next run")
}

// A run whose process is killed (SIGKILL) mid-answer, on SQLite: after
// the restart, a client joining the thread's run gets it to a RUN_ERROR
// naming the interruption, as does one rejoining with the last id it
// had; the conversation holds the partial answer and the next run runs.
func TestKilledRunEndsForRejoiners(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	args := deadRunArgs("sqlite:"+filepath.Join(t.TempDir(), "agui2aap.db"), pacedDemo(t))
	a := proctest.Start(t, nil, args...)
	had := startLongRun(t, ctx, a.URL(), "th1")
	a.Kill()

	b := proctest.Start(t, nil, args...)
	all := rejoin(t, ctx, b.URL(), "th1", "")
	assert.Contains(t, all[0].Data, `"RUN_STARTED"`)
	for _, last := range []string{had[len(had)-1].ID, had[len(had)/2].ID} {
		got := rejoin(t, ctx, b.URL(), "th1", last)
		assert.Equal(t, all[len(all)-1], got[len(got)-1], "the same end, whatever the client had")
	}
	afterDeadRun(t, ctx, b.URL(), "th1")
}

// Two replicas on PostgreSQL: a client follows a run of replica a on
// replica b; a is killed mid-answer. The follower is told the run was
// interrupted and its stream ends, as is a client that rejoins on b
// afterwards; the conversation holds the partial answer and the next run
// runs on b.
func TestKilledReplicaRunEndsOnSurvivor(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	args := deadRunArgs(pgtest.Schema(t), pacedDemo(t))
	a := proctest.Start(t, nil, args...)
	b := proctest.Start(t, nil, args...)
	had := startLongRun(t, ctx, a.URL(), "th1")
	h := sseAccept.Clone()
	h.Set("Last-Event-ID", had[len(had)-1].ID)
	follower := streamtest.Open(t, ctx, http.MethodPost, b.URL()+"/agents/demo/connect", runInput("th1", "r2"), h)
	require.Equal(t, http.StatusOK, follower.Status, follower.Body)
	follower.Until(t, "TEXT_MESSAGE_CONTENT", 50) // following live, on b
	a.Kill()

	rest := follower.Rest()
	interruptedRunError(t, rest)
	later := rejoin(t, ctx, b.URL(), "th1", had[len(had)-1].ID)
	assert.Equal(t, rest[len(rest)-1], later[len(later)-1], "the same end")
	afterDeadRun(t, ctx, b.URL(), "th1")
}
