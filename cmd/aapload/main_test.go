package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/internal/testkit/pgtest"
)

// The load test itself works, at a tiny scale: it builds the two
// programs, drives them, and reports every turn ok, no 409, no error and
// no lost message.
func TestLoadTestRuns(t *testing.T) {
	testLoad(t)
}

// The same, with both programs on one PostgreSQL database (-store), as a
// replica would run.
func TestLoadTestRunsOnPostgres(t *testing.T) {
	testLoad(t, "-store", pgtest.Schema(t))
}

func testLoad(t *testing.T, args ...string) {
	const nonZero = `(?:[1-9][0-9]*\.[0-9]{2}|0\.(?:0[1-9]|[1-9][0-9]))`
	if testing.Short() {
		t.Skip("builds both programs")
	}
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", bin+string(filepath.Separator), "../aap2agui", "../agui2aap")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)

	var buf bytes.Buffer
	require.NoError(t, run(append([]string{"-bin", bin, "-n", "3", "-m", "2", "-c", "2"}, args...), &buf))
	report := buf.String()
	for _, name := range []string{"aap2agui", "agui2aap"} {
		assert.Regexp(t, regexp.MustCompile(name+`: 3×2 at c=2: turns ok 6/6, 409s 0, errors none, messages lost 0, p50 \S+, p99 \S+, peak RSS [1-9][0-9.]* MiB`), report)
		assert.Regexp(t, regexp.MustCompile(name+` ÷ direct: p50 `+nonZero+`×, p99 `+nonZero+`×`), report)
	}
	// The direct runs, to the demo agent each bridge fronts, work too.
	for _, what := range []string{"AG-UI runs to the AG-UI demo agent", "AAP turns to the AAP demo agent"} {
		assert.Regexp(t, regexp.MustCompile(`direct \(`+what+`\): 3×2 at c=2: turns ok 6/6, 409s 0, errors none, messages lost 0, p50 \S+, p99 \S+\n`), report)
	}
}

// -slow measures aap2agui with and without never-reading streams, on a
// store filled beforehand: both runs complete, the streams stay open (they
// cost memory), and nothing about the store is logged.
func TestSlowClientsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds aap2agui")
	}
	bin := t.TempDir()
	out, err := exec.Command("go", "build", "-o", bin+string(filepath.Separator), "../aap2agui").CombinedOutput()
	require.NoError(t, err, "%s", out)
	var buf bytes.Buffer
	require.NoError(t, run([]string{"-bin", bin, "-n", "3", "-m", "2", "-c", "2", "-slow", "20", "-presessions", "200"}, &buf))
	report := buf.String()
	assert.Regexp(t, `aap2agui, 200 stored sessions: 3×2 at c=2: turns ok 6/6, 409s 0, errors none, messages lost 0`, report)
	assert.Regexp(t, `aap2agui, 200 stored sessions, 20 never-reading streams: 3×2 at c=2: turns ok 6/6, 409s 0, errors none, messages lost 0`, report)
	assert.Regexp(t, `with ÷ without the never-reading streams: p50 [0-9.]+×, p99 [0-9.]+×; RSS [0-9.]+ → [0-9.]+ MiB \([0-9.-]+ KiB per stream\)`, report)
	assert.Contains(t, report, "logged during the run with them: 0 lock-renewal failures, 0 failed checkpoints")
}

// -huge sends one message past both bridges' 32 MiB cap: each ends the
// turn with its cap's error, its client having had the 32 MiB that fit,
// which the store holds (aap2agui's history, agui2aap's record), and its
// memory grows by 64 MB at most: the text goes to the store in parts as
// it comes.
func TestHugeMessageRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds both programs")
	}
	bin := t.TempDir()
	out, err := exec.Command("go", "build", "-o", bin+string(filepath.Separator), "../aap2agui", "../agui2aap").CombinedOutput()
	require.NoError(t, err, "%s", out)
	var buf bytes.Buffer
	require.NoError(t, run([]string{"-bin", bin, "-huge", "40"}, &buf))
	report := buf.String()
	const memory = `: RSS [1-9][0-9.]* MB before, peak growth [0-9.]+ MB, RSS [1-9][0-9.]* MB after`
	const stored = `; the store holds 33554432 bytes \(32\.0 MiB\) of the assistant's text; within 64 MB: yes\n`
	assert.Regexp(t, `aap2agui, one message of 40 MiB from its upstream: upstream sent [0-9.]+ MiB, client got 32\.0 MiB, ended: turn_stop error\n`, report)
	assert.Regexp(t, `aap2agui`+memory+stored, report)
	assert.Regexp(t, `agui2aap, one message of 40 MiB from its upstream: upstream sent [0-9.]+ MiB, client got 32\.[0-9] MiB, ended: RUN_ERROR MESSAGE_TOO_LARGE\n`, report)
	assert.Regexp(t, `agui2aap`+memory+stored, report)
}

