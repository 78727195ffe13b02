package aap2agui_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/demo"
)

// serverStarter is one of the two features of the AG-UI server starter
// (demo.Starter) which answer with one MESSAGES_SNAPSHOT and nothing else
// between RUN_STARTED and RUN_FINISHED: the run's input messages, as
// received, then the agent's own.
//   - backend_tool_rendering: an assistant message calling get_weather
//     ({"city": "San Francisco"}) and the tool message of its result;
//   - tool_based_generative_ui: to "thanks", an assistant message
//     "Haiku created"; else an assistant message calling generate_haiku and
//     the tool message "Haiku created".
//
// Its ids are numbered by run (from 0).
func serverStarter(feature string) func(w http.ResponseWriter, r *http.Request, _ *runInput, _ int) {
	starter := &demo.Starter{}
	return func(w http.ResponseWriter, r *http.Request, _ *runInput, _ int) {
		r.URL.Path = "/" + feature
		starter.ServeHTTP(w, r)
	}
}

// An agent that answers with a MESSAGES_SNAPSHOT alone is answering: what
// the snapshot holds after what the run was sent is streamed, once, in
// order, in every stream mode (a tool the agent ran is a tool_call, then a
// tool_result; a text is text), the none answer holds it, the history is
// what was streamed, and the next run is sent the snapshot's messages.
// Before, the client saw turn_start, turn_stop and nothing between.
func TestSnapshotAnswers(t *testing.T) {
	haiku, _ := json.Marshal(demo.StarterHaiku)
	weatherText, _ := json.Marshal(demo.StarterWeather)
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
