package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/internal/testkit/pgtest"
	"github.com/aapagui/aapagui/internal/testkit/proctest"
	"github.com/aapagui/aapagui/internal/testkit/streamtest"
)

// pacedAgent is an AG-UI agent that answers "short" with one word at
// once, and anything else with a word every 20 ms, never finishing: a
// model writing a long answer.
func pacedAgent(t *testing.T) string {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\n\n")
		fmt.Fprint(w, "data: {\"type\":\"TEXT_MESSAGE_START\",\"messageId\":\"m1\",\"role\":\"assistant\"}\n\n")
		if strings.Contains(string(body), "short") {
			fmt.Fprint(w, "data: {\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m1\",\"delta\":\"done\"}\n\n")
			fmt.Fprint(w, "data: {\"type\":\"TEXT_MESSAGE_END\",\"messageId\":\"m1\"}\n\n")
			fmt.Fprint(w, "data: {\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r\"}\n\n")
			return
		}
		for i := 0; ; i++ {
			fmt.Fprintf(w, "data: {\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m1\",\"delta\":\"w%d \"}\n\n", i)
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}))
	t.Cleanup(s.Close)
	return s.URL
}

// deadTurnArgs are the flags of a replica whose dead turns end soon: a
// lease of one second, turns that outlive their clients.
func deadTurnArgs(storeArg, upstream string) []string {
	return []string{"--listen", "127.0.0.1:0", "--store", storeArg, "--upstream", upstream,
		"--lease-ttl", "1s", "--on-client-gone", "finish"}
}

// interruptedStop checks that frames end with the turn_stop of a turn
// whose server stopped.
func interruptedStop(t *testing.T, frames []streamtest.Frame) {
	t.Helper()
	require.NotEmpty(t, frames)
	last := frames[len(frames)-1]
	assert.Equal(t, "turn_stop", last.Event)
	assert.Contains(t, last.Data, `"stopReason":"error"`)
	assert.Contains(t, last.Data, `"code":"turn_interrupted"`)
}

// startLongTurn creates a session on url and starts a long turn on it,
// read until its 80th word (past the first checkpoint); it returns the
// session, the frames read and the turn's stream.
func startLongTurn(t *testing.T, ctx context.Context, url string) (string, []streamtest.Frame, *streamtest.Stream) {
	t.Helper()
	created, err := aap.NewClient(url, aap.ClientOptions{}).CreateSession(ctx, &aap.PostSessionsRequest{Agent: aap.AgentConfig{Name: "agent"}})
	require.NoError(t, err)
	id := created.SessionID
	turn := streamtest.Open(t, ctx, http.MethodPost, url+"/sessions/"+id+"/turns", `{"stream":"delta","messages":[{"role":"user","content":"write a lot"}]}`, nil)
	require.Equal(t, http.StatusOK, turn.Status, turn.Body)
	return id, turn.Until(t, "w80 ", 1), turn
}

// afterDeadTurn checks, on url, what a dead turn left of session id: its
// history holds the user's message and the answer as far as it was
// stored (the agent's words from the first, not none), and the session
// takes its next turn.
func afterDeadTurn(t *testing.T, ctx context.Context, url, id string) {
	t.Helper()
	c := aap.NewClient(url, aap.ClientOptions{})
	hist, err := c.History(ctx, id, aap.HistoryFull)
	require.NoError(t, err)
	require.Len(t, hist, 2, "the user's message and the partial answer")
	am, ok := hist[1].(*aap.AssistantMessage)
	require.True(t, ok, "%T", hist[1])
	words := strings.Fields(am.Content.Text)
	require.NotEmpty(t, words)
	for i, w := range words {
		require.Equal(t, fmt.Sprintf("w%d", i), w, "the stored answer is what the agent said, up to a point")
	}

	resp, err := c.Turn(ctx, id, &aap.PostSessionTurnRequest{Messages: []aap.Message{aap.UserText("short")}})
	require.NoError(t, err, "the next turn")
	assert.Equal(t, aap.StopEndTurn, resp.StopReason)
}

// A turn whose process is killed (SIGKILL) mid-answer, on SQLite: after
// the restart, a client rejoining the turn gets it from its start to a
// turn_stop error naming the interruption, one rejoining with the last id
// it had gets exactly the rest, up to the same end; the history holds the
// partial answer and the next turn runs.
func TestKilledTurnEndsForRejoiners(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	args := deadTurnArgs("sqlite:"+filepath.Join(t.TempDir(), "aap2agui.db"), pacedAgent(t))
	a := proctest.Start(t, nil, args...)
	id, had, _ := startLongTurn(t, ctx, a.URL())
	a.Kill()

	b := proctest.Start(t, nil, args...)
	turn := b.URL() + "/sessions/" + id + "/turn"
	join := streamtest.Open(t, ctx, http.MethodGet, turn, "", nil)
	require.Equal(t, http.StatusOK, join.Status, join.Body)
	all := join.Rest()
	streamtest.RequireNumbered(t, all, 1)
	interruptedStop(t, all)
	stored := all[:len(all)-1] // the client may have had a few more
	require.LessOrEqual(t, len(stored), len(had)+50)
	assert.Equal(t, had[:min(len(had), len(stored))], stored[:min(len(had), len(stored))], "what was recorded, as the client had it")

	for _, last := range []string{had[len(had)-1].ID, had[len(had)/2].ID} {
		rest := streamtest.Open(t, ctx, http.MethodGet, turn, "", http.Header{"Last-Event-ID": {last}})
		require.Equal(t, http.StatusOK, rest.Status, rest.Body)
		got := rest.Rest()
		require.NotEmpty(t, got)
		assert.Equal(t, all[len(all)-1], got[len(got)-1], "the same end, whatever the client had")
	}

	afterDeadTurn(t, ctx, b.URL(), id)
}

// Two replicas on PostgreSQL: a client follows a turn of replica a on
// replica b (it rejoined there); a is killed mid-answer. The follower is
// told the turn was interrupted and its stream ends; a client that
// rejoins on b afterwards gets the same end; the history holds the
// partial answer and the next turn runs on b.
func TestKilledReplicaTurnEndsOnSurvivor(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	args := deadTurnArgs(pgtest.Schema(t), pacedAgent(t))
	a := proctest.Start(t, nil, args...)
	b := proctest.Start(t, nil, args...)
	id, had, _ := startLongTurn(t, ctx, a.URL())
	turn := b.URL() + "/sessions/" + id + "/turn"
	follower := streamtest.Open(t, ctx, http.MethodGet, turn, "", http.Header{"Last-Event-ID": {had[len(had)-1].ID}})
	require.Equal(t, http.StatusOK, follower.Status, follower.Body)
	follower.Until(t, "w90 ", 1) // following live, on b
	a.Kill()

	rest := follower.Rest()
	interruptedStop(t, rest)
	later := streamtest.Open(t, ctx, http.MethodGet, turn, "", http.Header{"Last-Event-ID": {had[len(had)-1].ID}})
	require.Equal(t, http.StatusOK, later.Status, later.Body)
	laterRest := later.Rest()
	interruptedStop(t, laterRest)
	assert.Equal(t, rest[len(rest)-1], laterRest[len(laterRest)-1], "the same end")

	afterDeadTurn(t, ctx, b.URL(), id)
}
