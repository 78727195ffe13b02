package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// agui2aap's dimensions: what an AG-UI client sends (a RunAgentInput, a
// listing) and what the AAP server behind it streams.

// The bounds of agui2aap's inputs, as the table names them.
const (
	g2aBody   = "--max-body (16 MiB)"
	g2aStream = "16 MiB an event, --max-message-size"
)

func agui2aapDims() []scalingDim {
	dims := []scalingDim{
		g2aInputDim("history", "messages in a history", 400, func(n int) g2aInput {
			return g2aInput{messages: jsonList(append(g2aHistory(n), g2aUser("u-last", "hi"))...)}
		}),
		g2aInputDim("calls", "tool calls in one message, with their results", 1000, func(n int) g2aInput {
			return g2aInput{messages: jsonList(append(g2aCallsMessages(n), g2aUser("u-last", "go on"))...), tools: a2gTools(1, 1)}
		}),
		g2aInputDim("parts", "content parts of one message", 2000, func(n int) g2aInput {
			parts := make([]string, n)
			for i := range parts {
				parts[i] = `{"type":"text","text":"sixteen chars.. "}`
			}
			return g2aInput{messages: jsonList(`{"id":"u0","role":"user","content":` + jsonList(parts...) + `}`)}
		}),
		g2aInputDim("tools", "tools, each with its schema", 500, func(n int) g2aInput {
			return g2aInput{messages: jsonList(g2aUser("u0", "hi")), tools: a2gTools(n, 3)}
		}),
		g2aInputDim("schema", "properties of one tool's schema", 1000, func(n int) g2aInput {
			return g2aInput{messages: jsonList(g2aUser("u0", "hi")), tools: a2gTools(1, n)}
		}),
		g2aInputDim("context", "context entries", 1000, func(n int) g2aInput {
			entries := make([]string, n)
			for i := range entries {
				entries[i] = fmt.Sprintf(`{"description":"entry %07d","value":"%s"}`, i, scaleText)
			}
			return g2aInput{messages: jsonList(g2aUser("u0", "hi")), context: jsonList(entries...)}
		}),
		g2aInputDim("state-size", "keys of the state", 2000, func(n int) g2aInput {
			return g2aInput{messages: jsonList(g2aUser("u0", "hi")), state: scaleObject(n)}
		}),
		g2aInputDim("state-depth", "depth of the state", 100, func(n int) g2aInput {
			return g2aInput{messages: jsonList(g2aUser("u0", "hi")), state: scaleNested(n)}
		}),
		{key: "thread-history", dimension: "messages in a history, the thread holding them", via: "a RunAgentInput", bound: g2aBody, n: 400, setup: g2aThreadHistory},
		{key: "hydration", dimension: "messages in a history, hydrated", via: "a RunAgentInput", bound: g2aBody, n: 400, setup: g2aHydration},
		{key: "results", dimension: "results of the server's calls", via: "a RunAgentInput", bound: g2aBody, n: 1000, setup: g2aResults},
		{key: "resume", dimension: "resume entries", via: "a RunAgentInput", bound: g2aBody, n: 200, setup: g2aResume},
	}
	return append(dims, g2aServerDims()...)
}

// g2aServerDims are the dimensions of the AAP server's stream, and of
// the thread listing.
func g2aServerDims() []scalingDim {
	return []scalingDim{
		g2aStreamDim("deltas", "events in a run (text deltas)", 4000, "", func(n int) []byte {
			d := make([]string, n)
			for i := range d {
				d[i] = "a word "
			}
			return aapTurn(aapDelta(nil, d...), aapStopEnd)
		}),
		g2aStreamDim("event-size", "an event's size (KiB of one delta)", 64, g2aStream, func(n int) []byte {
			return aapTurn(aapDelta(nil, strings.Repeat("x", n<<10)), aapStopEnd)
		}),
		g2aStreamDim("call-size", "an event's size (KiB of one call's input)", 64, g2aStream, func(n int) []byte {
			input := `{"q":"` + strings.Repeat("x", n<<10) + `"}`
			return aapTurn(aapEvent(nil, "tool_call", `{"toolCallId":"c0","name":"`+scaleClientTool+`","input":`+input+`}`), aapStopTool)
		}),
		g2aStreamDim("server-calls", "tool calls in one message", 400, "", func(n int) []byte { return g2aCalls(n, scaleClientTool, false) }),
		g2aStreamDim("server-results", "the server's own calls with their results", 400, "", func(n int) []byte { return g2aCalls(n, scaleTrustedTool, true) }),
		g2aStreamDim("interrupts", "interrupts in one outcome (calls asking permission)", 400, "", func(n int) []byte { return g2aCalls(n, scaleServerTool, false) }),
		{key: "threads-page", dimension: "threads of an owner (the first page)", via: "GET …/threads", bound: "--max-threads-per-key", n: 100, reuse: true, setup: g2aThreads("bench", 20)},
		{key: "threads-all", dimension: "threads of an owner (every page)", via: "GET …/threads", bound: "--max-threads-per-key", n: 100, reuse: true, setup: g2aThreads("bench", -20)},
		{key: "threads-other", dimension: "threads of an owner's other agent, skipped", via: "GET …/threads", bound: "--max-threads-per-key", n: 100, reuse: true, setup: g2aThreads("other", 20)},
		{key: "page", dimension: "entries of a listing page", via: "GET …/threads?limit=n", bound: "limit 100", n: 10, reuse: true, setup: g2aThreads("bench", 0)},
	}
}

