package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
