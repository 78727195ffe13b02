package aap2agui_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/internal/testkit/metricstest"
)

// beyondTheConversation is a run that sends, beside its answer, one of
// each AG-UI event no AAP event carries, as CopilotKit's agents do (shared
// state, predictive state updates' PredictState, activity, steps), STATE_DELTA
// twice, a type no decoder knows, a snapshot holding an activity message,
// and a RUN_FINISHED whose result is not a stop reason.
func beyondTheConversation(in *runInput) []string {
	msgs := toAny(in.Raw["messages"])
	msgs = append(msgs,
		map[string]any{"id": "act-1", "role": "activity", "activityType": "PLAN", "content": map[string]any{"step": 2}},
		map[string]any{"id": "m1", "role": "assistant", "content": "Planned."})
	snap, _ := json.Marshal(map[string]any{"type": "MESSAGES_SNAPSHOT", "messages": msgs})
	return concat([]string{runStarted(in),
		`{"type":"STEP_STARTED","stepName":"plan"}`,
		`{"type":"STATE_SNAPSHOT","snapshot":{"recipe":{"title":"Soup"}}}`,
		`{"type":"STATE_DELTA","delta":[{"op":"replace","path":"/recipe/title","value":"Stew"}]}`,
		`{"type":"STATE_DELTA","delta":[{"op":"add","path":"/recipe/serves","value":4}]}`,
		`{"type":"CUSTOM","name":"PredictState","value":[{"state_key":"document","tool":"write_document","tool_argument":"document"}]}`,
		`{"type":"RAW","event":{"provider":"x"}}`,
		`{"type":"ACTIVITY_SNAPSHOT","messageId":"act-1","activityType":"PLAN","content":{"step":1}}`,
		`{"type":"ACTIVITY_DELTA","messageId":"act-1","activityType":"PLAN","patch":[{"op":"replace","path":"/step","value":2}]}`,
		`{"type":"SOMETHING_NEWER","value":1}`,
		`{"type":"STEP_FINISHED","stepName":"plan"}`},
		textMessage("m1", "Planned."),
		[]string{string(snap), fmt.Sprintf(`{"type":"RUN_FINISHED","threadId":%q,"runId":%q,"result":{"plan":"done"}}`, in.ThreadID, in.RunID)})
}

// What the agent sends that no AAP event carries is not dropped silently:
// each turn counts it in aap2agui_events_not_carried_total by type and
// logs it once, at info, naming the types and their counts; a turn with
// none of it logs nothing and counts nothing. The state events still make
// the session's state.
func TestNotCarriedCountedAndLogged(t *testing.T) {
	up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
		if n == 0 {
			sseEvents(w, beyondTheConversation(in)...)
			return
		}
		sseEvents(w, textRun(in, fmt.Sprint("m", n+1), "ok")...)
	})
	var logs bridgetest.SyncBuffer
	e := newEnv(t, up.URL, func(c *aap2agui.Config) { c.Logger = zerolog.New(&logs).Level(zerolog.InfoLevel) })
	id := e.createSession(t, aap.PostSessionsRequest{})

	evs, err := e.stream(t, id, userTurn(aap.StreamDelta, "plan a soup"))
	require.NoError(t, err)
	assert.Equal(t, eventsOf(t, aap.StreamDelta, []part{whole("Planned.")}, aap.StopEndTurn), eventLines(t, evs))
	want := map[string]float64{
		"STATE_SNAPSHOT": 1, "STATE_DELTA": 2, "CUSTOM": 1, "RAW": 1, "ACTIVITY_SNAPSHOT": 1, "ACTIVITY_DELTA": 1,
		"STEP_STARTED": 1, "STEP_FINISHED": 1, "unknown": 1, "MESSAGES_SNAPSHOT:activity": 1, "RUN_FINISHED:result": 1,
	}
	const counter = "aap2agui_events_not_carried_total"
	// lines are the log's lines of what was not carried once turns have
	// finished.
	lines := func(turns int) []map[string]any {
		var out []map[string]any
		require.Eventually(t, func() bool {
			out = bridgetest.LogLines(t, logs.String(), "the agent sent what no AAP event carries: the AAP client was not sent it")
			return len(bridgetest.LogLines(t, logs.String(), "turn finished")) == turns
		}, bridgetest.Timeout, 5*time.Millisecond)
		return out
	}
	first := lines(1)
	require.Len(t, first, 1, "one line for the turn")
	assert.Equal(t, "info", first[0]["level"])
	assert.Equal(t, id, first[0]["session"])
	assert.Equal(t, toAnyMap(want), first[0]["not_carried"])
	m := metricstest.Scrape(t, e.Root+"/metrics", "")
	assert.ElementsMatch(t, keys(want), m.LabelValues(counter, "type"))
	for typ, n := range want {
		assert.Equal(t, n, m.Value(counter, "type", typ), typ)
	}
	sess, err := e.Store.GetSession(bridgetest.Context(t), "", id)
	require.NoError(t, err)
	assert.JSONEq(t, `{"recipe":{"serves":4,"title":"Stew"}}`, string(sess.State), "the state events make the session's state")

	_, err = e.stream(t, id, userTurn(aap.StreamDelta, "thanks"))
	require.NoError(t, err)
	assert.Len(t, lines(2), 1, "a turn with nothing the client is not sent logs nothing")
	again := metricstest.Scrape(t, e.Root+"/metrics", "")
	for typ, n := range want {
		assert.Equal(t, n, again.Value(counter, "type", typ), typ)
	}
	assert.False(t, strings.Contains(logs.String(), "SOMETHING_NEWER"), "an unknown type's name is the agent's: counted as unknown")
}

func toAnyMap(m map[string]float64) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func keys(m map[string]float64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
