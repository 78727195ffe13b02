package bridgetest

import (
	"bytes"
	"io"
	"net/http"
	"sync"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/aapagui/aapagui/agui"
)

// Recorder is an AG-UI agent that keeps every RunAgentInput it is sent
// and hands the run to Agent (demo.Starter, say), body and all.
type Recorder struct {
	// Agent answers the runs.
	Agent http.Handler

	mu     sync.Mutex
	inputs []*types.RunAgentInput
}

// Inputs returns the runs the agent got, in order.
func (a *Recorder) Inputs() []*types.RunAgentInput {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]*types.RunAgentInput(nil), a.inputs...)
}

// ServeHTTP keeps the run's input, if it is one, and passes the request on.
func (a *Recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if in, err := agui.DecodeRunAgentInput(body); err == nil {
		a.mu.Lock()
		a.inputs = append(a.inputs, in)
		a.mu.Unlock()
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	a.Agent.ServeHTTP(w, r)
}