// The fake AAP server streams a huge turn as AAP events (turn_start,
// text_delta of 64 KiB until the MiB asked for, turn_stop end_turn) and
// leaves any other turn to the demo agent.
func TestHugeAAPFraming(t *testing.T) {
	sent := &atomic.Int64{}
	srv := httptest.NewServer(hugeAAP{demo: demo.NewAAPAgent(demo.AAPAgentOptions{}), mib: 1, sent: sent})
	defer srv.Close()
	resp, err := postJSON(srv.URL+"/sessions/s1/turns", map[string]any{"stream": "delta", "messages": []any{map[string]any{"role": "user", "content": hugeText}}})
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	var names []aap.EventName
	text := 0
	for ev, err := range aap.ReadEvents(resp.Body, 0) {
		require.NoError(t, err)
		names = append(names, ev.EventName())
		if d, ok := ev.(*aap.TextDelta); ok {
			assert.Equal(t, hugeChunk, d.Delta)
			text += len(d.Delta)
		}
		if s, ok := ev.(*aap.TurnStop); ok {
			assert.Equal(t, aap.StopEndTurn, s.StopReason)
		}
	}
	assert.Equal(t, 1<<20, text)
	assert.Equal(t, int64(1<<20), sent.Load())
	require.Len(t, names, 18)
	assert.Equal(t, aap.EventTurnStart, names[0])
	assert.Equal(t, aap.EventTurnStop, names[17])

	// Another turn is the demo agent's: there is no session s1.
	resp, err = postJSON(srv.URL+"/sessions/s1/turns", map[string]any{"stream": "delta", "messages": []any{map[string]any{"role": "user", "content": "hello"}}})
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
}

// The fake AG-UI agent streams one assistant message of the MiB asked for
// in TEXT_MESSAGE_CONTENT deltas of 64 KiB, inside RUN_STARTED (the
// input's thread and run) and RUN_FINISHED.
func TestHugeAGUIFraming(t *testing.T) {
	sent := &atomic.Int64{}
	srv := httptest.NewServer(hugeAGUI{mib: 1, sent: sent})
	defer srv.Close()
	resp, err := postJSON(srv.URL, map[string]any{"threadId": "t1", "runId": "r1", "messages": []aguiMsg{{ID: "u1", Role: "user", Content: hugeText}}})
	require.NoError(t, err)
	defer resp.Body.Close()
	var types []string
	text := 0
	require.NoError(t, frames(resp.Body, func(_, data string) {
		var ev struct{ Type, ThreadID, RunID, Role, Delta string }
		require.NoError(t, json.Unmarshal([]byte(data), &ev))
		types = append(types, ev.Type)
		switch ev.Type {
		case "RUN_STARTED":
			assert.Equal(t, []string{"t1", "r1"}, []string{ev.ThreadID, ev.RunID})
		case "TEXT_MESSAGE_START":
			assert.Equal(t, "assistant", ev.Role)
		case "TEXT_MESSAGE_CONTENT":
			assert.Equal(t, hugeChunk, ev.Delta)
			text += len(ev.Delta)
		}
	}))
	assert.Equal(t, 1<<20, text)
	assert.Equal(t, int64(1<<20), sent.Load())
	require.Len(t, types, 20)
	assert.Equal(t, []string{"RUN_STARTED", "TEXT_MESSAGE_START"}, types[:2])
	assert.Equal(t, []string{"TEXT_MESSAGE_END", "RUN_FINISHED"}, types[18:])
}
