package aap2agui_test

import (
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/store/sqlite"
)

// TestRestart stops a conversation where it waits for the application (a
// client tool result, a permission), closes the server and its SQLite
// store, and continues it in a new server on the same file: the turn goes
// on as if nothing happened, the history is complete, and the agent gets
// the old messages under the same AG-UI ids as before.
func TestRestart(t *testing.T) {
	demoAgent := func(w http.ResponseWriter, r *http.Request, _ *runInput, _ int) { demo.AGUIAgent{}.ServeHTTP(w, r) }
	searchResult := demo.SearchResult("sqlite")
	tests := []struct {
		name      string
		respond   func(w http.ResponseWriter, r *http.Request, in *runInput, n int)
		session   aap.PostSessionsRequest
		first     string
		firstWant []part
		answer    func(calls []string) []aap.Message
		want      []part
		history   []string
		state     string // RunAgentInput.state after the restart
	}{
		{
			name:      "a client tool result",
			respond:   demoAgent,
			session:   aap.PostSessionsRequest{Tools: []aap.ToolSpec{weatherSpec}},
			first:     "weather in Paris",
			firstWant: []part{call("call#1", "get_weather", `{"location":"Paris"}`)},
			answer:    toolResult("Rainy, 12°C"),
			want:      []part{say(demo.WeatherText("Paris", "Rainy, 12°C"))},
			history: []string{
				`{"role":"user","content":"weather in Paris"}`,
				toolUse("call#1", "get_weather", `{"location":"Paris"}`),
				toolMessage("call#1", "Rainy, 12°C"),
				assistantText(demo.WeatherText("Paris", "Rainy, 12°C")),
			},
			state: `{}`,
		},
		{
			name:      "a permission for an open interrupt",
			respond:   demoAgent,
			session:   aap.PostSessionsRequest{Agent: aap.AgentConfig{Tools: []aap.ServerToolRef{{Name: demo.SearchTool}}}},
			first:     "search sqlite",
			firstWant: []part{call("call#1", "web_search", `{"query":"sqlite"}`)},
			answer:    permission(true, ""),
			want:      []part{result("call#1", searchResult), say(demo.SearchAnswer(searchResult))},
			history: []string{
				`{"role":"user","content":"search sqlite"}`,
				toolUse("call#1", "web_search", `{"query":"sqlite"}`),
				toolMessage("call#1", searchResult),
				assistantText(demo.SearchAnswer(searchResult)),
			},
			state: `{}`,
		},
		{
			name: "AG-UI state",
			respond: func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
				if n == 0 {
					sseEvents(w, concat([]string{runStarted(in), `{"type":"STATE_SNAPSHOT","snapshot":{"cart":["apple"]}}`},
						toolCallEvents("call_00000000000000000000000000000001", "get_weather", "m0", `{"location":"Lima"}`), []string{runFinished(in)})...)
					return
				}
				sseEvents(w, textRun(in, "m1", "thanks")...)
			},
			session:   aap.PostSessionsRequest{Tools: []aap.ToolSpec{weatherSpec}},
			first:     "go",
			firstWant: []part{call("call#1", "get_weather", `{"location":"Lima"}`)},
			answer:    toolResult("warm"),
			want:      []part{{kind: "text", text: "thanks", deltas: []string{"thanks"}}},
			history: []string{
				`{"role":"user","content":"go"}`,
				toolUse("call#1", "get_weather", `{"location":"Lima"}`),
				toolMessage("call#1", "warm"),
				assistantText("thanks"),
			},
			state: `{"cart":["apple"]}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "aap2agui.db")
			up := newFakeUpstream(t, tt.respond)
			open := func() (*env, store.Store) {
				st, err := sqlite.Open(path)
				require.NoError(t, err)
				t.Cleanup(func() { _ = st.Close() })
				return newEnv(t, up.URL, func(c *aap2agui.Config) { c.Store = st }), st
			}
			var norm idNormalizer

			e, st := open()
			id := e.createSession(t, tt.session)
			evs, err := e.stream(t, id, userTurn(aap.StreamDelta, tt.first))
			require.NoError(t, err)
			require.Equal(t, eventsOf(t, aap.StreamDelta, tt.firstWant, aap.StopToolUse), norm.lines(eventLines(t, evs)))
			sessionBefore := doRaw(t, http.MethodGet, e.URL+"/sessions/"+id, "", "").Body
			entries, err := st.History(bridgetest.Context(t), id)
			require.NoError(t, err)
			var idsBefore []string
			for _, en := range entries {
				idsBefore = append(idsBefore, en.AGUIID)
			}

			e.server.Close()
			require.NoError(t, st.Close())

			e, _ = open()
			assert.JSONEq(t, sessionBefore, doRaw(t, http.MethodGet, e.URL+"/sessions/"+id, "", "").Body, "the session's settings survive")
			evs, err = e.stream(t, id, aap.PostSessionTurnRequest{Stream: aap.StreamDelta, Messages: tt.answer(norm.ids)})
			require.NoError(t, err)
			assert.Equal(t, eventsOf(t, aap.StreamDelta, tt.want, aap.StopEndTurn), norm.lines(eventLines(t, evs)))
			assert.Equal(t, tt.history, norm.lines(e.history(t, id, aap.HistoryFull)))

			in := up.input(t, 1)
			require.GreaterOrEqual(t, len(in.Messages), len(idsBefore))
			assert.Equal(t, idsBefore, in.messageIDs()[:len(idsBefore)], "the old messages keep their AG-UI ids")
			assert.JSONEq(t, tt.state, string(in.Raw["state"]))
		})
	}
}
