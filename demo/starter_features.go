package demo

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/aapagui/aapagui/internal/jsonenc"
)

// The features of the all-features server starter, one function each,
// named after its Python file. Each returns what its run sends between
// RUN_STARTED and RUN_FINISHED, with the starter's pauses.

// Tools and texts of the starter's features.
const (
	// StarterBackgroundTool is the page's tool agentic_chat calls when
	// told "tool".
	StarterBackgroundTool = "change_background"
	// StarterBackground is the background it asks for.
	StarterBackground = "linear-gradient(135deg, #667eea 0%, #764ba2 100%)"
	// StarterStepsTool is the page's tool human_in_the_loop calls.
	StarterStepsTool = "generate_task_steps"
	// StarterHaikuTool is the tool tool_based_generative_ui's snapshot
	// calls (and answers itself).
	StarterHaikuTool = "generate_haiku"
	// StarterDocumentTool is predictive_state_updates' own tool: declared
	// nowhere, called with the document, never given a result.
	StarterDocumentTool = "write_document_local"
	// StarterConfirmTool is the page's tool it then calls.
	StarterConfirmTool = "confirm_changes"
	// StarterRecipe is the state shared_state sends.
	StarterRecipe = `{"recipe":{"skill_level":"Advanced","special_preferences":["Low Carb","Spicy"],"cooking_time":"15 min",` +
		`"ingredients":[{"icon":"🍗","name":"chicken breast","amount":"1"},{"icon":"🌶️","name":"chili powder","amount":"1 tsp"},` +
		`{"icon":"🧂","name":"Salt","amount":"a pinch"},{"icon":"🥬","name":"Lettuce leaves","amount":"handful"}],` +
		`"instructions":["Season chicken with chili powder and salt.","Sear until fully cooked.","Slice and wrap in lettuce."]}}`
)

// StarterHaiku is the haiku tool_based_generative_ui's call carries.
var StarterHaiku = map[string][]string{
	"japanese": {"エーアイの", "橋つなぐ道", "コパキット"},
	"english":  {"From AI's realm", "A bridge-road linking us—", "CopilotKit."},
}

// StarterWeather is the result of backend_tool_rendering's get_weather.
var StarterWeather = map[string]string{"city": "San Francisco", "conditions": "sunny", "wind_speed": "10", "temperature": "20", "humidity": "60"}

// starterDogs is the starter's list of dog names.
var starterDogs = []string{"Rex", "Buddy", "Max", "Charlie", "Buddy", "Max", "Charlie"}

// StarterStory is the document predictive_state_updates writes in run n
// (from 0): the starter's story of a dog picked in turn from its list,
// each word followed by a space, as the starter streams it.
func StarterStory(n int64) string {
	name := starterDogs[n%int64(len(starterDogs))]
	return fmt.Sprintf("Once upon a time, there was a dog named %s. %s was a very good dog.", name, name) + " "
}

// lastMessage is the run's last message, or nil.
func (r *starterRun) lastMessage() *types.Message {
	if len(r.in.Messages) == 0 {
		return nil
	}
	return &r.in.Messages[len(r.in.Messages)-1]
}

// lastRole is the role of the run's last message ("" without one).
func (r *starterRun) lastRole() types.Role {
	if m := r.lastMessage(); m != nil {
		return m.Role
	}
	return ""
}

// lastContent is the text of the run's last message ("" without one).
func (r *starterRun) lastContent() string {
	if m := r.lastMessage(); m != nil {
		s, _ := m.ContentString()
		return s
	}
	return ""
}

func (r *starterRun) id(kind string) string { return kind + "-" + itoa(r.n) }