// g2aInput is a RunAgentInput's parts, each JSON ("" for its default).
type g2aInput struct{ messages, tools, context, state, resume string }

// body is the RunAgentInput of run on thread.
func (in g2aInput) body(thread, run string) []byte {
	def := func(s, d string) string {
		if s == "" {
			return d
		}
		return s
	}
	b := `{"threadId":"` + thread + `","runId":"` + run + `","state":` + def(in.state, "{}") + `,"messages":` + def(in.messages, "[]") +
		`,"tools":` + def(in.tools, "[]") + `,"context":` + def(in.context, "[]") + `,"forwardedProps":{}`
	if in.resume != "" {
		b += `,"resume":` + in.resume
	}
	return []byte(b + "}")
}

// g2aUser is a user message.
func g2aUser(id, text string) string {
	return `{"id":"` + id + `","role":"user","content":` + jsonString(text) + `}`
}

// g2aHistory is a history of n messages, user and assistant by turns,
// user first.
func g2aHistory(n int) []string {
	msgs := make([]string, n)
	for i := range msgs {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		msgs[i] = fmt.Sprintf(`{"id":"h%07d","role":"%s","content":"%s"}`, i, role, scaleText)
	}
	return msgs
}

// g2aCallsMessages are a user message, one assistant message (id) making
// n calls of the client tool, and their n results.
func g2aCallsMessages(n int) []string {
	return append([]string{g2aUser("u0", "call the tool"), g2aCallMessage("a0", n, scaleClientTool)}, g2aResultMessages(n)...)
}

// g2aCallMessage is an assistant message id making n calls of tool.
func g2aCallMessage(id string, n int, tool string) string {
	calls := make([]string, n)
	for i := range calls {
		calls[i] = `{"id":"` + scaleCallID(i) + `","type":"function","function":{"name":"` + tool + `","arguments":"{\"q\":\"x\"}"}}`
	}
	return `{"id":"` + id + `","role":"assistant","toolCalls":` + jsonList(calls...) + `}`
}

// g2aResultMessages are the results of calls 0 to n-1.
func g2aResultMessages(n int) []string {
	out := make([]string, n)
	for i := range out {
		id := scaleCallID(i)
		out[i] = `{"id":"t` + id + `","role":"tool","toolCallId":"` + id + `","content":"a result"}`
	}
	return out
}

// run posts body to agent's endpoint and checks that the stream finished
// without an error and holds every one of want; it returns the stream.
func (r *scaleRun) run(ctx context.Context, agent string, body []byte, want ...string) ([]byte, error) {
	resp, err := r.send(ctx, http.MethodPost, "/agents/"+agent, body)
	if err != nil {
		return nil, err
	}
	return resp, expect(resp, append([]string{`"RUN_FINISHED"`}, want...), "RUN_ERROR")
}

// runOK is a run of body on agent "bench" that the AAP server answers
// with the text "ok".
func (r *scaleRun) runOK(ctx context.Context, body []byte) error {
	r.aa.set(aapTurn(aapDelta(nil, "ok"), aapStopEnd))
	_, err := r.run(ctx, "bench", body)
	return err
}

// thread is a new thread id.
func (r *scaleRun) thread() string { return "th-" + strconv.Itoa(r.next()) }

