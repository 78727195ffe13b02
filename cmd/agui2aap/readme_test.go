package main

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/internal/testkit/doctest"
	"github.com/aapagui/aapagui/internal/testkit/proctest"
)

// TestREADMECurl runs docs/USING.md's curl examples of agui2aap as they are
// written, against the program (only localhost:8081 becomes the test's
// address): a run, then the same thread got back with an empty run
// ("Restoring conversations"), and checks the AG-UI events each printed;
// the rejoin, and the stop of a thread with no run in flight.
func TestREADMECurl(t *testing.T) {
	t.Parallel()
	blocks := doctest.Blocks(t, "../../docs/USING.md", "sh", "localhost:8081/agents/demo")
	require.Len(t, blocks, 5, "a run, an interrupt answered, a hydration, a rejoin, a stop")
	rejoin, stop := blocks[3], blocks[4]
	blocks = []string{blocks[0], blocks[2]}
	p := proctest.Start(t, nil, "--listen", "127.0.0.1:0", "--store", "memory:")
	out := doctest.Shell(t, strings.ReplaceAll(blocks[0], "localhost:8081", p.Addr))
	for _, typ := range []string{"RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "RUN_FINISHED"} {
		assert.Contains(t, out, `"type":"`+typ+`"`)
	}
	answer := regexp.MustCompile(`"type":"TEXT_MESSAGE_START","messageId":"([^"]+)"`).FindStringSubmatch(out)
	require.NotNil(t, answer, "the answer's message id")

	// The rejoin, with the second id of the run: exactly the rest of it.
	second := regexp.MustCompile(`(?m)^id: ([A-Za-z0-9_-]{11}:2)$`).FindStringSubmatch(out)
	require.NotNil(t, second, "the run's events carry ids: %s", out)
	rest := doctest.Shell(t, strings.ReplaceAll(strings.ReplaceAll(rejoin, "localhost:8081", p.Addr), "P5wKe-EtRFY:2", second[1]))
	_, want, _ := strings.Cut(out, "id: "+second[1]+"\n")
	_, want, _ = strings.Cut(want, "\n\n")
	assert.Equal(t, want, rest, "the events after the second")
	assert.Contains(t, rest, `"type":"RUN_FINISHED"`)

	// The stop, the run over: nothing to stop.
	stopped := doctest.Shell(t, strings.ReplaceAll(stop, "localhost:8081", p.Addr))
	assert.Contains(t, stopped, `"code":"no_run_in_flight"`)

	out = doctest.Shell(t, strings.ReplaceAll(blocks[1], "localhost:8081", p.Addr))
	assert.NotContains(t, out, "TEXT_MESSAGE_START", "a hydration runs no turn")
	snap := regexp.MustCompile(`(?m)^data: (\{"type":"MESSAGES_SNAPSHOT".*\})$`).FindStringSubmatch(out)
	require.NotNil(t, snap, "a MESSAGES_SNAPSHOT: %s", out)
	var ev struct {
		Messages []struct {
			ID      string `json:"id"`
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal([]byte(snap[1]), &ev))
	require.Len(t, ev.Messages, 2)
	assert.Equal(t, "m1", ev.Messages[0].ID)
	assert.Equal(t, "hello there", ev.Messages[0].Content)
	assert.Equal(t, answer[1], ev.Messages[1].ID, "the answer under the id the client saw")
	assert.Equal(t, "assistant", ev.Messages[1].Role)
	assert.Contains(t, out, `"type":"RUN_FINISHED"`)
}

// TestREADMEInterrupt runs docs/USING.md's interrupt answered with curl, as
// written against agui2aap (only localhost:8081 becomes the test's
// address): the search stops with an interrupt, the resume with the
// assistant message holding the call runs it, and the answer follows.
func TestREADMEInterrupt(t *testing.T) {
	t.Parallel()
	blocks := doctest.Blocks(t, "../../docs/USING.md", "sh", `"resume":[{"interruptId":"perm-'$C'"`)
	require.Len(t, blocks, 1)
	p := proctest.Start(t, nil, "--listen", "127.0.0.1:0", "--store", "memory:")
	out := doctest.Shell(t, strings.ReplaceAll(blocks[0], "localhost:8081", p.Addr))
	assert.Contains(t, out, `"outcome":{"type":"interrupt"`, "the first run stops for permission")
	assert.Contains(t, out, `"type":"TOOL_CALL_RESULT"`, "the search ran once approved")
	assert.Contains(t, out, `"outcome":{"type":"success"}`, "the resumed run finishes")
	assert.Contains(t, out, `"delta":"generics."`)
	assert.NotContains(t, out, "RUN_ERROR")
}

// TestREADMECopilotKitSnippets: every class the TypeScript snippets of the
// README's quick start and docs/USING.md construct is imported, from a
// package the CopilotKit example depends on.
func TestREADMECopilotKitSnippets(t *testing.T) {
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	data, err := os.ReadFile("../../examples/copilotkit/package.json")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &pkg))

	var blocks []string
	for _, doc := range []string{"../../README.md", "../../docs/USING.md"} {
		blocks = append(blocks, doctest.Blocks(t, doc, "ts", "new HttpAgent(")...)
	}
	importRE := regexp.MustCompile(`(?m)^import \{([^}]*)\} from "([^"]+)";`)
	newRE := regexp.MustCompile(`\bnew ([A-Z]\w*)\(`)
	for _, b := range blocks {
		imported := map[string]bool{}
		for _, m := range importRE.FindAllStringSubmatch(b, -1) {
			for _, name := range strings.Split(m[1], ",") {
				imported[strings.TrimSpace(name)] = true
			}
			module := m[2]
			parts := strings.SplitN(module, "/", 3)
			if strings.HasPrefix(module, "@") && len(parts) >= 2 {
				module = parts[0] + "/" + parts[1]
			} else {
				module = parts[0]
			}
			assert.Contains(t, pkg.Dependencies, module, "%s is a dependency of examples/copilotkit", m[2])
		}
		for _, m := range newRE.FindAllStringSubmatch(b, -1) {
			assert.True(t, imported[m[1]], "the snippet uses %s without importing it:\n%s", m[1], b)
		}
	}
}
