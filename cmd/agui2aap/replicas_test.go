package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/internal/testkit/pgtest"
	"github.com/aapagui/aapagui/internal/testkit/proctest"
)

// replicas starts two agui2aap processes on one PostgreSQL database (a
// schema of the test's own) in front of one AAP demo agent, and returns
// them with a client of that agent.
func replicas(t *testing.T) (a, b *proctest.Proc, upstream *aap.Client) {
	t.Helper()
	agent := httptest.NewServer(demo.NewAAPAgent(demo.AAPAgentOptions{}))
	t.Cleanup(agent.Close)
	dsn := pgtest.Schema(t)
	args := []string{"--listen", "127.0.0.1:0", "--store", dsn, "--upstream", agent.URL, "--server-tools", "web_search"}
	a = proctest.Start(t, nil, args...)
	b = proctest.Start(t, nil, args...)
	return a, b, aap.NewClient(agent.URL, aap.ClientOptions{})
}

// thread is an AG-UI client's side of one thread, kept as HttpAgent keeps
// it: each run sends the whole history, and the run's events are added to
// it.
type thread struct {
	id       string
	messages []map[string]any
	tools    []map[string]any
	n        int
}

// runResult is what a run showed: its texts, tool calls and interrupts.
type runResult struct {
	texts      []string
	calls      map[string]string // toolCallId → name
	interrupts []map[string]any
	errors     []string
}

func (th *thread) say(text string) {
	th.n++
	th.messages = append(th.messages, map[string]any{"id": fmt.Sprintf("u%d", th.n), "role": "user", "content": text})
}

func (th *thread) answer(callID, content string) {
	th.n++
	th.messages = append(th.messages, map[string]any{"id": fmt.Sprintf("t%d", th.n), "role": "tool", "toolCallId": callID, "content": content})
}

func (th *thread) body(resume []map[string]any) string {
	th.n++
	in := map[string]any{"threadId": th.id, "runId": fmt.Sprintf("r%d", th.n), "state": map[string]any{},
		"messages": th.messages, "tools": th.tools, "context": []any{}, "forwardedProps": map[string]any{}}
	if in["tools"] == nil {
		in["tools"] = []any{}
	}
	if resume != nil {
		in["resume"] = resume
	}
	b, _ := json.Marshal(in)
	return string(b)
}

// run posts the next run to p and applies its events.
func (th *thread) run(t *testing.T, p *proctest.Proc, resume ...map[string]any) runResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp := post(t, ctx, p.URL()+"/agents/demo", th.body(resume))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	res := runResult{calls: map[string]string{}}
	find := func(id string) map[string]any {
		for _, m := range th.messages {
			if m["id"] == id {
				return m
			}
		}
		m := map[string]any{"id": id, "role": "assistant"}
		th.messages = append(th.messages, m)
		return m
	}
	calls := map[string]map[string]any{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev map[string]any
		require.NoError(t, json.Unmarshal([]byte(data), &ev))
		str := func(k string) string { s, _ := ev[k].(string); return s }
		switch str("type") {
		case "TEXT_MESSAGE_START":
			find(str("messageId"))["content"] = ""
		case "TEXT_MESSAGE_CONTENT":
			m := find(str("messageId"))
			m["content"] = m["content"].(string) + str("delta")
		case "TEXT_MESSAGE_END":
			res.texts = append(res.texts, find(str("messageId"))["content"].(string))
		case "TOOL_CALL_START":
			parent := str("parentMessageId")
			if parent == "" {
				parent = str("toolCallId")
			}
			m := find(parent)
			tc := map[string]any{"id": str("toolCallId"), "type": "function", "function": map[string]any{"name": str("toolCallName"), "arguments": ""}}
			list, _ := m["toolCalls"].([]any)
			m["toolCalls"] = append(list, tc)
			calls[str("toolCallId")] = tc
			res.calls[str("toolCallId")] = str("toolCallName")
		case "TOOL_CALL_ARGS":
			f := calls[str("toolCallId")]["function"].(map[string]any)
			f["arguments"] = f["arguments"].(string) + str("delta")
		case "TOOL_CALL_RESULT":
			th.messages = append(th.messages, map[string]any{"id": str("messageId"), "role": "tool", "toolCallId": str("toolCallId"), "content": str("content")})
		case "RUN_FINISHED":
			if o, ok := ev["outcome"].(map[string]any); ok {
				if list, ok := o["interrupts"].([]any); ok {
					for _, it := range list {
						res.interrupts = append(res.interrupts, it.(map[string]any))
					}
				}
			}
		case "RUN_ERROR":
			res.errors = append(res.errors, str("message"))
		}
	}
	require.NoError(t, sc.Err())
	require.Empty(t, res.errors)
	return res
}

