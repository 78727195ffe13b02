package agui2aap_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/internal/sse"
)

const longDeltas = 10000

// streamRun posts a RunAgentInput and reads the AG-UI stream to its end,
// decoding every event as a client would; it returns the number of
// events and the messages the run produced.
func streamRun(b *testing.B, url string, in *types.RunAgentInput) (int, []types.Message) {
	body, err := json.Marshal(in)
	if err != nil {
		b.Fatal(err)
	}
	return streamBody(b, url, body)
}

// streamBody is streamRun with the RunAgentInput already encoded.
func streamBody(b *testing.B, url string, body []byte) (int, []types.Message) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("status %d", resp.StatusCode)
	}
	n := 0
	var msgs []types.Message
	var text []byte
	var textID string
	for ev, err := range sse.Read(resp.Body, sse.ReadOptions{}) {
		if err != nil {
			b.Fatal(err)
		}
		decoded, err := agui.DecodeEvent(ev.Data)
		if err != nil {
			b.Fatal(err)
		}
		n++
		switch e := decoded.(type) {
		case *events.TextMessageStartEvent:
			textID, text = e.MessageID, text[:0]
		case *events.TextMessageContentEvent:
			text = append(text, e.Delta...)
		case *events.TextMessageEndEvent:
			msgs = append(msgs, types.Message{ID: textID, Role: types.RoleAssistant, Content: string(text)})
		case *events.RunErrorEvent:
			b.Fatalf("RUN_ERROR: %s", e.Message)
		}
	}
	return n, msgs
}

// BenchmarkRun10kDeltas: one run "long 10000" through agui2aap in front of
// the AAP demo agent, read to the end and decoded. Each op is a new thread
// (a new AAP session).
func BenchmarkRun10kDeltas(b *testing.B) {
	e := newEnv(b)
	b.ReportAllocs()
	b.ResetTimer()
	events := 0
	for i := range b.N {
		in := types.RunAgentInput{
			ThreadID: "bench-" + strconv.Itoa(i), RunID: "run", State: map[string]any{},
			Messages: []types.Message{{ID: "u", Role: types.RoleUser, Content: "long " + strconv.Itoa(longDeltas)}},
			Tools:    []types.Tool{}, Context: []types.Context{}, ForwardedProps: map[string]any{},
		}
		n, _ := streamRun(b, e.URL+"/agents/demo", &in)
		if n < longDeltas {
			b.Fatalf("%d events", n)
		}
		events = n
	}
	b.ReportMetric(float64(events), "events/op")
}

