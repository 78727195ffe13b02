package aap2agui_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
)

// serverStarter mirrors two features of the AG-UI server starter
// (integrations/server-starter-all-features/python/examples/example_server
// in ag-ui-protocol/ag-ui), which answer with one MESSAGES_SNAPSHOT and
// nothing else between RUN_STARTED and RUN_FINISHED: the run's input
// messages, as received, then the agent's own.
//   - backend_tool_rendering.py: an assistant message calling get_weather
//     ({"city": "San Francisco"}) and the tool message of its result;
//   - tool_based_generative_ui.py: to "thanks", an assistant message
//     "Haiku created"; else an assistant message calling generate_haiku and
//     the tool message "Haiku created".
//
// Its ids are the starter's uuid4s, numbered here by run (n).
func serverStarter(feature string) func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
	return func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
		msgs := toAny(in.Raw["messages"])
		callID, msgID, resultID := fmt.Sprintf("call-%d", n), fmt.Sprintf("assistant-%d", n), fmt.Sprintf("result-%d", n)
		call := func(name string, args any) map[string]any {
			b, _ := json.Marshal(args)
			return map[string]any{"id": msgID, "role": "assistant", "toolCalls": []any{map[string]any{
				"id": callID, "type": "function", "function": map[string]any{"name": name, "arguments": string(b)}}}}
		}
		last := in.Messages[len(in.Messages)-1]
		switch {
		case feature == "backend_tool_rendering":
			weather, _ := json.Marshal(map[string]string{"city": "San Francisco", "conditions": "sunny", "wind_speed": "10", "temperature": "20", "humidity": "60"})
			msgs = append(msgs, call("get_weather", map[string]string{"city": "San Francisco"}),
				map[string]any{"id": resultID, "role": "tool", "content": string(weather), "toolCallId": callID})
		case last.Content == "thanks":
			msgs = append(msgs, map[string]any{"id": msgID, "role": "assistant", "content": "Haiku created"})
		default:
			msgs = append(msgs, call("generate_haiku", haikuArgs),
				map[string]any{"id": resultID, "role": "tool", "toolCallId": callID, "content": "Haiku created"})
		}
		snap, _ := json.Marshal(map[string]any{"type": "MESSAGES_SNAPSHOT", "messages": msgs})
		sseEvents(w, runStarted(in), string(snap), runFinished(in))
	}
}

var haikuArgs = map[string][]string{
	"japanese": {"エーアイの", "橋つなぐ道", "コパキット"},
	"english":  {"From AI's realm", "A bridge-road linking us—", "CopilotKit."},
}

// An agent that answers with a MESSAGES_SNAPSHOT alone is answering: what
// the snapshot holds after what the run was sent is streamed, once, in
// order, in every stream mode (a tool the agent ran is a tool_call, then a
// tool_result; a text is text), the none answer holds it, the history is
// what was streamed, and the next run is sent the snapshot's messages.
// Before, the client saw turn_start, turn_stop and nothing between.
func TestSnapshotAnswers(t *testing.T) {
	haiku, _ := json.Marshal(haikuArgs)
	weatherText, _ := json.Marshal(map[string]string{"city": "San Francisco", "conditions": "sunny", "wind_speed": "10", "temperature": "20", "humidity": "60"})
	type turn struct {
		say      string
		want     []part
		produced []string
	}
	for _, tc := range []struct {
		feature string
		turns   []turn
	}{
		{"backend_tool_rendering", []turn{{
			say:      "What is the weather in San Francisco?",
			want:     []part{call("call-0", "get_weather", `{"city":"San Francisco"}`), result("call-0", string(weatherText))},
			produced: []string{toolUse("call-0", "get_weather", `{"city":"San Francisco"}`), toolMessage("call-0", string(weatherText))},
		}}},
		{"tool_based_generative_ui", []turn{{
			say:      "Write a haiku about AI",
			want:     []part{call("call-0", "generate_haiku", string(haiku)), result("call-0", "Haiku created")},
			produced: []string{toolUse("call-0", "generate_haiku", string(haiku)), toolMessage("call-0", "Haiku created")},
		}, {
			say:      "thanks",
			want:     []part{whole("Haiku created")},
			produced: []string{assistantText("Haiku created")},
		}}},
	} {
		for _, mode := range []aap.StreamMode{aap.StreamDelta, aap.StreamMessage, aap.StreamNone} {
			t.Run(tc.feature+"/"+string(mode), func(t *testing.T) {
				up := newFakeUpstream(t, serverStarter(tc.feature))
				e := newEnv(t, up.URL)
				id := e.createSession(t, aap.PostSessionsRequest{})
				var history []string
				for i, tn := range tc.turns {
					req := userTurn(mode, tn.say)
					if mode == aap.StreamNone {
						resp, err := e.Client.Turn(bridgetest.Context(t), id, &req)
						require.NoError(t, err)
						assert.Equal(t, aap.StopEndTurn, resp.StopReason)
						assert.Equal(t, tn.produced, messageLines(t, resp.Messages), "turn %d: the answer", i)
					} else {
						evs, err := e.stream(t, id, req)
						require.NoError(t, err)
						assert.Equal(t, eventsOf(t, mode, tn.want, aap.StopEndTurn), eventLines(t, evs), "turn %d: the stream", i)
					}
					history = append(append(history, `{"role":"user","content":"`+tn.say+`"}`), tn.produced...)
					assert.Equal(t, history, e.history(t, id, aap.HistoryFull), "turn %d: the history is what was streamed", i)
					assert.Empty(t, historyProblems(e.historyMessages(t, id)))
				}
				if len(tc.turns) > 1 {
					// The second run was sent the first's snapshot, under its ids.
					assert.Equal(t, []string{"assistant-0", "result-0"}, up.input(t, 1).messageIDs()[1:3])
				}
			})
		}
	}
}
