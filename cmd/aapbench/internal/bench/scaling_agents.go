package bench

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
)

// The agents of the scaling runs: each answers with a stream the harness
// set before the request (its requests come one at a time), and keeps the
// last body it was sent, so that a case can check what the bridge made of
// its input.

// Tools of the scaling runs. agui2aap's bridge processes enable the two
// server tools (newBridge), which the AAP agent declares.
const (
	scaleClientTool  = "ct"   // a client tool
	scaleServerTool  = "srv"  // an AAP server tool enabled without trust: its calls ask permission
	scaleTrustedTool = "srvt" // an AAP server tool enabled with trust: the server runs it
)

// scripted is what an agent of the scaling runs shares: the stream it
// answers with, and the last body it was sent.
type scripted struct {
	mu     sync.Mutex
	stream []byte
	last   []byte
}

// set makes stream the answer of the requests that follow.
func (s *scripted) set(stream []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stream = stream
}

// lastBody is the last body kept.
func (s *scripted) lastBody() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// answer keeps body as the last one and returns the stream to answer it
// with.
func (s *scripted) answer(body []byte) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.last = body
	return s.stream
}

// scriptAGUI is an AG-UI agent that answers every run with its script
// (set), and keeps the body of the last run (lastBody).
type scriptAGUI struct{ scripted }

func newScriptAGUI() *scriptAGUI {
	return &scriptAGUI{scripted{stream: aguiRun(aguiText(nil, "ok"), "")}}
}

func (a *scriptAGUI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := readAll(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = w.Write(a.answer(body))
}

// aguiEvent appends the SSE frame of one AG-UI event, its JSON given.
func aguiEvent(b []byte, event string) []byte {
	b = append(b, "data: "...)
	b = append(b, event...)
	return append(b, "\n\n"...)
}

// aguiRun is a run's stream: RUN_STARTED, body, and RUN_FINISHED with the
// outcome's JSON ("" for none).
func aguiRun(body []byte, outcome string) []byte {
	b := aguiEvent(nil, `{"type":"RUN_STARTED","threadId":"t","runId":"r"}`)
	b = append(b, body...)
	finish := `{"type":"RUN_FINISHED","threadId":"t","runId":"r"`
	if outcome != "" {
		finish += `,"outcome":` + outcome
	}
	return aguiEvent(b, finish+"}")
}

// aguiText appends one assistant text message of the given deltas.
func aguiText(b []byte, deltas ...string) []byte {
	b = aguiEvent(b, `{"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}`)
	for _, d := range deltas {
		b = aguiEvent(b, `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":`+jsonString(d)+`}`)
	}
	return aguiEvent(b, `{"type":"TEXT_MESSAGE_END","messageId":"m"}`)
}

// aguiCall appends one tool call of tool with the given argument deltas.
func aguiCall(b []byte, id, tool string, args ...string) []byte {
	b = aguiEvent(b, `{"type":"TOOL_CALL_START","toolCallId":"`+id+`","toolCallName":"`+tool+`","parentMessageId":"m"}`)
	for _, a := range args {
		b = aguiEvent(b, `{"type":"TOOL_CALL_ARGS","toolCallId":"`+id+`","delta":`+jsonString(a)+`}`)
	}
	return aguiEvent(b, `{"type":"TOOL_CALL_END","toolCallId":"`+id+`"}`)
}

// scriptAAP is an AAP server of agents "bench" (with the two server
// tools) and "other": sessions are numbers, every turn streams its
// script (set), every history is its history, and lastBody is the body
// of the last session or turn created.
type scriptAAP struct {
	scripted // mu also guards history and seq
	mux      *http.ServeMux
	history  []byte
	seq      int
}

// scaleMeta is the scripted AAP server's GET /meta.
const scaleMeta = `{"version":3,"agents":[` +
	`{"name":"bench","version":"1","tools":[` +
	`{"name":"` + scaleServerTool + `","description":"a server tool that asks","parameters":{"type":"object"}},` +
	`{"name":"` + scaleTrustedTool + `","description":"a server tool that runs","parameters":{"type":"object"}}],` +
	`"capabilities":{"stream":{"delta":{}},"history":{"full":{}}}},` +
	`{"name":"other","version":"1","capabilities":{"stream":{"delta":{}},"history":{"full":{}}}}]}`

func newScriptAAP() *scriptAAP {
	a := &scriptAAP{scripted: scripted{stream: aapTurn(aapDelta(nil, "ok"), aapStopEnd)}, mux: http.NewServeMux(), history: []byte(`{"history":{"full":[]}}`)}
	a.mux.HandleFunc("GET /meta", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(scaleMeta))
	})
	a.mux.HandleFunc("POST /sessions", func(w http.ResponseWriter, r *http.Request) {
		body, _ := readAll(r)
		a.mu.Lock()
		a.seq++
		a.last, body = body, []byte(`{"sessionId":"s`+strconv.Itoa(a.seq)+`"}`)
		a.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write(body)
	})
	a.mux.HandleFunc("POST /sessions/{id}/turns", func(w http.ResponseWriter, r *http.Request) {
		body, _ := readAll(r)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(a.answer(body))
	})
	a.mux.HandleFunc("GET /sessions/{id}/history", func(w http.ResponseWriter, _ *http.Request) {
		a.mu.Lock()
		body := a.history
		a.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})
	a.mux.HandleFunc("DELETE /sessions/{id}", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	return a
}

func (a *scriptAAP) ServeHTTP(w http.ResponseWriter, r *http.Request) { a.mux.ServeHTTP(w, r) }

// setHistory makes body (a GET /sessions/:id/history response) every
// session's history.
func (a *scriptAAP) setHistory(body []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.history = body
}

// The stop reasons of the scripted AAP turns.
const (
	aapStopEnd  = "end_turn"
	aapStopTool = "tool_use"
)

// aapEvent appends the SSE frame of one AAP event.
func aapEvent(b []byte, name, data string) []byte {
	b = append(b, "event: "...)
	b = append(b, name...)
	b = append(b, "\ndata: "...)
	b = append(b, data...)
	return append(b, "\n\n"...)
}

// aapTurn is a turn's stream: turn_start, body, turn_stop with stop.
func aapTurn(body []byte, stop string) []byte {
	b := aapEvent(nil, "turn_start", "{}")
	b = append(b, body...)
	return aapEvent(b, "turn_stop", `{"stopReason":"`+stop+`"}`)
}

// aapDelta appends text_delta events.
func aapDelta(b []byte, deltas ...string) []byte {
	for _, d := range deltas {
		b = aapEvent(b, "text_delta", `{"delta":`+jsonString(d)+`}`)
	}
	return b
}

// jsonString is s as a JSON string.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