// agenticChat is agentic_chat.py: after a tool result, "background changed
// ✓"; to "tool", a call of the page's change_background; to
// "backend_tool", a MESSAGES_SNAPSHOT of the messages and a lookup_weather
// call with its result; else "counting down: " and 10 to 1 (0.3 s after
// each number) and a check mark.
func agenticChat(r *starterRun, _ bool) []beat {
	switch {
	case r.lastRole() == types.RoleTool:
		return text(r.id("text"), []beat{{event: "background changed ✓"}})
	case r.lastContent() == "tool":
		args, _ := jsonenc.Marshal(map[string]string{"background": StarterBackground})
		return toolCall(r.id("call"), StarterBackgroundTool, []beat{{event: string(args)}})
	case r.lastContent() == "backend_tool":
		args, _ := jsonenc.Marshal(map[string]string{"city": "San Francisco", "weather": "sunny"})
		return []beat{snapshot(r, callMessage(r, "lookup_weather", string(args)), resultMessage(r, "The weather in San Francisco is sunny."))}
	}
	deltas := []beat{{event: "counting down: "}}
	for count := 10; count > 0; count-- {
		deltas = append(deltas, beat{event: fmt.Sprintf("%d  ", count), pause: 0.3})
	}
	return text(r.id("text"), append(deltas, beat{event: "✓"}))
}

// backendToolRendering is backend_tool_rendering.py: after a tool result,
// "Retrieved weather information!"; else a MESSAGES_SNAPSHOT of the
// messages, a get_weather call for San Francisco and its result
// (StarterWeather).
func backendToolRendering(r *starterRun, _ bool) []beat {
	if r.lastRole() == types.RoleTool {
		return text(r.id("text"), []beat{{event: "Retrieved weather information!"}})
	}
	args, _ := jsonenc.Marshal(map[string]string{"city": "San Francisco"})
	weather, _ := jsonenc.Marshal(StarterWeather)
	return []beat{snapshot(r, callMessage(r, "get_weather", string(args)), resultMessage(r, string(weather)))}
}

// humanInTheLoop is human_in_the_loop.py: after a tool result, "Ok! I'm
// working on it."; else a call of the page's generate_task_steps whose
// arguments, ten enabled steps, stream a step at a time (0.2 s after each).
func humanInTheLoop(r *starterRun, _ bool) []beat {
	if r.lastRole() == types.RoleTool {
		return text(r.id("text"), []beat{{event: "Ok! I'm working on it."}})
	}
	args := []beat{{event: `{"steps":[`}}
	for i := range 10 {
		step, _ := jsonenc.Marshal(map[string]string{"description": fmt.Sprintf("Step %d", i+1), "status": "enabled"})
		if i != 9 {
			step = append(step, ',')
		}
		args = append(args, beat{event: string(step), pause: 0.2})
	}
	return toolCall(r.id("call"), StarterStepsTool, append(args, beat{event: "]}"}))
}

// agenticGenerativeUI is agentic_generative_ui.py: a STATE_SNAPSHOT of ten
// pending steps, a STATE_DELTA per step marking it completed (the patch
// jsonpatch.make_patch makes: one replace), 1 s after each, and a last
// STATE_SNAPSHOT of the completed steps. With extras, a STEP_STARTED and a
// STEP_FINISHED "steps" go around the deltas.
func agenticGenerativeUI(_ *starterRun, extras bool) []beat {
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
	beats := []beat{{event: `{"type":"STATE_SNAPSHOT","snapshot":` + steps(0) + `}`, pause: 1}}
	if extras {
		beats = append(beats, beat{event: `{"type":"STEP_STARTED","stepName":"steps"}`})
	}
	for i := range 10 {
		beats = append(beats, beat{event: fmt.Sprintf(`{"type":"STATE_DELTA","delta":[{"op":"replace","path":"/steps/%d/status","value":"completed"}]}`, i), pause: 1})
	}
	if extras {
		beats = append(beats, beat{event: `{"type":"STEP_FINISHED","stepName":"steps"}`})
	}
	return append(beats, beat{event: `{"type":"STATE_SNAPSHOT","snapshot":` + steps(10) + `}`})
}

// toolBasedGenerativeUI is tool_based_generative_ui.py: a MESSAGES_SNAPSHOT
// of the messages and, to "thanks", an assistant message "Haiku created";
// else a generate_haiku call (StarterHaiku) and its result "Haiku
// created".
func toolBasedGenerativeUI(r *starterRun, _ bool) []beat {
	if r.lastContent() == "thanks" {
		msg, _ := jsonenc.Marshal(map[string]string{"id": r.id("assistant"), "role": "assistant", "content": "Haiku created"})
		return []beat{snapshot(r, msg)}
	}
	haiku, _ := jsonenc.Marshal(StarterHaiku)
	return []beat{snapshot(r, callMessage(r, StarterHaikuTool, string(haiku)), resultMessage(r, "Haiku created"))}
}