// g2aInputDim is a dimension of a RunAgentInput starting a new thread,
// whose parts are input(n); the AAP server answers with a text.
func g2aInputDim(key, dim string, n int, input func(n int) g2aInput) scalingDim {
	return scalingDim{key: key, dimension: dim, via: "a RunAgentInput", bound: g2aBody, n: n,
		setup: func(_ context.Context, r *scaleRun, n int) (scaleCase, error) {
			body := input(n).body(r.thread(), "r1")
			return scaleCase{bytes: len(body), request: func(ctx context.Context) error {
				return r.runOK(ctx, body)
			}}, nil
		}}
}

// field is the first string value of key in the stream s ("" if none).
func field(s []byte, key string) string {
	k := `"` + key + `":"`
	i := strings.Index(string(s), k)
	if i < 0 {
		return ""
	}
	rest := string(s[i+len(k):])
	return rest[:max(0, strings.IndexByte(rest, '"'))]
}

// g2aThreadHistory: a thread was started with n messages; the measured
// run sends them again, with the answer and one new user message, as
// AG-UI clients do.
func g2aThreadHistory(ctx context.Context, r *scaleRun, n int) (scaleCase, error) {
	th := r.thread()
	msgs := append(g2aHistory(n), g2aUser("u-first", "hi"))
	r.aa.set(aapTurn(aapDelta(nil, "ok"), aapStopEnd))
	out, err := r.run(ctx, "bench", g2aInput{messages: jsonList(msgs...)}.body(th, "r1"))
	if err != nil {
		return scaleCase{}, err
	}
	answer := field(out, "messageId")
	msgs = append(msgs, `{"id":"`+answer+`","role":"assistant","content":"ok"}`, g2aUser("u-next", "more"))
	body := g2aInput{messages: jsonList(msgs...)}.body(th, "r2")
	return scaleCase{bytes: len(body), request: func(ctx context.Context) error {
		return r.runOK(ctx, body)
	}}, nil
}

// g2aHydration: a thread was started with n messages; the measured run
// has none, and is answered with the session's history.
func g2aHydration(ctx context.Context, r *scaleRun, n int) (scaleCase, error) {
	th := r.thread()
	msgs := append(g2aHistory(n), g2aUser("u-first", "hi"))
	if err := r.runOK(ctx, g2aInput{messages: jsonList(msgs...)}.body(th, "r1")); err != nil {
		return scaleCase{}, err
	}
	stored := `{"history":{"full":` + jsonList(strings.Trim(a2gHistory(n), "[]"), aapUser("hi"), `{"role":"assistant","content":"ok"}`) + `}}`
	body := g2aInput{}.body(th, "r2")
	return scaleCase{bytes: len(stored), request: func(ctx context.Context) error {
		r.aa.setHistory([]byte(stored))
		_, err := r.run(ctx, "bench", body, "MESSAGES_SNAPSHOT")
		return err
	}}, nil
}

// g2aCalls is a turn making n calls of tool, each with a result when
// results is set (and then a text), else stopping for tool use.
func g2aCalls(n int, tool string, results bool) []byte {
	var b []byte
	for i := range n {
		id := scaleCallID(i)
		b = aapEvent(b, "tool_call", `{"toolCallId":"`+id+`","name":"`+tool+`","input":{"q":"x"}}`)
		if results {
			b = aapEvent(b, "tool_result", `{"toolCallId":"`+id+`","content":"a result"}`)
		}
	}
	if results {
		return aapTurn(aapDelta(b, "done"), aapStopEnd)
	}
	return aapTurn(b, aapStopTool)
}

// g2aStreamDim is a dimension of the AAP server's stream in one run on a
// new thread.
func g2aStreamDim(key, dim string, n int, bound string, script func(n int) []byte) scalingDim {
	return scalingDim{key: key, dimension: dim, via: "the AAP server's events", bound: bound, n: n,
		setup: func(_ context.Context, r *scaleRun, n int) (scaleCase, error) {
			s := script(n)
			body := g2aInput{messages: jsonList(g2aUser("u0", "go")), tools: a2gTools(1, 1)}.body(r.thread(), "r1")
			return scaleCase{bytes: len(s), request: func(ctx context.Context) error {
				r.aa.set(s)
				_, err := r.run(ctx, "bench", body)
				return err
			}}, nil
		}}
}

