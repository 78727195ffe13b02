package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// aap2agui's dimensions: what an AAP client sends (a seeded history, a
// turn, a listing) and what the AG-UI agent behind it streams.

// scaleText is the text of one message of a grown history (40 bytes).
const scaleText = "a message of the conversation, 40 bytes."

// The bounds of aap2agui's inputs, as the table names them.
const (
	a2gBody   = "--max-body (8 MiB)"
	a2gStream = "16 MiB an event, --max-message-size"
)

func aap2aguiDims() []scalingDim {
	dims := []scalingDim{
		a2gSeed("seed-history", "messages in a history", 1000, func(n int) string { return a2gHistory(n) }),
		a2gSeed("seed-blocks", "blocks in one message", 1000, func(n int) string { return jsonList(a2gBlocksMessage(n)) }),
		a2gSeed("seed-calls", "tool calls in one message, with their results", 1000, func(n int) string { return jsonList(a2gCallsMessages(n)...) }),
		{key: "seed-tools", dimension: "tools, each with its schema", via: "POST /sessions", bound: a2gBody, n: 500, setup: a2gSeedTools(func(n int) string { return a2gTools(n, 3) })},
		{key: "seed-schema", dimension: "properties of one tool's schema", via: "POST /sessions", bound: a2gBody, n: 1000, setup: a2gSeedTools(func(n int) string { return a2gTools(1, n) })},
		a2gTurnOn("turn-history", "messages in a history", 400, func(n int) string { return a2gHistory(n) }),
		a2gTurnOn("turn-calls", "tool calls in one message, with their results", 1000, func(n int) string { return jsonList(a2gCallsMessages(n)...) }),
		{key: "turn-blocks", dimension: "blocks in one message", via: "a turn", bound: a2gBody, n: 1000, setup: a2gTurnOf(func(n int) (string, string) { return jsonList(a2gBlocksMessage(n)), "" })},
		{key: "turn-tools", dimension: "tools, each with its schema", via: "a turn", bound: a2gBody, n: 500, setup: a2gTurnOf(func(n int) (string, string) { return jsonList(aapUser("hi")), a2gTools(n, 3) })},
		{key: "results", dimension: "results of the agent's calls", via: "a turn", bound: a2gBody, n: 1000, setup: a2gResults},
		{key: "resume", dimension: "resume entries (answers to interrupts)", via: "a turn", bound: a2gBody, n: 200, setup: a2gResume},
	}
	return append(dims, a2gAgentDims()...)
}

// a2gAgentDims are the dimensions of the AG-UI agent's stream, each in
// one turn.
func a2gAgentDims() []scalingDim {
	return []scalingDim{
		a2gStreamDim("deltas", "events in a run (text deltas of one message)", 4000, "", a2gDeltas),
		a2gStreamDim("messages", "text messages in a run", 1000, "", a2gMessages),
		a2gStreamDim("open-messages", "text messages open at once", 400, "", a2gOpenMessages),
		a2gStreamDim("event-size", "an event's size (KiB of one delta)", 64, a2gStream, func(n int) ([]byte, string) {
			return aguiRun(aguiText(nil, strings.Repeat("x", n<<10)), ""), aapStopEnd
		}),
		a2gStreamDim("arg-deltas", "argument deltas of one call", 4000, a2gStream, a2gArgDeltas),
		a2gStreamDim("agent-calls", "tool calls in one message", 400, "", a2gAgentCalls),
		a2gStreamDim("agent-results", "the agent's own calls with their results", 400, "", a2gAgentResults),
		a2gStreamDim("interrupts", "interrupts in one outcome", 400, "", a2gInterrupts),
		a2gStreamDim("state-size", "keys of a STATE_SNAPSHOT", 2000, "16 MiB an event", a2gStateSize),
		a2gStreamDim("state-depth", "depth of a STATE_SNAPSHOT", 100, "depth 10,000 (encoding/json)", a2gStateDepth),
		a2gStreamDim("patch-size", "operations of one STATE_DELTA", 1000, "16 MiB an event", a2gPatchSize),
		a2gStreamDim("patch-depth", "depth of a STATE_DELTA's path (and of the state)", 100, "depth 10,000 (encoding/json)", a2gPatchDepth),
		a2gStreamDim("patch-events", "STATE_DELTA events in a run", 200, "", a2gPatchEvents),
		a2gStreamDim("snapshot", "messages of a MESSAGES_SNAPSHOT", 400, "16 MiB an event", a2gSnapshot),
		{key: "sessions-page", dimension: "sessions of an owner (the first page)", via: "GET /sessions", bound: "--max-sessions-per-key", n: 200, reuse: true, setup: a2gSessionsPage(false)},
		{key: "sessions-all", dimension: "sessions of an owner (every page)", via: "GET /sessions", bound: "--max-sessions-per-key, --page-size", n: 200, reuse: true, setup: a2gSessionsPage(true)},
	}
}

