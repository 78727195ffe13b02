package agui2aap_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/demo"
)

// fakeAAP is a scripted AAP server for what the demo agent cannot do:
// fail, hang, cut streams, declare fewer stream modes, call two tools.
type fakeAAP struct {
	URL    string
	server *httptest.Server
	meta   aap.GetMetaResponse
	// turn answers the n-th turn (from 0).
	turn func(w http.ResponseWriter, r *http.Request, n int, req *aap.PostSessionTurnRequest)

	mu      sync.Mutex
	creates []aap.PostSessionsRequest
	turns   []aap.PostSessionTurnRequest
}

// newFakeAAP starts a fake AAP server with one agent, "demo", that has the
// demo's web_search server tool and every stream mode.
func newFakeAAP(t testing.TB, turn func(w http.ResponseWriter, r *http.Request, n int, req *aap.PostSessionTurnRequest)) *fakeAAP {
	t.Helper()
	f := &fakeAAP{turn: turn, meta: aap.GetMetaResponse{Version: aap.Version, Agents: []aap.AgentInfo{{
		Name: "demo", Version: "1.0.0", Tools: []aap.ToolSpec{demo.SearchToolSpec},
		Capabilities: &aap.Capabilities{
			Stream:      &aap.StreamCapabilities{Delta: &aap.Empty{}, Message: &aap.Empty{}, None: &aap.Empty{}},
			Application: &aap.ApplicationCapabilities{Tools: &aap.Empty{}},
		},
	}}}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /meta", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, f.meta)
	})
	mux.HandleFunc("POST /sessions", func(w http.ResponseWriter, r *http.Request) {
		var req aap.PostSessionsRequest
		if !readJSON(w, r, &req) {
			return
		}
		f.mu.Lock()
		f.creates = append(f.creates, req)
		n := len(f.creates)
		f.mu.Unlock()
		writeJSON(w, http.StatusCreated, aap.PostSessionsResponse{SessionID: fmt.Sprintf("sess-%d", n)})
	})
	mux.HandleFunc("POST /sessions/{id}/turns", func(w http.ResponseWriter, r *http.Request) {
		var req aap.PostSessionTurnRequest
		if !readJSON(w, r, &req) {
			return
		}
		f.mu.Lock()
		f.turns = append(f.turns, req)
		n := len(f.turns) - 1
		f.mu.Unlock()
		f.turn(w, r, n, &req)
	})
	f.server = httptest.NewServer(mux)
	t.Cleanup(f.server.Close)
	f.URL = f.server.URL
	return f
}

// turnRequests returns the turns received so far.
func (f *fakeAAP) turnRequests() []aap.PostSessionTurnRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]aap.PostSessionTurnRequest(nil), f.turns...)
}

func readJSON(w http.ResponseWriter, r *http.Request, v json.Unmarshaler) bool {
	data, err := io.ReadAll(r.Body)
	if err == nil {
		err = v.UnmarshalJSON(data)
	}
	if err != nil {
		writeJSON(w, http.StatusBadRequest, aap.ErrorResponse{Error: aap.ErrorBody{Code: "invalid_request", Message: err.Error()}})
		return false
	}
	return true
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeEvents writes AAP events as an SSE response and flushes.
func writeEvents(w http.ResponseWriter, evs ...aap.Event) {
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
	}
	var buf []byte
	for _, ev := range evs {
		var err error
		if buf, err = aap.AppendFrame(buf, ev); err != nil {
			panic(err) // the tests' own events
		}
	}
	_, _ = w.Write(buf)
	_ = http.NewResponseController(w).Flush()
}

// answerText is a fake turn that says text and ends the turn.
func answerText(text string) func(http.ResponseWriter, *http.Request, int, *aap.PostSessionTurnRequest) {
	return func(w http.ResponseWriter, _ *http.Request, _ int, req *aap.PostSessionTurnRequest) {
		if req.Mode() == aap.StreamNone {
			writeJSON(w, http.StatusOK, aap.PostSessionTurnResponse{StopReason: aap.StopEndTurn, Messages: []aap.Message{&aap.AssistantMessage{Content: aap.TextContent(text)}}})
			return
		}
		writeEvents(w, &aap.TurnStart{}, &aap.TextDelta{Delta: text}, &aap.TurnStop{StopReason: aap.StopEndTurn})
	}
}