var weatherTool = map[string]any{"name": "get_weather", "description": "Weather at a place",
	"parameters": map[string]any{"type": "object", "properties": map[string]any{"location": map[string]any{"type": "string"}}}}

// HttpAgent runs on one thread alternating between two replicas stay on
// one AAP session, through a client tool and a permission asked on one
// replica and answered on the other.
func TestReplicasAlternate(t *testing.T) {
	a, b, upstream := replicas(t)
	th := &thread{id: "alternating", tools: []map[string]any{weatherTool}}

	th.say("hello")
	assert.Equal(t, []string{"You said: hello"}, th.run(t, a).texts)

	th.say("weather in Oslo")
	r := th.run(t, b)
	require.Len(t, r.calls, 1)
	var callID string
	for id, name := range r.calls {
		require.Equal(t, "get_weather", name)
		callID = id
	}
	th.answer(callID, "sunny")
	assert.Equal(t, []string{"The weather in Oslo: sunny"}, th.run(t, a).texts, "A sends B's call's result")

	th.say("search cats")
	r = th.run(t, b)
	require.Len(t, r.interrupts, 1, "B asks permission")
	r = th.run(t, a, map[string]any{"interruptId": r.interrupts[0]["id"], "status": "resolved", "payload": map[string]any{"approved": true}})
	require.NotEmpty(t, r.texts, "A resumes the interrupt B opened")
	assert.Contains(t, r.texts[len(r.texts)-1], "Here is what I found. Results for cats")

	th.say("bye")
	assert.Equal(t, []string{"You said: bye"}, th.run(t, b).texts)

	var sessions []aap.SessionInfo
	for s, err := range upstream.Sessions(context.Background()) {
		require.NoError(t, err)
		sessions = append(sessions, s)
	}
	require.Len(t, sessions, 1, "one AAP session behind the thread, whichever replica ran it")
	hist, err := upstream.History(context.Background(), sessions[0].SessionID, aap.HistoryFull)
	require.NoError(t, err)
	var users []string
	for _, m := range hist {
		if u, ok := m.(*aap.UserMessage); ok {
			users = append(users, u.Content.Text)
		}
	}
	assert.Equal(t, []string{"hello", "weather in Oslo", "search cats", "bye"}, users)
}

// Two runs on one thread sent at once, one through each replica: exactly
// one runs and the other gets 409 with Retry-After, round after round.
//
// The winner's run is "long 1000000" (about 100 MB of events, far more than
// the sockets of both hops buffer) and is not read until the loser has its
// answer, so it is still running when the loser's request arrives however
// slowly the machine schedules the two; then its client leaves. A round
// whose two runs both find the lock still held by the previous round's
// leaving run is sent again, as a client honouring Retry-After would.
func TestReplicasConcurrentRuns(t *testing.T) {
	a, b, _ := replicas(t)
	const rounds = 20
	for round := range rounds {
		body := fmt.Sprintf(`{"threadId":"contended","runId":"r%d","state":{},"messages":[{"id":"u%d","role":"user","content":"long 1000000"}],"tools":[],"context":[],"forwardedProps":{}}`, round, round)
		proctest.OneWins(t, fmt.Sprintf("round %d", round), body, a.URL()+"/agents/demo", b.URL()+"/agents/demo")
	}
}

// Replica A is killed mid-run: the thread runs through replica B within
// 10 s.
func TestReplicaKilledMidRun(t *testing.T) {
	t.Parallel()
	a, b, _ := replicas(t)
	ctx := context.Background()
	first := `{"id":"u1","role":"user","content":"long 1000000"}`
	resp := post(t, ctx, a.URL()+"/agents/demo", runBody("r1", first))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	sc := bufio.NewScanner(resp.Body)
	for deltas := 0; deltas < 3 && sc.Scan(); {
		if strings.Contains(sc.Text(), `"TEXT_MESSAGE_CONTENT"`) {
			deltas++
		}
	}
	a.Kill()
	killed := time.Now()
	next := runBody("r2", first+`,{"id":"u2","role":"user","content":"still there?"}`)
	for {
		resp := post(t, ctx, b.URL()+"/agents/demo", next)
		if resp.StatusCode == http.StatusOK {
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			assert.Contains(t, string(body), "RUN_FINISHED")
			break
		}
		require.Equal(t, http.StatusConflict, resp.StatusCode)
		require.NotEmpty(t, resp.Header.Get("Retry-After"))
		require.Less(t, time.Since(killed), 10*time.Second, "the dead replica's lock was not taken over")
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("thread usable through B %s after kill -9 of A", time.Since(killed).Round(10*time.Millisecond))
}