// aapUser is a user message of text.
func aapUser(text string) string { return `{"role":"user","content":` + jsonString(text) + `}` }

// jsonList is the JSON array of items.
func jsonList(items ...string) string { return "[" + strings.Join(items, ",") + "]" }

// a2gHistory is a history of n messages, user and assistant by turns.
func a2gHistory(n int) string {
	msgs := make([]string, n)
	for i := range msgs {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		msgs[i] = `{"role":"` + role + `","content":"` + scaleText + `"}`
	}
	return jsonList(msgs...)
}

// a2gBlocksMessage is one user message of n text blocks.
func a2gBlocksMessage(n int) string {
	blocks := make([]string, n)
	for i := range blocks {
		blocks[i] = `{"type":"text","text":"` + scaleText + `"}`
	}
	return `{"role":"user","content":` + jsonList(blocks...) + `}`
}

// scaleCallID is the id of call i, all of one length so that bytes grow
// with n alone.
func scaleCallID(i int) string { return fmt.Sprintf("c%07d", i) }

// a2gCallsMessages are a user message, one assistant message making n
// calls of the client tool, and their n results.
func a2gCallsMessages(n int) []string {
	uses := make([]string, n)
	msgs := make([]string, 0, n+2)
	msgs = append(msgs, aapUser("call the tool"), "")
	for i := range uses {
		id := scaleCallID(i)
		uses[i] = `{"type":"tool_use","toolCallId":"` + id + `","name":"` + scaleClientTool + `","input":{"q":"x"}}`
		msgs = append(msgs, `{"role":"tool","toolCallId":"`+id+`","content":"a result"}`)
	}
	msgs[1] = `{"role":"assistant","content":` + jsonList(uses...) + `}`
	return msgs
}

// a2gTools are n tools, the client tool first, each with a schema of
// props properties.
func a2gTools(n, props int) string {
	p := make([]string, props)
	for i := range p {
		p[i] = fmt.Sprintf(`"p%07d":{"type":"string","description":"a property"}`, i)
	}
	schema := `{"type":"object","properties":{` + strings.Join(p, ",") + `}}`
	tools := make([]string, n)
	for i := range tools {
		name := fmt.Sprintf("t%07d", i)
		if i == 0 {
			name = scaleClientTool
		}
		tools[i] = `{"name":"` + name + `","description":"a client tool","parameters":` + schema + `}`
	}
	return "[" + strings.Join(tools, ",") + "]"
}

// sessionBody is a POST /sessions of messages and tools (JSON arrays; ""
// for none).
func sessionBody(messages, tools string) []byte {
	b := `{"agent":{"name":"bench"}`
	if messages != "" {
		b += `,"messages":` + messages
	}
	if tools != "" {
		b += `,"tools":` + tools
	}
	return []byte(b + "}")
}

// turnBody is a turn of messages and tools (tools "" for none), in delta
// mode.
func turnBody(messages, tools string) []byte {
	b := `{"stream":"delta","messages":` + messages
	if tools != "" {
		b += `,"tools":` + tools
	}
	return []byte(b + "}")
}

// newSession creates a session with body and returns its id.
func (r *scaleRun) newSession(ctx context.Context, body []byte) (string, error) {
	resp, err := r.send(ctx, http.MethodPost, "/sessions", body)
	if err != nil {
		return "", err
	}
	var out struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(resp, &out); err != nil || out.SessionID == "" {
		return "", fmt.Errorf("POST /sessions: no session id in %s", head(resp))
	}
	return out.SessionID, nil
}

// turn sends a turn of body to session id, with the agent's stream
// script, and checks that it stops with stop.
func (r *scaleRun) turn(ctx context.Context, id string, body, script []byte, stop string) error {
	r.ag.set(script)
	resp, err := r.send(ctx, http.MethodPost, "/sessions/"+id+"/turns", body)
	if err != nil {
		return err
	}
	return expect(resp, []string{`"stopReason":"` + stop + `"`})
}

