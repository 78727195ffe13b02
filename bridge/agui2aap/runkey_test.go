package agui2aap_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/bridge/agui2aap"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/internal/testkit/streamtest"
	"github.com/aapagui/aapagui/store"
)

// A run is the run of one agent's thread: while agent demo runs thread
// "shared", a connect through another agent ("other", which the AAP
// server has, or "zzz", which it has not) does not join it, with or
// without the Last-Event-ID of demo's run, and a DELETE of the thread's
// run through another agent is 404 no_run_in_flight and stops nothing:
// demo's run goes on, demo's connect still joins it and demo's DELETE
// stops it.
func TestRunIsTheAgents(t *testing.T) {
	release := make(chan struct{})
	f := newFakeAAP(t, pausingAnswer(60, 5, release))
	other := f.meta.Agents[0]
	other.Name = "other"
	f.meta.Agents = append(f.meta.Agents, other)
	e := newBridge(t, f.URL, func(c *agui2aap.Config) { c.OnClientGone = agui2aap.ClientGoneFinish })
	let := sync.OnceFunc(func() { close(release) })
	t.Cleanup(let)
	c := e.conv("shared")
	c.say("tell me a long story")
	body, err := json.Marshal(c.input("run-1", nil))
	require.NoError(t, err)
	first := streamtest.Open(t, bridgetest.Context(t), http.MethodPost, e.URL+"/agents/demo", string(body), nil)
	require.Equal(t, http.StatusOK, first.Status, first.Body)
	had := first.Until(t, "TEXT_MESSAGE_CONTENT", 5)
	first.Leave()
	lastID := http.Header{"Last-Event-ID": {had[len(had)-1].ID}}

	for _, agent := range []string{"other", "zzz"} {
		join := streamtest.Open(t, bridgetest.Context(t), http.MethodPost, e.URL+"/agents/"+agent+"/connect", `{"threadId":"shared"}`, nil)
		if join.Status == http.StatusOK {
			fr, _ := join.Next()
			assert.Empty(t, fr.ID, "%s: not demo's run (its events have ids), a hydration", agent)
			join.Leave()
		}
		again := streamtest.Open(t, bridgetest.Context(t), http.MethodPost, e.URL+"/agents/"+agent+"/connect", `{"threadId":"shared"}`, lastID)
		assert.Equal(t, http.StatusNotFound, again.Status, "%s: demo's run is not this agent's", agent)
		assert.Contains(t, again.Body, `"code":"run_not_kept"`, agent)

		status, body := bridgetest.Delete(t, bridgetest.Context(t), e.URL+"/agents/"+agent+"/threads/shared/run", nil)
		assert.Equal(t, http.StatusNotFound, status, "%s: %s", agent, body)
		assert.Contains(t, body, `"code":"no_run_in_flight"`, agent)
	}

	join := streamtest.Open(t, bridgetest.Context(t), http.MethodPost, e.URL+"/agents/demo/connect", `{"threadId":"shared"}`, nil)
	require.Equal(t, http.StatusOK, join.Status, join.Body)
	assert.Equal(t, had, joined(t, join.Until(t, "TEXT_MESSAGE_CONTENT", 5), "tell me a long story"), "demo's run is still in flight")
	status, stopped := bridgetest.Delete(t, bridgetest.Context(t), e.URL+"/agents/demo/threads/shared/run", nil)
	assert.Equal(t, http.StatusAccepted, status, stopped)
	rest := join.Rest()
	require.NotEmpty(t, rest)
	assert.Contains(t, rest[len(rest)-1].Data, `"type":"RUN_FINISHED"`)
}

// twoAgents is a fake AAP server (answering text) with agents "demo" and
// "other", and agui2aap in front of it.
func twoAgents(t *testing.T) *env {
	f := newFakeAAP(t, answerText("hello"))
	other := f.meta.Agents[0]
	other.Name = "other"
	f.meta.Agents = append(f.meta.Agents, other)
	return newBridge(t, f.URL)
}

// runFrames runs thread id's next run through agent and returns its
// frames, each with its SSE id.
func runFrames(t *testing.T, e *env, agent, id, text string) []streamtest.Frame {
	t.Helper()
	c := e.conv(id)
	c.say(text)
	body, err := json.Marshal(c.input("", nil))
	require.NoError(t, err)
	run := streamtest.Open(t, bridgetest.Context(t), http.MethodPost, e.URL+"/agents/"+agent, string(body), nil)
	require.Equal(t, http.StatusOK, run.Status, run.Body)
	return run.Rest()
}

