package main

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/internal/testkit/proctest"
)

func TestMain(m *testing.M) { proctest.Main(m, run) }

// The program serves the starter's features on their paths and
// /healthz, and logs each run, its whole input (pretty-printed or not, on
// one line) under --log-inputs.
func TestServesTheStarter(t *testing.T) {
	t.Parallel()
	p := proctest.Start(t, nil, "--listen", "127.0.0.1:0", "--pause", "0", "--log-inputs")
	resp, err := http.Get(p.URL() + "/healthz")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	body := "{\n  \"threadId\": \"th-1\", \"runId\": \"run-1\",\n  \"state\": {\"recipe\": {\"title\": \"Page's wraps\"}},\n" +
		"  \"messages\": [{\"id\": \"u1\", \"role\": \"user\", \"content\": \"Cook\"}], \"tools\": [], \"context\": [], \"forwardedProps\": {}\n}"
	resp, err = http.Post(p.URL()+"/shared_state", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	out, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(out), `data: {"type":"STATE_SNAPSHOT","snapshot":`+demo.StarterRecipe+`}`)

	resp, err = http.Post(p.URL()+"/nothing_here", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)

	var run string
	for _, line := range strings.Split(p.Log(), "\n") {
		if strings.Contains(line, `"feature":"shared_state"`) {
			run = line
		}
	}
	require.NotEmpty(t, run, "a line for the run:\n%s", p.Log())
	assert.Contains(t, run, `"thread":"th-1"`)
	assert.Contains(t, run, `"messages":1`)
	assert.Contains(t, run, `"input":{"threadId":"th-1","runId":"run-1","state":{"recipe":{"title":"Page's wraps"}}`)
}

// A --pause past a minute, or below zero, stops the start naming it.
func TestPauseBounds(t *testing.T) {
	for _, v := range []string{"-1s", "2m"} {
		err := run([]string{"--listen", "127.0.0.1:0", "--pause", v})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "--pause "+v)
	}
}
