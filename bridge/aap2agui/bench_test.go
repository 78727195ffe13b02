package aap2agui_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/store"
)

// benchDeltas is the number of text deltas of one benchmarked run.
const benchDeltas = 10_000

// benchClient is the HTTP client of the benchmarks: one pooled connection
// per server, as a real application keeps.
var benchClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}

// post sends a JSON body and returns the response.
func post(b *testing.B, url, body string) *http.Response {
	b.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := benchClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		b.Fatalf("POST %s: HTTP %d: %s", url, resp.StatusCode, msg)
	}
	return resp
}

// drain reads a response to its end and returns how many bytes it had.
func drain(b *testing.B, resp *http.Response) int64 {
	b.Helper()
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// measure runs turn b.N times, timing only turn, and reports the time and
// the allocations per delta. Allocations count the whole process: the
// client, aap2agui and the demo agent it calls.
func measure(b *testing.B, prepare func() string, turn func(string)) {
	b.ReportAllocs()
	var m0, m1 runtime.MemStats
	var mallocs uint64
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		arg := prepare()
		runtime.ReadMemStats(&m0)
		b.StartTimer()
		turn(arg)
		b.StopTimer()
		runtime.ReadMemStats(&m1)
		mallocs += m1.Mallocs - m0.Mallocs
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchDeltas, "ns/delta")
	b.ReportMetric(float64(mallocs)/float64(b.N)/benchDeltas, "allocs/delta")
}

// benchTurn streams "long 10000" from the demo agent through aap2agui in
// mode, one new session per turn (so that every run sends the same
// history), reading the response to its end.
func benchTurn(b *testing.B, mode aap.StreamMode, configure ...func(*aap2agui.Config)) {
	cfg := aap2agui.Config{Upstream: demoAgent(b), Store: store.NewMemory()}
	for _, f := range configure {
		f(&cfg)
	}
	srv, err := aap2agui.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	create := func() string {
		resp := post(b, hs.URL+"/sessions", `{"agent":{"name":"agent"}}`)
		defer resp.Body.Close()
		var out aap.PostSessionsResponse
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			b.Fatal(err)
		}
		return out.SessionID
	}
	body := `{"stream":"` + string(mode) + `","messages":[{"role":"user","content":"long 10000"}]}`

	// Check once that the turn is what it should be.
	resp := post(b, hs.URL+"/sessions/"+create()+"/turns", body)
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	switch mode {
	case aap.StreamNone:
		var r aap.PostSessionTurnResponse
		if err := json.Unmarshal(got, &r); err != nil || r.StopReason != aap.StopEndTurn || len(r.Messages) != 1 {
			b.Fatalf("unexpected response (%v): %.200s", err, got)
		}
	default:
		if n := strings.Count(string(got), "event: text_delta\n"); n != benchDeltas || !strings.HasSuffix(string(got), "event: turn_stop\ndata: {\"stopReason\":\"end_turn\"}\n\n") {
			b.Fatalf("got %d text_delta events; the stream ends %q", n, got[max(0, len(got)-80):])
		}
	}

	measure(b, create, func(id string) { drain(b, post(b, hs.URL+"/sessions/"+id+"/turns", body)) })
}

// BenchmarkTurn10kDeltas is one turn of 10,000 text deltas through
// aap2agui in delta mode.
func BenchmarkTurn10kDeltas(b *testing.B) { benchTurn(b, aap.StreamDelta) }

// BenchmarkTurn10kDeltasTraced is BenchmarkTurn10kDeltas with tracing
// on: every request, upstream call and store operation a sampled span,
// batched to an exporter that drops them.
func BenchmarkTurn10kDeltasTraced(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	benchTurn(b, aap.StreamDelta, func(c *aap2agui.Config) { c.TracerProvider = tp })
}

// BenchmarkTurnNone10kDeltas is the same turn in none mode: one JSON
// response at the end.
func BenchmarkTurnNone10kDeltas(b *testing.B) { benchTurn(b, aap.StreamNone) }

// BenchmarkDirect10kDeltas is the same run read directly from the demo
// agent: the baseline of BenchmarkTurn10kDeltas.
func BenchmarkDirect10kDeltas(b *testing.B) {
	url := demoAgent(b)
	const body = `{"threadId":"thread-1","runId":"run-1","state":{},"messages":[{"id":"msg-1","role":"user","content":"long 10000"}],"tools":[],"context":[],"forwardedProps":{}}`
	resp := post(b, url, body)
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if n := strings.Count(string(got), `"type":"TEXT_MESSAGE_CONTENT"`); n != benchDeltas {
		b.Fatalf("got %d TEXT_MESSAGE_CONTENT events", n)
	}
	measure(b, func() string { return "" }, func(string) { drain(b, post(b, url, body)) })
}