// copyLog stores log from's events again as log id of key: what the
// version before kept, under its key.
func copyLog(t *testing.T, st store.Threads, from, id, key string, finished bool) {
	t.Helper()
	ctx := bridgetest.Context(t)
	require.NoError(t, st.StartRunLog(ctx, &store.RunLog{ID: id, Key: key, RunID: "run-" + id, Form: "agui"}))
	batches, err := st.ReadRunLog(ctx, from, 0, 1<<20)
	require.NoError(t, err)
	for i, b := range batches {
		require.NoError(t, st.AppendRunLog(ctx, id, b, finished && i == len(batches)-1))
	}
}

// Run logs kept before the agent was part of their key (under
// "thread/<id>": a run of a replica of the version before, during a
// rolling upgrade) are still read: joined with Last-Event-ID and stopped
// through the agent the thread is stored with, and through no other;
// deleting the thread drops them.
func TestRunLogsOfTheKeyBefore(t *testing.T) {
	e := twoAgents(t)
	ctx := bridgetest.Context(t)
	frames := runFrames(t, e, "demo", "old", "hi")
	copyLog(t, e.Store, streamtest.RequireNumbered(t, frames, 1), "legacy-1", "thread/old", true)

	h := http.Header{"Last-Event-ID": {"legacy-1:1"}}
	again := streamtest.Open(t, ctx, http.MethodPost, e.URL+"/agents/demo/connect", `{"threadId":"old"}`, h)
	require.Equal(t, http.StatusOK, again.Status, again.Body)
	rest := again.Rest()
	require.Len(t, rest, len(frames)-1)
	for i, f := range rest {
		assert.Equal(t, frames[i+1].Data, f.Data)
		assert.True(t, strings.HasPrefix(f.ID, "legacy-1:"), f.ID)
	}
	other := streamtest.Open(t, ctx, http.MethodPost, e.URL+"/agents/other/connect", `{"threadId":"old"}`, h)
	assert.Equal(t, http.StatusNotFound, other.Status, "the thread is demo's")
	assert.Contains(t, other.Body, `"code":"run_not_kept"`)

	copyLog(t, e.Store, "legacy-1", "legacy-2", "thread/old", false) // in flight
	status, body := bridgetest.Delete(t, ctx, e.URL+"/agents/other/threads/old/run", nil)
	assert.Equal(t, http.StatusNotFound, status, body)
	status, body = bridgetest.Delete(t, ctx, e.URL+"/agents/demo/threads/old/run", nil)
	require.Equal(t, http.StatusAccepted, status, body)
	assert.Contains(t, body, `"runLogId":"legacy-2"`)

	status, body = bridgetest.Delete(t, ctx, e.URL+"/agents/demo/threads/old", nil)
	require.Equal(t, http.StatusNoContent, status, body)
	for _, id := range []string{"legacy-1", "legacy-2"} {
		_, err := e.Store.GetRunLog(context.Background(), "", id)
		assert.ErrorIs(t, err, store.ErrNotFound, "%s is dropped with its thread", id)
	}
}

// A thread run through another agent is that agent's from then on: the
// runs kept of the agent before are dropped, so that no route joins them.
func TestThreadMovedDropsRunLogs(t *testing.T) {
	e := twoAgents(t)
	ctx := bridgetest.Context(t)
	before := streamtest.RequireNumbered(t, runFrames(t, e, "demo", "moved", "hi"), 1)
	copyLog(t, e.Store, before, "legacy-1", "thread/moved", true)
	runFrames(t, e, "other", "moved", "hi again")
	for _, id := range []string{before, "legacy-1"} {
		_, err := e.Store.GetRunLog(ctx, "", id)
		assert.ErrorIs(t, err, store.ErrNotFound, "%s is dropped", id)
		for _, agent := range []string{"demo", "other"} {
			join := streamtest.Open(t, ctx, http.MethodPost, e.URL+"/agents/"+agent+"/connect", `{"threadId":"moved"}`, http.Header{"Last-Event-ID": {id + ":1"}})
			assert.Equal(t, http.StatusNotFound, join.Status, "%s through %s", id, agent)
		}
	}
}
