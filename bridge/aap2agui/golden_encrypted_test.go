package aap2agui_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/tools/txtar"

	"github.com/aapagui/aapagui/aap"
)

var updateGolden = flag.Bool("update", false, "rewrite the derived sections of testdata/golden/encrypted-*.txtar (turnN.agent.input.json) and of testdata/conformance/*.txtar")

// TestGoldenEncrypted runs each testdata/golden/encrypted-*.txtar through
// aap2agui over real HTTP: a scripted agent answers run N with the file's
// turnN.agui.sse, an AAP client sends turnN.aap.request.json. It checks
// what the translate golden test cannot see, since the values live in
// aap2agui's store: the messages of the RunAgentInput the agent gets for
// each turn (turnN.agent.input.json, with the encrypted values back where
// they were), and that no value reaches the AAP client (streams, both
// histories). The AAP stream is the one the translate golden records.
func TestGoldenEncrypted(t *testing.T) {
	files, err := filepath.Glob("../../testdata/golden/encrypted-*.txtar")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 2)
	for _, path := range files {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			arc, err := txtar.ParseFile(path)
			require.NoError(t, err)
			if runEncryptedGolden(t, arc) {
				require.NoError(t, os.WriteFile(path, txtar.Format(arc), 0o644))
			}
		})
	}
}

var (
	goldenThread   = regexp.MustCompile(`"threadId":"thread-1"`)
	goldenRun      = regexp.MustCompile(`"runId":"run-\d+"`)
	encryptedValue = regexp.MustCompile(`"encryptedValue":"([^"]+)"`)
)

// runEncryptedGolden runs one file; it reports whether -update changed it.
func runEncryptedGolden(t *testing.T, arc *txtar.Archive) bool {
	sections := map[string][]byte{}
	for _, f := range arc.Files {
		sections[f.Name] = f.Data
	}
	var opts struct {
		Mode        aap.StreamMode `json:"mode"`
		ClientTools []string       `json:"clientTools"`
	}
	require.NoError(t, json.Unmarshal(sections["options.json"], &opts))
	require.NotEqual(t, aap.StreamNone, opts.Mode, "the harness streams its turns")

	up := newFakeUpstream(t, func(w http.ResponseWriter, _ *http.Request, in *runInput, n int) {
		body := sections[fmt.Sprintf("turn%d.agui.sse", n+1)]
		body = goldenThread.ReplaceAll(body, []byte(fmt.Sprintf(`"threadId":%q`, in.ThreadID)))
		body = goldenRun.ReplaceAll(body, []byte(fmt.Sprintf(`"runId":%q`, in.RunID)))
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(body)
	})
	e := newEnv(t, up.URL)
	var tools []aap.ToolSpec
	for _, name := range opts.ClientTools {
		tools = append(tools, aap.ToolSpec{Name: name, Parameters: json.RawMessage(`{"type":"object"}`)})
	}
	id := e.createSession(t, aap.PostSessionsRequest{Tools: tools})

	var secrets []string
	var seen bytes.Buffer
	changed := false
	ids := &goldenIDs{known: arc}
	for n := 1; sections[fmt.Sprintf("turn%d.agui.sse", n)] != nil; n++ {
		prefix := fmt.Sprintf("turn%d.", n)
		for _, m := range encryptedValue.FindAllSubmatch(sections[prefix+"agui.sse"], -1) {
			secrets = append(secrets, string(m[1]))
		}
		msgs, err := aap.DecodeTurnMessages(sections[prefix+"aap.request.json"])
		require.NoError(t, err)
		evs, err := e.stream(t, id, aap.PostSessionTurnRequest{Stream: opts.Mode, Messages: msgs})
		require.NoError(t, err, "turn %d", n)
		var got []byte
		for _, ev := range evs {
			got, err = aap.AppendFrame(got, ev)
			require.NoError(t, err)
		}
		seen.Write(got)
		assert.Equal(t, string(sections[prefix+"aap.sse"]), string(got), "turn %d: the AAP stream the translate golden records", n)

		input := ids.normalize(t, up.input(t, n-1).Raw["messages"])
		name := prefix + "agent.input.json"
		if *updateGolden {
			if !bytes.Equal(sections[name], input) {
				setSection(arc, name, input)
				changed = true
			}
			continue
		}
		require.Contains(t, sections, name, "run go test ./bridge/aap2agui -run TestGoldenEncrypted -update")
		assert.Equal(t, string(sections[name]), string(input), "%s: the messages the agent gets", name)
	}
	for _, ht := range []aap.HistoryType{aap.HistoryFull, aap.HistoryCompacted} {
		seen.WriteString(strings.Join(e.history(t, id, ht), "\n"))
	}
	require.NotEmpty(t, secrets)
	for _, s := range secrets {
		assert.NotContains(t, seen.String(), s, "the AAP client sees an encrypted value")
	}
	return changed
}

func setSection(arc *txtar.Archive, name string, data []byte) {
	for i := range arc.Files {
		if arc.Files[i].Name == name {
			arc.Files[i].Data = data
			return
		}
	}
	arc.Files = append(arc.Files, txtar.File{Name: name, Data: data})
}

// goldenIDs writes the ids aap2agui makes up (those no section of the
// file holds) as bridge-1, bridge-2, … in the order first seen.
type goldenIDs struct {
	known *txtar.Archive
	names map[string]string
}

func (g *goldenIDs) normalize(t *testing.T, raw json.RawMessage) []byte {
	t.Helper()
	var msgs []map[string]any
	require.NoError(t, json.Unmarshal(raw, &msgs))
	for _, m := range msgs {
		id, _ := m["id"].(string)
		if id != "" && !g.inFile(id) {
			if g.names == nil {
				g.names = map[string]string{}
			}
			if g.names[id] == "" {
				g.names[id] = fmt.Sprintf("bridge-%d", len(g.names)+1)
			}
			m["id"] = g.names[id]
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	require.NoError(t, enc.Encode(msgs))
	return buf.Bytes()
}

func (g *goldenIDs) inFile(id string) bool {
	q := []byte(fmt.Sprintf("%q", id))
	for _, f := range g.known.Files {
		if strings.HasSuffix(f.Name, ".agui.sse") && bytes.Contains(f.Data, q) {
			return true
		}
	}
	return false
}