// BenchmarkTurnCancelling10kDeltas is BenchmarkTurn10kDeltas for a user
// who moves on while a permission prompt is open: the run carries the
// message and a cancelled resume entry (CancelRunAuto watches it for a
// message the agent did not read); the demo agent answers in that run.
func BenchmarkTurnCancelling10kDeltas(b *testing.B) {
	srv, err := aap2agui.New(aap2agui.Config{Upstream: demoAgent(b), Store: store.NewMemory(),
		Agent: aap.AgentInfo{Name: "agent", Tools: []aap.ToolSpec{demo.SearchToolSpec}}})
	if err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	prompted := func() string {
		resp := post(b, hs.URL+"/sessions", `{"agent":{"name":"agent","tools":[{"name":"web_search"}]}}`)
		var out aap.PostSessionsResponse
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		resp = post(b, hs.URL+"/sessions/"+out.SessionID+"/turns", `{"stream":"none","messages":[{"role":"user","content":"search dogs"}]}`)
		var turn aap.PostSessionTurnResponse
		if err := json.NewDecoder(resp.Body).Decode(&turn); err != nil || turn.StopReason != aap.StopToolUse {
			b.Fatalf("the search did not ask for permission (%v): %+v", err, turn)
		}
		resp.Body.Close()
		return out.SessionID
	}
	const body = `{"stream":"delta","messages":[{"role":"user","content":"long 10000"}]}`
	resp := post(b, hs.URL+"/sessions/"+prompted()+"/turns", body)
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if n := strings.Count(string(got), "event: text_delta\n"); n != benchDeltas {
		b.Fatalf("got %d text_delta events; the stream ends %q", n, got[max(0, len(got)-80):])
	}
	measure(b, prompted, func(id string) { drain(b, post(b, hs.URL+"/sessions/"+id+"/turns", body)) })
}

// BenchmarkTurnHistory1000x2KB is one short turn of a session whose
// history holds 1,000 messages of 2 KB (2 MB), through aap2agui on a
// memory store, to an agent that reads the run without decoding it and
// answers at once: what a long conversation costs aap2agui each turn.
// Each turn has a session of its own, made beforehand in the store, so
// that every turn carries the same history: the history is read from the
// store (a session whose last turn ran elsewhere).
func BenchmarkTurnHistory1000x2KB(b *testing.B) { benchTurnHistory(b, false) }

// BenchmarkTurnHistory1000x2KBCached is BenchmarkTurnHistory1000x2KB for
// the usual turn: the session's last turn ran on this process, which
// cached its history.
func BenchmarkTurnHistory1000x2KBCached(b *testing.B) { benchTurnHistory(b, true) }

func benchTurnHistory(b *testing.B, cached bool) {
	agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: {\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\n\n"+
			"data: {\"type\":\"TEXT_MESSAGE_START\",\"messageId\":\"m\",\"role\":\"assistant\"}\n\n"+
			"data: {\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m\",\"delta\":\"ok\"}\n\n"+
			"data: {\"type\":\"TEXT_MESSAGE_END\",\"messageId\":\"m\"}\n\n"+
			"data: {\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r\"}\n\n")
	}))
	defer agent.Close()
	st := store.NewMemory()
	srv, err := aap2agui.New(aap2agui.Config{Upstream: agent.URL, Store: st})
	if err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	text := strings.Repeat("x", 2000)
	seed := make([]store.Entry, 1000)
	for i := range seed {
		var m aap.Message = &aap.UserMessage{Content: aap.TextContent(text)}
		if i%2 == 1 {
			m = &aap.AssistantMessage{Content: aap.TextContent(text)}
		}
		seed[i] = store.Entry{Message: m, AGUIID: "m" + strconv.Itoa(i)}
	}
	ids := make([]string, b.N)
	for i := range ids {
		ids[i] = "sess_bench" + strconv.Itoa(i)
		sess := &store.Session{ID: ids[i], Agent: aap.AgentConfig{Name: "agent"}}
		if err := st.CreateSession(context.Background(), sess, seed, 0); err != nil {
			b.Fatal(err)
		}
	}
	body := `{"stream":"delta","messages":[{"role":"user","content":"hello"}]}`
	b.ReportAllocs()
	b.ResetTimer()
	for _, id := range ids {
		if cached {
			// The turn before, which reads the history and caches it.
			b.StopTimer()
			drain(b, post(b, hs.URL+"/sessions/"+id+"/turns", body))
			b.StartTimer()
		}
		drain(b, post(b, hs.URL+"/sessions/"+id+"/turns", body))
	}
}