// turnOK is a turn the agent answers with the text "ok".
func (r *scaleRun) turnOK(ctx context.Context, id string, body []byte) error {
	return r.turn(ctx, id, body, aguiRun(aguiText(nil, "ok"), ""), aapStopEnd)
}

// a2gSeed is a dimension of POST /sessions whose seeded history is
// messages(n).
func a2gSeed(key, dim string, n int, messages func(n int) string) scalingDim {
	return scalingDim{key: key, dimension: dim, via: "POST /sessions", bound: a2gBody, n: n,
		setup: func(_ context.Context, r *scaleRun, n int) (scaleCase, error) {
			body := sessionBody(messages(n), a2gTools(1, 1))
			return scaleCase{bytes: len(body), request: func(ctx context.Context) error {
				_, err := r.newSession(ctx, body)
				return err
			}}, nil
		}}
}

// a2gSeedTools is the setup of a POST /sessions declaring tools(n).
func a2gSeedTools(tools func(n int) string) func(context.Context, *scaleRun, int) (scaleCase, error) {
	return func(_ context.Context, r *scaleRun, n int) (scaleCase, error) {
		body := sessionBody("", tools(n))
		return scaleCase{bytes: len(body), request: func(ctx context.Context) error {
			_, err := r.newSession(ctx, body)
			return err
		}}, nil
	}
}

// a2gTurnOn is a dimension of one turn on a session seeded with
// messages(n).
func a2gTurnOn(key, dim string, n int, messages func(n int) string) scalingDim {
	return scalingDim{key: key, dimension: dim, via: "a turn on a seeded session", bound: a2gBody, n: n,
		setup: func(ctx context.Context, r *scaleRun, n int) (scaleCase, error) {
			seed := sessionBody(messages(n), a2gTools(1, 1))
			id, err := r.newSession(ctx, seed)
			if err != nil {
				return scaleCase{}, err
			}
			return scaleCase{bytes: len(seed), request: func(ctx context.Context) error {
				return r.turnOK(ctx, id, turnBody(jsonList(aapUser("hi")), ""))
			}}, nil
		}}
}

// a2gTurnOf is the setup of one turn whose messages and tools are
// input(n), on a new session.
func a2gTurnOf(input func(n int) (messages, tools string)) func(context.Context, *scaleRun, int) (scaleCase, error) {
	return func(ctx context.Context, r *scaleRun, n int) (scaleCase, error) {
		id, err := r.newSession(ctx, sessionBody("", a2gTools(1, 1)))
		if err != nil {
			return scaleCase{}, err
		}
		body := turnBody(input(n))
		return scaleCase{bytes: len(body), request: func(ctx context.Context) error {
			return r.turnOK(ctx, id, body)
		}}, nil
	}
}

// a2gResults: the agent's run made n calls of the client tool; the
// measured turn brings their n results.
func a2gResults(ctx context.Context, r *scaleRun, n int) (scaleCase, error) {
	script, _ := a2gAgentCalls(n)
	id, body, err := a2gAnswering(ctx, r, n, "call", script, `"a result"`)
	if err != nil {
		return scaleCase{}, err
	}
	return scaleCase{bytes: len(body), request: func(ctx context.Context) error {
		return r.turnOK(ctx, id, body)
	}}, nil
}

// a2gResume: the agent's run ended with n interrupts (each an
// agui_interrupt call); the measured turn answers them, which the agent
// gets as n resume entries.
func a2gResume(ctx context.Context, r *scaleRun, n int) (scaleCase, error) {
	script, _ := a2gInterrupts(n)
	id, body, err := a2gAnswering(ctx, r, n, "ask", script, `"{\"answer\":\"yes\"}"`)
	if err != nil {
		return scaleCase{}, err
	}
	return scaleCase{bytes: len(body), request: func(ctx context.Context) error {
		if err := r.turnOK(ctx, id, body); err != nil {
			return err
		}
		if got := strings.Count(string(r.ag.lastBody()), `"interruptId"`); got != n {
			return fmt.Errorf("the agent got %d resume entries, want %d", got, n)
		}
		return nil
	}}, nil
}

