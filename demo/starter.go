package demo

import (
	"encoding/json"
	"io"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/internal/jsonenc"
	"github.com/aapagui/aapagui/internal/sse"
)

// StarterFeatures are the features of the AG-UI project's all-features
// server starter, each the last segment of the path it is served on (and
// the name of the dojo page that shows it).
var StarterFeatures = []string{
	"agentic_chat", "backend_tool_rendering", "human_in_the_loop", "agentic_generative_ui",
	"tool_based_generative_ui", "shared_state", "predictive_state_updates",
}

// Starter is an AG-UI agent that does, feature by feature, what the AG-UI
// project's all-features server starter does: the deterministic agent,
// with no model, that the AG-UI dojo's server-starter-all-features pages
// and their Playwright specs run against. It mirrors the files of
// integrations/server-starter-all-features/python/examples/example_server/
// in ag-ui-protocol/ag-ui, one feature each, served on the path whose last
// segment is the feature's name (StarterFeatures): agentic_chat.py,
// backend_tool_rendering.py, human_in_the_loop.py, agentic_generative_ui.py,
// tool_based_generative_ui.py, shared_state.py and
// predictive_state_updates.py (what each answers is written beside its
// function in starter_features.go).
//
// Where the starter draws a uuid4, Starter numbers its runs (from 0, across
// features): message and tool call ids are "call-<n>", "assistant-<n>",
// "result-<n>" and the like, and the predictive story's dog is the n-th of
// the starter's list, in turn. A snapshot the starter makes of the input
// messages holds them as they were received. Its zero value answers at
// once; Pause gives it the starter's pauses. Use it by pointer.
type Starter struct {
	// Pause is how long the starter's longest pause (1 s, between the
	// agentic generative UI's steps) lasts; its other pauses (0.3 s
	// between the countdown's numbers, 0.2 s between the task steps and
	// between the story's words) are scaled alike. Zero: no pauses, each
	// run written whole.
	Pause time.Duration
	// Extras adds what the starter does not send, so that every kind of
	// event AAP has no event for is in its answers: an ACTIVITY_SNAPSHOT
	// (activityType "recipe-card") before the shared state's recipe and a
	// result ({"saved":true,"servings":2.50}) on its RUN_FINISHED, and a
	// STEP_STARTED and STEP_FINISHED "steps" around the agentic generative
	// UI's deltas.
	Extras bool

	runs atomic.Int64
}

// beat is one event of a run and the pause after it, in the starter's
// seconds.
type beat struct {
	event string
	pause float64
}

// starterRun is what the handler of a feature is given: the run's input,
// its messages as received, and its number.
type starterRun struct {
	in  *types.RunAgentInput
	raw []json.RawMessage
	n   int64
}

// starterHandlers are the features by name.
var starterHandlers = map[string]func(*starterRun, bool) []beat{
	"agentic_chat":             agenticChat,
	"backend_tool_rendering":   backendToolRendering,
	"human_in_the_loop":        humanInTheLoop,
	"agentic_generative_ui":    agenticGenerativeUI,
	"tool_based_generative_ui": toolBasedGenerativeUI,
	"shared_state":             sharedState,
	"predictive_state_updates": predictiveStateUpdates,
}

// ServeHTTP answers one run of the feature the path ends with: 404 for a
// path that names none, 405 for a method other than POST, 400 for a body
// that is not a RunAgentInput.
func (s *Starter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	feature := path.Base(r.URL.Path)
	handle, ok := starterHandlers[feature]
	if !ok {
		aap.WriteError(w, http.StatusNotFound, "unknown_feature", "no feature of the server starter is served at "+r.URL.Path+"; the features are "+strings.Join(StarterFeatures, ", "))
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		aap.WriteError(w, http.StatusMethodNotAllowed, "method_not_allowed", "POST a RunAgentInput")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxInput))
	run := &starterRun{}
	if err == nil {
		run.in, err = agui.DecodeRunAgentInput(body)
	}
	if err == nil {
		var raw struct {
			Messages []json.RawMessage `json:"messages"`
		}
		err = json.Unmarshal(body, &raw)
		run.raw = raw.Messages
	}
	if err != nil {
		aap.WriteError(w, http.StatusBadRequest, "invalid_body", "the body is not a RunAgentInput: "+err.Error())
		return
	}
	run.n = s.runs.Add(1) - 1
	ids := `"threadId":` + quote(run.in.ThreadID) + `,"runId":` + quote(run.in.RunID)
	beats := append([]beat{{event: `{"type":"RUN_STARTED",` + ids + `}`}}, handle(run, s.Extras)...)
	finished := ""
	if s.Extras && feature == "shared_state" {
		finished = `,"result":{"saved":true,"servings":2.50}`
	}
	beats = append(beats, beat{event: `{"type":"RUN_FINISHED",` + ids + finished + `}`})
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	s.write(w, r, beats)
}

// write writes the beats, each flushed and followed by its pause when
// there are pauses; it stops when the client leaves.
func (s *Starter) write(w http.ResponseWriter, r *http.Request, beats []beat) {
	flusher := flusherOf(w)
	var out []byte
	for _, b := range beats {
		out = sse.AppendEvent(out, "", []byte(b.event))
		wait := time.Duration(b.pause * float64(s.Pause))
		if s.Pause <= 0 || wait <= 0 {
			continue
		}
		if _, err := w.Write(out); err != nil {
			return
		}
		out = out[:0]
		if flusher != nil {
			flusher.Flush()
		}
		t := time.NewTimer(wait)
		select {
		case <-r.Context().Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
	_, _ = w.Write(out)
}

func quote(s string) string { return string(jsonenc.AppendString(nil, s)) }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
