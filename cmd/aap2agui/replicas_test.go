package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/cmd/internal/clitest"
	"github.com/aapagui/aapagui/internal/testkit/pgtest"
	"github.com/aapagui/aapagui/internal/testkit/proctest"
)

// replicas starts two aap2agui processes on one PostgreSQL database (a
// schema of the test's own), each with its built-in AG-UI demo agent: the
// agent keeps nothing between runs, so this is two replicas in front of
// one agent service.
func replicas(t *testing.T) (a, b *proctest.Proc) {
	t.Helper()
	dsn := pgtest.Schema(t)
	a = proctest.Start(t, nil, "--listen", "127.0.0.1:0", "--store", dsn)
	b = proctest.Start(t, nil, "--listen", "127.0.0.1:0", "--store", dsn)
	return a, b
}

var weatherTool = aap.ToolSpec{Name: "get_weather", Description: "Weather at a place", Parameters: json.RawMessage(`{"type":"object","properties":{"location":{"type":"string"}}}`)}

// outcome is what a client sees of a turn.
type outcome struct {
	stop  aap.StopReason
	calls []*aap.ToolCall
	text  string
}

func turn(t *testing.T, c *aap.Client, id string, mode aap.StreamMode, msgs ...aap.Message) outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req := &aap.PostSessionTurnRequest{Stream: mode, Messages: msgs}
	var o outcome
	if mode == aap.StreamNone {
		resp, err := c.Turn(ctx, id, req)
		require.NoError(t, err)
		o.stop = resp.StopReason
		for _, m := range resp.Messages {
			if am, ok := m.(*aap.AssistantMessage); ok {
				if !am.Content.IsBlocks() {
					o.text += am.Content.Text
				}
				for _, b := range am.Content.Blocks {
					switch b := b.(type) {
					case *aap.TextBlock:
						o.text += b.Text
					case *aap.ToolUseBlock:
						o.calls = append(o.calls, &aap.ToolCall{ToolCallID: b.ToolCallID, Name: b.Name, Input: b.Input})
					}
				}
			}
		}
		return o
	}
	for ev, err := range c.StreamTurn(ctx, id, req) {
		require.NoError(t, err)
		switch ev := ev.(type) {
		case *aap.TextDelta:
			o.text += ev.Delta
		case *aap.Text:
			o.text += ev.Text
		case *aap.ToolCall:
			o.calls = append(o.calls, ev)
		case *aap.TurnStop:
			o.stop = ev.StopReason
		}
	}
	return o
}

// A conversation whose turns alternate between two replicas, in every
// stream mode, with a server tool that needs permission (asked on one
// replica, granted on the other) and a client tool (called on one, its
// result sent to the other).
func TestReplicasAlternate(t *testing.T) {
	a, b := replicas(t)
	ca := aap.NewClient(a.URL(), aap.ClientOptions{})
	cb := aap.NewClient(b.URL(), aap.ClientOptions{})
	for _, mode := range []aap.StreamMode{aap.StreamDelta, aap.StreamMessage, aap.StreamNone} {
		t.Run(string(mode), func(t *testing.T) {
			created, err := ca.CreateSession(context.Background(), &aap.PostSessionsRequest{
				Agent: aap.AgentConfig{Name: "demo", Tools: []aap.ServerToolRef{{Name: "web_search"}}},
				Tools: []aap.ToolSpec{weatherTool},
			})
			require.NoError(t, err)
			id := created.SessionID

			o := turn(t, ca, id, mode, aap.UserText("search cats"))
			require.Equal(t, aap.StopToolUse, o.stop, "A asks permission")
			require.Len(t, o.calls, 1)
			require.Equal(t, "web_search", o.calls[0].Name)

			o = turn(t, cb, id, mode, &aap.ToolPermissionMessage{ToolCallID: o.calls[0].ToolCallID, Granted: true})
			require.Equal(t, aap.StopEndTurn, o.stop, "B resumes the interrupt A opened")
			assert.Contains(t, o.text, "Here is what I found. Results for cats")

			o = turn(t, ca, id, mode, aap.UserText("weather in Oslo"))
			require.Equal(t, aap.StopToolUse, o.stop)
			require.Len(t, o.calls, 1)
			require.Equal(t, "get_weather", o.calls[0].Name)

			o = turn(t, cb, id, mode, &aap.ToolMessage{ToolCallID: o.calls[0].ToolCallID, Content: aap.TextContent("sunny")})
			require.Equal(t, aap.StopEndTurn, o.stop)
			assert.Equal(t, "The weather in Oslo: sunny", o.text)

			ha, err := ca.History(context.Background(), id, aap.HistoryFull)
			require.NoError(t, err)
			hb, err := cb.History(context.Background(), id, aap.HistoryFull)
			require.NoError(t, err)
			assert.Equal(t, ha, hb, "both replicas show one history")
			assert.Len(t, ha, 8, "user, assistant call, result, answer; user, assistant call, result, answer")
		})
	}
}