// sharedState is shared_state.py: one STATE_SNAPSHOT of the recipe
// (StarterRecipe), whatever the page's state. With extras, an
// ACTIVITY_SNAPSHOT of a recipe card comes first.
func sharedState(_ *starterRun, extras bool) []beat {
	var beats []beat
	if extras {
		beats = append(beats, beat{event: `{"type":"ACTIVITY_SNAPSHOT","messageId":"act-1","activityType":"recipe-card","content":{"title":"Spicy wraps"}}`})
	}
	return append(beats, beat{event: `{"type":"STATE_SNAPSHOT","snapshot":` + StarterRecipe + `}`})
}

// predictiveStateUpdates is predictive_state_updates.py: after a tool
// result, "Ok!"; else a CUSTOM PredictState (the document state follows
// write_document_local's document argument), a call of
// write_document_local whose document (StarterStory) streams a word at a
// time (0.2 s after each), and a call of the page's confirm_changes with
// {}. Neither call gets a result.
func predictiveStateUpdates(r *starterRun, _ bool) []beat {
	if r.lastRole() == types.RoleTool {
		return text(r.id("text"), []beat{{event: "Ok!"}})
	}
	beats := []beat{{event: `{"type":"CUSTOM","name":"PredictState","value":[{"state_key":"document","tool":"` + StarterDocumentTool + `","tool_argument":"document"}]}`}}
	args := []beat{{event: `{"document":"`}}
	for _, word := range strings.Fields(StarterStory(r.n)) {
		args = append(args, beat{event: word + " ", pause: 0.2})
	}
	beats = append(beats, toolCall(r.id("doc"), StarterDocumentTool, append(args, beat{event: `"}`}))...)
	return append(beats, toolCall(r.id("confirm"), StarterConfirmTool, []beat{{event: "{}"}})...)
}

// text is an assistant text message of the deltas (their events are the
// delta texts).
func text(id string, deltas []beat) []beat {
	beats := []beat{{event: `{"type":"TEXT_MESSAGE_START","messageId":` + quote(id) + `,"role":"assistant"}`}}
	for _, d := range deltas {
		beats = append(beats, beat{event: `{"type":"TEXT_MESSAGE_CONTENT","messageId":` + quote(id) + `,"delta":` + quote(d.event) + `}`, pause: d.pause})
	}
	return append(beats, beat{event: `{"type":"TEXT_MESSAGE_END","messageId":` + quote(id) + `}`})
}

// toolCall is a call of the tool whose arguments stream as the deltas
// (their events are the argument texts).
func toolCall(id, name string, deltas []beat) []beat {
	beats := []beat{{event: `{"type":"TOOL_CALL_START","toolCallId":` + quote(id) + `,"toolCallName":` + quote(name) + `}`}}
	for _, d := range deltas {
		beats = append(beats, beat{event: `{"type":"TOOL_CALL_ARGS","toolCallId":` + quote(id) + `,"delta":` + quote(d.event) + `}`, pause: d.pause})
	}
	return append(beats, beat{event: `{"type":"TOOL_CALL_END","toolCallId":` + quote(id) + `}`})
}

// snapshot is a MESSAGES_SNAPSHOT of the run's messages, as received,
// followed by the agent's.
func snapshot(r *starterRun, added ...[]byte) beat {
	parts := make([][]byte, 0, len(r.raw)+len(added))
	for _, m := range r.raw {
		parts = append(parts, m)
	}
	parts = append(parts, added...)
	return beat{event: `{"type":"MESSAGES_SNAPSHOT","messages":[` + string(bytes.Join(parts, []byte(","))) + `]}`}
}

// callMessage is an assistant message calling the tool.
func callMessage(r *starterRun, name, args string) []byte {
	b, _ := jsonenc.Marshal(map[string]any{"id": r.id("assistant"), "role": "assistant", "toolCalls": []any{map[string]any{
		"id": r.id("call"), "type": "function", "function": map[string]string{"name": name, "arguments": args}}}})
	return b
}

// resultMessage is the tool message of the call's result.
func resultMessage(r *starterRun, content string) []byte {
	b, _ := jsonenc.Marshal(map[string]string{"id": r.id("result"), "role": "tool", "content": content, "toolCallId": r.id("call")})
	return b
}
