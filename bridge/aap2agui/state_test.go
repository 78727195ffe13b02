package aap2agui_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
)

// TestStateAsWritten: the state a STATE_SNAPSHOT sets goes back to the
// agent as the agent wrote it, its keys in their order and its numbers
// as written (not read as float64 and written sorted), and the deltas
// after it keep that order, a new key last, and write their values as
// the agent did.
func TestStateAsWritten(t *testing.T) {
	responses := [][]string{
		{`{"type":"STATE_SNAPSHOT","snapshot":{"z": 1, "id": 12345678901234567890, "nested": {"y": true, "b": [1.50, 2]}}}`},
		{`{"type":"STATE_DELTA","delta":[{"op":"add","path":"/a","value":"<b>"},{"op":"replace","path":"/z","value":2.50e1}]}`},
		nil,
	}
	wantState := []string{
		`{}`,
		`{"z":1,"id":12345678901234567890,"nested":{"y":true,"b":[1.50,2]}}`,
		`{"z":2.50e1,"id":12345678901234567890,"nested":{"y":true,"b":[1.50,2]},"a":"\u003cb\u003e"}`,
	}
	up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
		sseEvents(w, concat([]string{runStarted(in)}, responses[n], textMessage(fmt.Sprintf("m%d", n), "done"), []string{runFinished(in)})...)
	})
	e := newEnv(t, up.URL)
	id := e.createSession(t, aap.PostSessionsRequest{})
	for n := range responses {
		_, err := e.stream(t, id, userTurn(aap.StreamDelta, fmt.Sprint("turn ", n)))
		require.NoError(t, err)
		assert.Equal(t, wantState[n], string(up.input(t, n).Raw["state"]), "run %d", n)
	}
}

// TestStateCopiesBounded: STATE_DELTAs that copy a part of the state into
// itself, each doubling it, are applied only while what the copies add
// stays within 16 MiB, the most one event may carry; the later ones leave
// the state as it was, and the turn goes on.
func TestStateCopiesBounded(t *testing.T) {
	deltas := []string{`{"type":"STATE_SNAPSHOT","snapshot":{"a":["` + strings.Repeat("x", 60<<10) + `"]}}`}
	for i := range 10 { // 60 KiB × 2^10 = 60 MiB unbounded
		deltas = append(deltas, fmt.Sprintf(`{"type":"STATE_DELTA","delta":[{"op":"copy","from":"/a","path":"/a/-"},{"op":"add","path":"/copy%d","value":true}]}`, i))
	}
	responses := [][]string{deltas, nil}
	up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
		sseEvents(w, concat([]string{runStarted(in)}, responses[n], textMessage(fmt.Sprintf("m%d", n), "done"), []string{runFinished(in)})...)
	})
	e := newEnv(t, up.URL)
	id := e.createSession(t, aap.PostSessionsRequest{})
	for n := range responses {
		evs, err := e.stream(t, id, userTurn(aap.StreamDelta, fmt.Sprint("turn ", n)))
		require.NoError(t, err)
		assert.Equal(t, `turn_stop {"stopReason":"end_turn"}`, eventLines(t, evs)[len(evs)-1], "run %d", n)
	}
	state := up.input(t, 1).Raw["state"]
	assert.Less(t, len(state), 17<<20, "the state the copies made")
	assert.Greater(t, len(state), 8<<20, "the copies within the bound are applied")
	for i := range 10 {
		// 60 KiB × (2^8 - 1) fits the bound, 60 KiB × (2^9 - 1) does not.
		assert.Equal(t, i < 8, strings.Contains(string(state), fmt.Sprintf(`"copy%d":`, i)), "copy %d applied", i)
	}
}