// Two turns on one session sent at once, one through each replica: exactly
// one runs and the other gets 409 with Retry-After, round after round;
// the session's history is whole afterwards.
//
// The winner's turn is "long 1000000" (about 100 MB of events, far more
// than the sockets of both hops buffer) and is not read until the loser
// has its answer, so it is still running when the loser's request arrives
// however slowly the machine schedules the two; then its client leaves.
// A round whose two turns both find the lock still held by the previous
// round's leaving turn is sent again, as a client honouring Retry-After
// would.
func TestReplicasConcurrentTurns(t *testing.T) {
	a, b := replicas(t)
	ca := aap.NewClient(a.URL(), aap.ClientOptions{})
	created, err := ca.CreateSession(context.Background(), &aap.PostSessionsRequest{Agent: aap.AgentConfig{Name: "demo"}})
	require.NoError(t, err)
	id := created.SessionID
	const rounds = 20
	for round := range rounds {
		body := fmt.Sprintf(`{"stream":"delta","messages":[{"role":"user","content":"long 1000000 round %d"}]}`, round)
		proctest.OneWins(t, fmt.Sprintf("round %d", round), body, a.URL()+"/sessions/"+id+"/turns", b.URL()+"/sessions/"+id+"/turns")
	}
	// Each round's message is in the history once, in order, each
	// followed by (part of) its answer; the session takes turns again.
	var answer struct {
		StopReason aap.StopReason `json:"stopReason"`
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		codes, resps := proctest.Contend(t, `{"stream":"none","messages":[{"role":"user","content":"hello"}]}`, b.URL()+"/sessions/"+id+"/turns")
		if codes[0] == http.StatusConflict && time.Now().Before(deadline) {
			resps[0].Body.Close()
			time.Sleep(20 * time.Millisecond)
			continue
		}
		require.Equal(t, http.StatusOK, codes[0])
		require.NoError(t, json.NewDecoder(resps[0].Body).Decode(&answer))
		resps[0].Body.Close()
		break
	}
	assert.Equal(t, aap.StopEndTurn, answer.StopReason)
	cb := aap.NewClient(b.URL(), aap.ClientOptions{})
	hist, err := cb.History(context.Background(), id, aap.HistoryFull)
	require.NoError(t, err)
	var users []string
	for i, m := range hist {
		if u, ok := m.(*aap.UserMessage); ok {
			users = append(users, u.Content.Text)
			if i+1 < len(hist) {
				assert.IsType(t, &aap.AssistantMessage{}, hist[i+1], "message %d answers the user", i+1)
			}
		}
	}
	want := make([]string, 0, rounds+1)
	for round := range rounds {
		want = append(want, fmt.Sprintf("long 1000000 round %d", round))
	}
	assert.Equal(t, append(want, "hello"), users)
}

// Replica A is killed mid-turn: the session takes turns through replica B
// within 10 s, with what A had saved.
func TestReplicaKilledMidTurn(t *testing.T) {
	t.Parallel()
	a, b := replicas(t)
	ctx := context.Background()
	ca := aap.NewClient(a.URL(), aap.ClientOptions{})
	created, err := ca.CreateSession(ctx, &aap.PostSessionsRequest{Agent: aap.AgentConfig{Name: "demo"}})
	require.NoError(t, err)
	id := created.SessionID
	require.Equal(t, aap.StopEndTurn, turn(t, ca, id, aap.StreamDelta, aap.UserText("hello")).stop)

	deltas := 0
	for ev, err := range ca.StreamTurn(ctx, id, &aap.PostSessionTurnRequest{Stream: aap.StreamDelta, Messages: []aap.Message{aap.UserText("long 1000000")}}) {
		require.NoError(t, err)
		if _, ok := ev.(*aap.TextDelta); ok {
			if deltas++; deltas == 3 {
				break
			}
		}
	}
	a.Kill()
	killed := time.Now()
	for {
		resp := clitest.Post(t, ctx, b.URL()+"/sessions/"+id+"/turns", `{"messages":[{"role":"user","content":"still there?"}]}`)
		if resp.StatusCode == http.StatusOK {
			break
		}
		require.Equal(t, http.StatusConflict, resp.StatusCode)
		require.NotEmpty(t, resp.Header.Get("Retry-After"))
		require.Less(t, time.Since(killed), 10*time.Second, "the dead replica's lock was not taken over")
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("session usable through B %s after kill -9 of A", time.Since(killed).Round(10*time.Millisecond))
	hist, err := aap.NewClient(b.URL(), aap.ClientOptions{}).History(ctx, id, aap.HistoryFull)
	require.NoError(t, err)
	var users []string
	for _, m := range hist {
		if u, ok := m.(*aap.UserMessage); ok {
			users = append(users, u.Content.Text)
		}
	}
	assert.Equal(t, []string{"hello", "long 1000000", "still there?"}, users, "what A saved is there")
	assert.Equal(t, "You said: hello", hist[1].(*aap.AssistantMessage).Content.Text)
}
