package main

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/internal/doctest"
	"github.com/aapagui/aapagui/internal/proctest"
)

// TestREADMECurl runs the README's curl example of agui2aap as it is
// written, against the program (only localhost:8081 becomes the test's
// address), and checks the AG-UI events it printed.
func TestREADMECurl(t *testing.T) {
	t.Parallel()
	blocks := doctest.Blocks(t, "../../README.md", "sh", "localhost:8081/agents/demo")
	require.Len(t, blocks, 1)
	p := proctest.Start(t, nil, "--listen", "127.0.0.1:0", "--store", "memory:")
	out := doctest.Shell(t, strings.ReplaceAll(blocks[0], "localhost:8081", p.Addr))
	for _, typ := range []string{"RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "RUN_FINISHED"} {
		assert.Contains(t, out, `"type":"`+typ+`"`)
	}
}

// TestREADMECopilotKitSnippets: every class the README's TypeScript
// snippets construct is imported, from a package the CopilotKit example
// depends on.
func TestREADMECopilotKitSnippets(t *testing.T) {
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	data, err := os.ReadFile("../../examples/copilotkit/package.json")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &pkg))

	blocks := doctest.Blocks(t, "../../README.md", "ts", "new HttpAgent(")
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