// a2gAnswering starts a session whose first turn (the user's prompt) the
// agent's script ends for tool use with calls 0 to n-1 open, and returns
// it with the body of a turn answering each call with content (JSON).
func a2gAnswering(ctx context.Context, r *scaleRun, n int, prompt string, script []byte, content string) (string, []byte, error) {
	id, err := r.newSession(ctx, sessionBody("", a2gTools(1, 1)))
	if err != nil {
		return "", nil, err
	}
	if err := r.turn(ctx, id, turnBody(jsonList(aapUser(prompt)), ""), script, aapStopTool); err != nil {
		return "", nil, err
	}
	answers := make([]string, n)
	for i := range answers {
		answers[i] = `{"role":"tool","toolCallId":"` + scaleCallID(i) + `","content":` + content + `}`
	}
	return id, turnBody(jsonList(answers...), ""), nil
}

// a2gStreamDim is a dimension of the agent's stream in one turn on a new
// session: script(n) gives the stream and the turn's stop reason.
func a2gStreamDim(key, dim string, n int, bound string, script func(n int) ([]byte, string)) scalingDim {
	return scalingDim{key: key, dimension: dim, via: "the agent's events", bound: bound, n: n,
		setup: func(ctx context.Context, r *scaleRun, n int) (scaleCase, error) {
			id, err := r.newSession(ctx, sessionBody("", a2gTools(1, 1)))
			if err != nil {
				return scaleCase{}, err
			}
			s, stop := script(n)
			return scaleCase{bytes: len(s), request: func(ctx context.Context) error {
				return r.turn(ctx, id, turnBody(jsonList(aapUser("go")), ""), s, stop)
			}}, nil
		}}
}

func a2gDeltas(n int) ([]byte, string) {
	d := make([]string, n)
	for i := range d {
		d[i] = "a word "
	}
	return aguiRun(aguiText(nil, d...), ""), aapStopEnd
}

func a2gMessages(n int) ([]byte, string) {
	var b []byte
	for i := range n {
		id := fmt.Sprintf("m%07d", i)
		b = aguiEvent(b, `{"type":"TEXT_MESSAGE_START","messageId":"`+id+`","role":"assistant"}`)
		b = aguiEvent(b, `{"type":"TEXT_MESSAGE_CONTENT","messageId":"`+id+`","delta":"`+scaleText+`"}`)
		b = aguiEvent(b, `{"type":"TEXT_MESSAGE_END","messageId":"`+id+`"}`)
	}
	return aguiRun(b, ""), aapStopEnd
}

// a2gOpenMessages starts n text messages, then gives each its text, then
// ends them.
func a2gOpenMessages(n int) ([]byte, string) {
	var b []byte
	for _, typ := range []string{"START", "CONTENT", "END"} {
		for i := range n {
			ev := `{"type":"TEXT_MESSAGE_` + typ + `","messageId":"` + fmt.Sprintf("m%07d", i) + `"`
			switch typ {
			case "START":
				ev += `,"role":"assistant"`
			case "CONTENT":
				ev += `,"delta":"` + scaleText + `"`
			}
			b = aguiEvent(b, ev+"}")
		}
	}
	return aguiRun(b, ""), aapStopEnd
}

func a2gArgDeltas(n int) ([]byte, string) {
	args := make([]string, n+2)
	args[0] = `{"q":"`
	for i := 1; i <= n; i++ {
		args[i] = "a word "
	}
	args[n+1] = `"}`
	return aguiRun(aguiCall(nil, scaleCallID(0), scaleClientTool, args...), ""), aapStopTool
}

// a2gAgentCalls makes n calls of the client tool in one message.
func a2gAgentCalls(n int) ([]byte, string) {
	var b []byte
	for i := range n {
		b = aguiCall(b, scaleCallID(i), scaleClientTool, `{"q":"x"}`)
	}
	return aguiRun(b, ""), aapStopTool
}

// a2gAgentResults makes n calls of a tool the agent runs itself, each
// with its result.
func a2gAgentResults(n int) ([]byte, string) {
	var b []byte
	for i := range n {
		id := scaleCallID(i)
		b = aguiCall(b, id, "search", `{"q":"x"}`)
		b = aguiEvent(b, `{"type":"TOOL_CALL_RESULT","messageId":"r`+id+`","toolCallId":"`+id+`","content":"a result","role":"tool"}`)
	}
	return aguiRun(aguiText(b, "done"), ""), aapStopEnd
}