// BenchmarkDirect10kDeltas: the same turn read directly from the AAP demo
// agent with the AAP client (stream delta): a new session, one turn.
func BenchmarkDirect10kDeltas(b *testing.B) {
	up := demoAAPServer(b)
	cl := aap.NewClient(up, aap.ClientOptions{})
	ctx := bridgetest.Context(b)
	b.ReportAllocs()
	b.ResetTimer()
	events := 0
	for range b.N {
		s, err := cl.CreateSession(ctx, &aap.PostSessionsRequest{Agent: aap.AgentConfig{Name: "demo"}})
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for _, err := range cl.StreamTurn(ctx, s.SessionID, &aap.PostSessionTurnRequest{
			Stream: aap.StreamDelta, Messages: []aap.Message{aap.UserText("long " + strconv.Itoa(longDeltas))},
		}) {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n < longDeltas {
			b.Fatalf("%d events", n)
		}
		events = n
	}
	b.ReportMetric(float64(events), "events/op")
}

func BenchmarkRunHistory10(b *testing.B)   { benchRunHistory(b, 10, "") }
func BenchmarkRunHistory1000(b *testing.B) { benchRunHistory(b, 1000, "") }

// BenchmarkRunHistory1000x2KB is a run on a 2 MB conversation: a
// thousand messages of about 2 KB.
func BenchmarkRunHistory1000x2KB(b *testing.B) {
	benchRunHistory(b, 1000, strings.Repeat("lorem ipsum ", 170))
}

// benchRunHistory measures one run on a thread that already has n earlier
// messages (each of the words pad, then a number): its RunAgentInput carries the whole history plus one new user
// message (encoded outside the timer: the client's cost is not the
// bridge's). Outside the timer, each op first moves the thread to a new
// session seeded with a history of n messages (new ids, so the bridge
// starts over), so that every measured run sees exactly n earlier
// messages; the previous AAP session is deleted to bound memory.
func benchRunHistory(b *testing.B, n int, pad string) {
	e := newEnv(b)
	url := e.URL + "/agents/demo"
	ctx := bridgetest.Context(b)
	prepare := func(op int) []types.Message {
		msgs := make([]types.Message, 0, n+1)
		for i := range n - 1 {
			id := fmt.Sprintf("op%d-m%d", op, i)
			if i%2 == 0 {
				msgs = append(msgs, types.Message{ID: id, Role: types.RoleUser, Content: pad + "question " + strconv.Itoa(i)})
			} else {
				msgs = append(msgs, types.Message{ID: id, Role: types.RoleAssistant, Content: "You said: " + pad + "question " + strconv.Itoa(i-1)})
			}
		}
		in := types.RunAgentInput{ThreadID: "history", RunID: fmt.Sprintf("seed-%d", op), State: map[string]any{}, Messages: msgs,
			Tools: []types.Tool{}, Context: []types.Context{}, ForwardedProps: map[string]any{}}
		_, produced := streamRun(b, url, &in)
		return append(msgs, produced...)
	}
	var prev string
	b.ReportAllocs()
	b.ResetTimer()
	for op := range b.N {
		b.StopTimer()
		if prev != "" {
			if err := e.AAPClient.DeleteSession(ctx, prev); err != nil {
				b.Fatal(err)
			}
		}
		hist := prepare(op)
		if len(hist) != n {
			b.Fatalf("prepared %d messages, want %d", len(hist), n)
		}
		hist = append(hist, types.Message{ID: fmt.Sprintf("op%d-new", op), Role: types.RoleUser, Content: "one more"})
		in := types.RunAgentInput{ThreadID: "history", RunID: fmt.Sprintf("run-%d", op), State: map[string]any{}, Messages: hist,
			Tools: []types.Tool{}, Context: []types.Context{}, ForwardedProps: map[string]any{}}
		body, err := json.Marshal(&in)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, produced := streamBody(b, url, body); len(produced) != 1 {
			b.Fatalf("the run produced %d messages", len(produced))
		}
		b.StopTimer()
		th, err := e.Store.GetThread(ctx, "", "history")
		if err != nil {
			b.Fatal(err)
		}
		prev = th.SessionID
		b.StartTimer()
	}
}

// BenchmarkHydration1000x2KB is a hydration (a run with no messages) of a
// thread whose AAP session holds a 2 MB conversation: a thousand messages
// of about 2 KB, read from the AAP server and sent back as one
// MESSAGES_SNAPSHOT.
func BenchmarkHydration1000x2KB(b *testing.B) {
	e := newEnv(b)
	url := e.URL + "/agents/demo"
	pad := strings.Repeat("lorem ipsum ", 170)
	msgs := make([]types.Message, 0, 1000)
	for i := range 999 {
		role := types.RoleUser
		if i%2 == 1 {
			role = types.RoleAssistant
		}
		msgs = append(msgs, types.Message{ID: fmt.Sprintf("m%d", i), Role: role, Content: pad + strconv.Itoa(i)})
	}
	streamRun(b, url, &types.RunAgentInput{ThreadID: "long", RunID: "seed", State: map[string]any{}, Messages: msgs,
		Tools: []types.Tool{}, Context: []types.Context{}, ForwardedProps: map[string]any{}})
	hydration, err := json.Marshal(&types.RunAgentInput{ThreadID: "long", RunID: "h", State: map[string]any{}, Messages: []types.Message{},
		Tools: []types.Tool{}, Context: []types.Context{}, ForwardedProps: map[string]any{}})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if n, _ := streamBody(b, url, hydration); n < 3 {
			b.Fatalf("%d events", n)
		}
	}
}
