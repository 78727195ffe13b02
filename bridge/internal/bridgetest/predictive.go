package bridgetest

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/internal/sse"
)

// The tools of the predictive-state agent: its own, which it declares
// nowhere and never reports a result for, and the page's.
const (
	PredictiveDocumentTool = "write_document_local"
	PredictiveConfirmTool  = "confirm_changes"
)

// PredictiveStory is the document the predictive-state agent writes.
const PredictiveStory = "Once upon a time, there was a dog named Rex. Rex was a very good dog."

// PredictiveAgent is an AG-UI agent that does what the predictive state
// updates feature of the AG-UI project's all-features server starter does
// (integrations/server-starter-all-features/python/examples/example_server/
// predictive_state_updates.py in ag-ui-protocol/ag-ui), without its pauses
// and with one story rather than a dog's name picked at random. A run
// whose last message is a tool message answers "Ok!"; any other sends a
// CUSTOM PredictState (the document state follows the tool's document
// argument), a call of PredictiveDocumentTool whose document argument is
// PredictiveStory streamed word by word, and a call of the page's
// PredictiveConfirmTool with {}; then RUN_FINISHED, no result for either
// call. It keeps every RunAgentInput it gets.
type PredictiveAgent struct {
	mu     sync.Mutex
	inputs []*types.RunAgentInput
}

// Inputs returns the runs the agent got, in order.
func (a *PredictiveAgent) Inputs() []*types.RunAgentInput {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]*types.RunAgentInput(nil), a.inputs...)
}

// ServeHTTP answers one run.
func (a *PredictiveAgent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	var in *types.RunAgentInput
	if err == nil {
		in, err = agui.DecodeRunAgentInput(body)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	a.mu.Lock()
	a.inputs = append(a.inputs, in)
	n := len(a.inputs)
	a.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	var out []byte
	for _, ev := range predictiveRun(in, n) {
		data, err := agui.AppendEvent(nil, ev)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		out = sse.AppendEvent(out, "", data)
	}
	_, _ = w.Write(out)
}

// predictiveRun is the events of the agent's n-th run (from 1) of in.
func predictiveRun(in *types.RunAgentInput, n int) []events.Event {
	base := events.NewBaseEvent
	evs := []events.Event{&events.RunStartedEvent{BaseEvent: base(events.EventTypeRunStarted), ThreadIDValue: in.ThreadID, RunIDValue: in.RunID}}
	if last := len(in.Messages) - 1; last >= 0 && in.Messages[last].Role == types.RoleTool {
		id := "predictive-text-" + strconv.Itoa(n)
		evs = append(evs,
			&events.TextMessageStartEvent{BaseEvent: base(events.EventTypeTextMessageStart), MessageID: id, Role: ptr("assistant")},
			&events.TextMessageContentEvent{BaseEvent: base(events.EventTypeTextMessageContent), MessageID: id, Delta: "Ok!"},
			&events.TextMessageEndEvent{BaseEvent: base(events.EventTypeTextMessageEnd), MessageID: id})
	} else {
		doc, confirm := "predictive-doc-"+strconv.Itoa(n), "predictive-confirm-"+strconv.Itoa(n)
		evs = append(evs,
			&events.CustomEvent{BaseEvent: base(events.EventTypeCustom), Name: "PredictState", Value: []any{map[string]any{
				"state_key": "document", "tool": PredictiveDocumentTool, "tool_argument": "document"}}},
			&events.ToolCallStartEvent{BaseEvent: base(events.EventTypeToolCallStart), ToolCallID: doc, ToolCallName: PredictiveDocumentTool},
			&events.ToolCallArgsEvent{BaseEvent: base(events.EventTypeToolCallArgs), ToolCallID: doc, Delta: `{"document":"`})
		words := strings.Split(PredictiveStory, " ")
		for i, word := range words {
			if i < len(words)-1 {
				word += " "
			}
			evs = append(evs, &events.ToolCallArgsEvent{BaseEvent: base(events.EventTypeToolCallArgs), ToolCallID: doc, Delta: word})
		}
		evs = append(evs,
			&events.ToolCallArgsEvent{BaseEvent: base(events.EventTypeToolCallArgs), ToolCallID: doc, Delta: `"}`},
			&events.ToolCallEndEvent{BaseEvent: base(events.EventTypeToolCallEnd), ToolCallID: doc},
			&events.ToolCallStartEvent{BaseEvent: base(events.EventTypeToolCallStart), ToolCallID: confirm, ToolCallName: PredictiveConfirmTool},
			&events.ToolCallArgsEvent{BaseEvent: base(events.EventTypeToolCallArgs), ToolCallID: confirm, Delta: "{}"},
			&events.ToolCallEndEvent{BaseEvent: base(events.EventTypeToolCallEnd), ToolCallID: confirm})
	}
	return append(evs, &events.RunFinishedEvent{BaseEvent: base(events.EventTypeRunFinished), ThreadIDValue: in.ThreadID, RunIDValue: in.RunID})
}

func ptr[T any](v T) *T { return &v }
