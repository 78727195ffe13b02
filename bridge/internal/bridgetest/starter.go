package bridgetest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/internal/sse"
)

// StarterStateAgent is an AG-UI agent that does what two features of the
// AG-UI project's all-features server starter do
// (integrations/server-starter-all-features/python/examples/example_server/
// in ag-ui-protocol/ag-ui), without their pauses, each on the path the
// starter serves it on:
//
//   - /shared_state (shared_state.py): RUN_STARTED, one STATE_SNAPSHOT of
//     a recipe (StarterRecipe), RUN_FINISHED;
//   - /agentic_generative_ui (agentic_generative_ui.py): a STATE_SNAPSHOT
//     of ten pending steps, a STATE_DELTA per step marking it completed
//     (the patch jsonpatch.make_patch makes: one replace), and a last
//     STATE_SNAPSHOT of the completed steps.
//
// Its events are written as the starter's EventEncoder writes them
// (pydantic's model_dump_json by alias, without nulls), with a STEP_STARTED
// and STEP_FINISHED around the steps, an ACTIVITY_SNAPSHOT beside the
// recipe and a result on the recipe's RUN_FINISHED, which the starter does
// not send, so that every event AAP has no event for crosses. It keeps every RunAgentInput it gets.
type StarterStateAgent struct {
	mu     sync.Mutex
	inputs []*types.RunAgentInput
}

// StarterRecipe is the state the shared-state feature sends.
const StarterRecipe = `{"recipe":{"skill_level":"Advanced","special_preferences":["Low Carb","Spicy"],"cooking_time":"15 min",` +
	`"ingredients":[{"icon":"🍗","name":"chicken breast","amount":"1"},{"icon":"🌶️","name":"chili powder","amount":"1 tsp"},` +
	`{"icon":"🧂","name":"Salt","amount":"a pinch"},{"icon":"🥬","name":"Lettuce leaves","amount":"handful"}],` +
	`"instructions":["Season chicken with chili powder and salt.","Sear until fully cooked.","Slice and wrap in lettuce."]}}`

// Inputs returns the runs the agent got, in order.
func (a *StarterStateAgent) Inputs() []*types.RunAgentInput {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]*types.RunAgentInput(nil), a.inputs...)
}

// ServeHTTP answers one run of the feature the path names.
func (a *StarterStateAgent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	var in *types.RunAgentInput
	if err == nil {
		in, err = agui.DecodeRunAgentInput(body)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var evs []string
	finished := ""
	switch {
	case strings.HasSuffix(r.URL.Path, "/shared_state"):
		finished = `,"result":{"saved":true,"servings":2.50}`
		evs = []string{`{"type":"ACTIVITY_SNAPSHOT","messageId":"act-1","activityType":"recipe-card","content":{"title":"Spicy wraps"}}`,
			`{"type":"STATE_SNAPSHOT","snapshot":` + StarterRecipe + `}`}
	case strings.HasSuffix(r.URL.Path, "/agentic_generative_ui"):
		evs = starterSteps()
	default:
		http.NotFound(w, r)
		return
	}
	a.mu.Lock()
	a.inputs = append(a.inputs, in)
	a.mu.Unlock()
	run := fmt.Sprintf(`"threadId":%s,"runId":%s`, quoteJSON(in.ThreadID), quoteJSON(in.RunID))
	evs = append(append([]string{`{"type":"RUN_STARTED",` + run + `}`}, evs...), `{"type":"RUN_FINISHED",`+run+finished+`}`)
	w.Header().Set("Content-Type", "text/event-stream")
	var out []byte
	for _, ev := range evs {
		out = sse.AppendEvent(out, "", []byte(ev))
	}
	_, _ = w.Write(out)
}

// starterSteps are agentic_generative_ui.py's state events.
func starterSteps() []string {
	steps := func(done int) string {
		var sb strings.Builder
		sb.WriteString(`{"steps":[`)
		for i := range 10 {
			status := "pending"
			if i < done {
				status = "completed"
			}
			if i > 0 {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, `{"description":"Step %d","status":%q}`, i+1, status)
		}
		sb.WriteString(`]}`)
		return sb.String()
	}
	evs := []string{`{"type":"STATE_SNAPSHOT","snapshot":` + steps(0) + `}`, `{"type":"STEP_STARTED","stepName":"steps"}`}
	for i := range 10 {
		evs = append(evs, fmt.Sprintf(`{"type":"STATE_DELTA","delta":[{"op":"replace","path":"/steps/%d/status","value":"completed"}]}`, i))
	}
	return append(evs, `{"type":"STEP_FINISHED","stepName":"steps"}`, `{"type":"STATE_SNAPSHOT","snapshot":`+steps(10)+`}`)
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