// a2gInterrupts ends the run with n interrupts asking for input.
func a2gInterrupts(n int) ([]byte, string) {
	ins := make([]string, n)
	for i := range ins {
		ins[i] = `{"id":"` + scaleCallID(i) + `","reason":"input_required","message":"Which one?"}`
	}
	return aguiRun(nil, `{"type":"interrupt","interrupts":`+jsonList(ins...)+`}`), aapStopTool
}

// scaleObject is a JSON object of n string keys.
func scaleObject(n int) string {
	kv := make([]string, n)
	for i := range kv {
		kv[i] = fmt.Sprintf(`"k%07d":"a value"`, i)
	}
	return "{" + strings.Join(kv, ",") + "}"
}

// scaleNested is a JSON object nested n deep: {"a":{"a":…{"leaf":1}…}}.
func scaleNested(n int) string {
	return strings.Repeat(`{"a":`, n) + `{"leaf":1}` + strings.Repeat("}", n)
}

func a2gStateSize(n int) ([]byte, string) {
	return aguiRun(aguiEvent(aguiText(nil, "ok"), `{"type":"STATE_SNAPSHOT","snapshot":`+scaleObject(n)+`}`), ""), aapStopEnd
}

func a2gStateDepth(n int) ([]byte, string) {
	return aguiRun(aguiEvent(aguiText(nil, "ok"), `{"type":"STATE_SNAPSHOT","snapshot":`+scaleNested(n)+`}`), ""), aapStopEnd
}

func a2gPatchSize(n int) ([]byte, string) {
	ops := make([]string, n)
	for i := range ops {
		ops[i] = fmt.Sprintf(`{"op":"add","path":"/k%07d","value":"a value"}`, i)
	}
	return aguiRun(aguiEvent(aguiText(nil, "ok"), `{"type":"STATE_DELTA","delta":`+jsonList(ops...)+`}`), ""), aapStopEnd
}

// a2gPatchDepth sets a state n deep, then replaces its leaf.
func a2gPatchDepth(n int) ([]byte, string) {
	b := aguiEvent(aguiText(nil, "ok"), `{"type":"STATE_SNAPSHOT","snapshot":`+scaleNested(n)+`}`)
	path := strings.Repeat("/a", n) + "/leaf"
	return aguiRun(aguiEvent(b, `{"type":"STATE_DELTA","delta":[{"op":"replace","path":"`+path+`","value":2}]}`), ""), aapStopEnd
}

// a2gPatchEvents sends n STATE_DELTA events, each adding a key.
func a2gPatchEvents(n int) ([]byte, string) {
	b := aguiText(nil, "ok")
	for i := range n {
		b = aguiEvent(b, fmt.Sprintf(`{"type":"STATE_DELTA","delta":[{"op":"add","path":"/k%07d","value":"a value"}]}`, i))
	}
	return aguiRun(b, ""), aapStopEnd
}

// a2gSnapshot ends the run with a MESSAGES_SNAPSHOT of n messages.
func a2gSnapshot(n int) ([]byte, string) {
	msgs := make([]string, n)
	for i := range msgs {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		msgs[i] = fmt.Sprintf(`{"id":"m%07d","role":"%s","content":"%s"}`, i, role, scaleText)
	}
	return aguiRun(aguiEvent(aguiText(nil, "ok"), `{"type":"MESSAGES_SNAPSHOT","messages":`+jsonList(msgs...)+`}`), ""), aapStopEnd
}

// a2gSessionsPage creates n sessions, then lists the first page (all:
// every page, following next).
func a2gSessionsPage(all bool) func(context.Context, *scaleRun, int) (scaleCase, error) {
	return func(ctx context.Context, r *scaleRun, n int) (scaleCase, error) {
		body := sessionBody(jsonList(aapUser("hi")), "")
		for range n {
			if _, err := r.newSession(ctx, body); err != nil {
				return scaleCase{}, err
			}
		}
		return scaleCase{bytes: n * len(body), request: func(ctx context.Context) error {
			next, pages := "", 0
			for {
				resp, err := r.send(ctx, http.MethodGet, "/sessions"+next, nil)
				if err != nil {
					return err
				}
				var page struct {
					Sessions []json.RawMessage `json:"sessions"`
					Next     string            `json:"next"`
				}
				if err := json.Unmarshal(resp, &page); err != nil || len(page.Sessions) == 0 {
					return errors.New("GET /sessions: no sessions in " + head(resp))
				}
				if pages++; !all || page.Next == "" {
					return nil
				}
				next = "?after=" + page.Next
			}
		}}, nil
	}
}