// g2aCalled starts a thread whose first run the server ends with n calls
// of tool (the client's, or a server tool asking permission), and returns
// the thread and the messages the client then holds.
func g2aCalled(ctx context.Context, r *scaleRun, n int, tool string) (string, []string, error) {
	th := r.thread()
	first := g2aUser("u0", "call")
	r.aa.set(g2aCalls(n, tool, false))
	out, err := r.run(ctx, "bench", g2aInput{messages: jsonList(first), tools: a2gTools(1, 1)}.body(th, "r1"), "TOOL_CALL_START")
	if err != nil {
		return "", nil, err
	}
	parent := field(out, "parentMessageId")
	if parent == "" {
		return "", nil, errors.New("no parentMessageId in the calls' run")
	}
	return th, []string{first, g2aCallMessage(parent, n, tool)}, nil
}

// g2aResults: the server's turn made n calls of the client tool; the
// measured run brings their n results.
func g2aResults(ctx context.Context, r *scaleRun, n int) (scaleCase, error) {
	th, msgs, err := g2aCalled(ctx, r, n, scaleClientTool)
	if err != nil {
		return scaleCase{}, err
	}
	body := g2aInput{messages: jsonList(append(msgs, g2aResultMessages(n)...)...), tools: a2gTools(1, 1)}.body(th, "r2")
	return scaleCase{bytes: len(body), request: func(ctx context.Context) error {
		return r.runOK(ctx, body)
	}}, nil
}

// g2aResume: the server's turn made n calls asking permission, which
// ended the run with n interrupts; the measured run grants them all.
func g2aResume(ctx context.Context, r *scaleRun, n int) (scaleCase, error) {
	th, msgs, err := g2aCalled(ctx, r, n, scaleServerTool)
	if err != nil {
		return scaleCase{}, err
	}
	entries := make([]string, n)
	var answer []byte
	for i := range entries {
		id := scaleCallID(i)
		entries[i] = `{"interruptId":"perm-` + id + `","status":"resolved","payload":{"approved":true}}`
		answer = aapEvent(answer, "tool_result", `{"toolCallId":"`+id+`","content":"a result"}`)
	}
	script := aapTurn(aapDelta(answer, "done"), aapStopEnd)
	body := g2aInput{messages: jsonList(msgs...), tools: a2gTools(1, 1), resume: jsonList(entries...)}.body(th, "r2")
	return scaleCase{bytes: len(body), request: func(ctx context.Context) error {
		r.aa.set(script)
		if _, err := r.run(ctx, "bench", body); err != nil {
			return err
		}
		if got := strings.Count(string(r.aa.lastBody()), `"tool_permission"`); got != n {
			return fmt.Errorf("the AAP server got %d tool_permission messages, want %d", got, n)
		}
		return nil
	}}, nil
}

// g2aThreads starts n threads of agent (and one of "bench" when agent is
// another), then lists bench's threads: the first page of size limit, or
// of n when limit is 0, or every page of size -limit when it is negative.
func g2aThreads(agent string, limit int) func(context.Context, *scaleRun, int) (scaleCase, error) {
	return func(ctx context.Context, r *scaleRun, n int) (scaleCase, error) {
		r.aa.set(aapTurn(aapDelta(nil, "ok"), aapStopEnd))
		bytes := 0
		for i := range n + 1 {
			a := agent
			if i == n {
				if agent == "bench" {
					break
				}
				a = "bench"
			}
			body := g2aInput{messages: jsonList(g2aUser("u0", "a thread of the owner"))}.body(r.thread(), "r1")
			if _, err := r.run(ctx, a, body); err != nil {
				return scaleCase{}, err
			}
			bytes += len(body)
		}
		query := "?limit=" + strconv.Itoa(cmpOr(max(limit, -limit), min(n, 100)))
		return scaleCase{bytes: bytes, request: func(ctx context.Context) error {
			for cursor := ""; ; {
				resp, err := r.send(ctx, http.MethodGet, "/agents/bench/threads"+query+cursor, nil)
				if err != nil {
					return err
				}
				var page struct {
					Threads    []json.RawMessage `json:"threads"`
					NextCursor string            `json:"nextCursor"`
				}
				if err := json.Unmarshal(resp, &page); err != nil || (len(page.Threads) == 0 && cursor == "") {
					return errors.New("no threads in " + head(resp))
				}
				if limit >= 0 || page.NextCursor == "" {
					return nil
				}
				cursor = "&cursor=" + url.QueryEscape(page.NextCursor)
			}
		}}, nil
	}
}
