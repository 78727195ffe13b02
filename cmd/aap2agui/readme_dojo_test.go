package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/bridge/agui2aap"
	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/internal/testkit/doctest"
	"github.com/aapagui/aapagui/internal/testkit/proctest"
	"github.com/aapagui/aapagui/store"
)

// TestREADMEDojoChain runs docs/USING.md's chain the other way as written:
// the all-features starter (demo.Starter, what cmd/dojoagent serves),
// aap2agui with the block's flags and examples/dojo-agents.yaml (its
// upstream moved to the test's starter), agui2aap in front of it as the
// block starts it, and the block's curl run and connect through all three
// (only the addresses become the test's). The page's state reaches the
// agent, the agent's recipe comes back as a STATE_SNAPSHOT, and the
// connect gives the thread's messages and that state back.
func TestREADMEDojoChain(t *testing.T) {
	t.Parallel()
	blocks := doctest.Blocks(t, "../../docs/USING.md", "sh", "go run ./cmd/dojoagent")
	require.Len(t, blocks, 1)
	start := blocks[0]
	require.Contains(t, start, "go run ./cmd/agui2aap --upstream http://127.0.0.1:8080 --store memory:", "the block starts agui2aap in front of aap2agui")
	m := regexp.MustCompile(`(?m)^go run \./cmd/aap2agui ([^#&\n]*)`).FindStringSubmatch(start)
	require.NotNil(t, m, "the block starts aap2agui:\n%s", start)

	var mu sync.Mutex
	var states []any // the state of each run the agent got
	starter := &demo.Starter{}
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var in struct{ State any }
		_ = json.Unmarshal(body, &in)
		mu.Lock()
		states = append(states, in.State)
		mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		starter.ServeHTTP(w, r)
	}))
	t.Cleanup(as.Close)
	example, err := os.ReadFile("../../examples/dojo-agents.yaml")
	require.NoError(t, err)
	require.Contains(t, string(example), "http://127.0.0.1:8000/{agent}", "the file's upstream is dojoagent's address")
	config := filepath.Join(t.TempDir(), "dojo-agents.yaml")
	require.NoError(t, os.WriteFile(config, []byte(strings.ReplaceAll(string(example), "http://127.0.0.1:8000/", as.URL+"/")), 0o600))

	args := strings.Fields(strings.ReplaceAll(m[1], "examples/dojo-agents.yaml", config))
	p := proctest.Start(t, nil, append(args, "--listen", "127.0.0.1:0")...)
	g, err := agui2aap.New(agui2aap.Config{Upstream: p.URL(), Store: store.NewMemory()})
	require.NoError(t, err)
	gs := httptest.NewServer(g)
	t.Cleanup(gs.Close)

	conv := doctest.Blocks(t, "../../docs/USING.md", "sh", "localhost:8081/agents/shared_state")
	require.Len(t, conv, 1)
	out := doctest.Shell(t, strings.ReplaceAll(conv[0], "localhost:8081", strings.TrimPrefix(gs.URL, "http://")))
	assert.NotContains(t, out, `"error":`, "no step failed")
	assert.NotContains(t, out, "RUN_ERROR")

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, states, 1, "the connect runs no agent")
	assert.Equal(t, map[string]any{"recipe": map[string]any{"title": "My soup",
		"ingredients": []any{map[string]any{"icon": "🥔", "name": "Potatoes", "amount": "12"}}}}, states[0], "the page's state reached the agent")

	recipe := `data: {"type":"STATE_SNAPSHOT","snapshot":` + demo.StarterRecipe + `}`
	assert.Equal(t, 2, strings.Count(out, recipe), "the run and the connect each give the agent's recipe:\n%s", out)
	assert.Contains(t, out, `"content":"Give me all the ingredients"`, "the connect gives the thread's messages")
	assert.Equal(t, 2, strings.Count(out, `"type":"RUN_FINISHED"`))
}
