package agui2aap_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/tools/txtar"

	"github.com/aapagui/aapagui/aap"
)

var update = flag.Bool("update", false, "rewrite the derived sections of testdata/conformance/*.txtar")

// TestConformance runs the HTTP-level cases of testdata/conformance: each
// file is one run through agui2aap, from a client's RunAgentInput to what
// the client gets and what the thread holds, against an AAP server that
// answers the run's turn with the stream the file gives. Its sections:
//
//	input      the POST /agents/demo body (hand-written)
//	upstream   the AAP server's SSE answer to the turn, sent as written (hand-written)
//	create     the POST /sessions the AAP server received (derived)
//	turn       the POST /sessions/{id}/turns it received (derived)
//	response   the response's status, Content-Type and body (derived)
//	thread     what the bridge stored of the thread afterwards (derived)
//
// Derived sections are compared byte for byte and rewritten only with
// -update. Generated ids (128-bit hex) read as <id-N>, numbered by first
// appearance, and timestamps as 0.
func TestConformance(t *testing.T) {
	files, err := filepath.Glob("testdata/conformance/*.txtar")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, path := range files {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			arc, err := txtar.ParseFile(path)
			require.NoError(t, err)
			require.NotEmpty(t, strings.TrimSpace(string(arc.Comment)), "a case opens with what it shows")
			got := runConformance(t, arc)
			if *update {
				var files []txtar.File
				for _, f := range arc.Files {
					if _, derived := got[f.Name]; !derived {
						files = append(files, f)
					}
				}
				for _, name := range conformanceDerived {
					files = append(files, txtar.File{Name: name, Data: []byte(got[name])})
				}
				arc.Files = files
				require.NoError(t, os.WriteFile(path, txtar.Format(arc), 0o644))
				return
			}
			for _, name := range conformanceDerived {
				want, ok := section(arc, name)
				require.True(t, ok, "%s: no section %s (go test -run TestConformance -update)", path, name)
				require.Equal(t, string(want), got[name], "%s: section %s", path, name)
			}
		})
	}
}

var conformanceDerived = []string{"create", "turn", "response", "thread"}

// runConformance plays a case and returns its derived sections.
func runConformance(t *testing.T, arc *txtar.Archive) map[string]string {
	reply, ok := section(arc, "upstream")
	require.True(t, ok, "no upstream section")
	f := newFakeAAP(t, func(w http.ResponseWriter, _ *http.Request, _ int, _ *aap.PostSessionTurnRequest) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(reply)
	})
	e := newBridge(t, f.URL)
	input, ok := section(arc, "input")
	require.True(t, ok, "no input section")
	req, err := http.NewRequestWithContext(testContext(t), http.MethodPost, e.URL+"/agents/demo", bytes.NewReader(input))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)

	var threadID struct {
		ThreadID string `json:"threadId"`
	}
	_ = json.Unmarshal(input, &threadID)
	var thread any = nil
	if th, err := e.Store.GetThread(testContext(t), "", threadID.ThreadID); err == nil {
		thread = map[string]any{"sessionId": th.SessionID, "agent": th.Agent, "delivered": th.Delivered,
			"clientCalls": th.ClientCalls, "interrupts": th.Interrupts, "title": th.Title}
	}
	f.mu.Lock()
	create, turn := marshalIndent(t, f.creates), marshalIndent(t, f.turns)
	f.mu.Unlock()
	n := &idNames{names: map[string]string{}}
	return map[string]string{
		"create":   n.text(create),
		"turn":     n.text(turn),
		"response": n.text(fmt.Sprintf("%d %s\n%s", resp.StatusCode, resp.Header.Get("Content-Type"), body)),
		"thread":   n.text(marshalIndent(t, thread)),
	}
}

func marshalIndent(t *testing.T, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	require.NoError(t, err)
	return string(b) + "\n"
}

func section(arc *txtar.Archive, name string) ([]byte, bool) {
	for _, f := range arc.Files {
		if f.Name == name {
			return f.Data, true
		}
	}
	return nil, false
}

// idNames gives generated values stable names, by first appearance.
type idNames struct {
	names map[string]string
	n     int
}

var (
	hexID          = regexp.MustCompile(`[0-9a-f]{32}`)
	eventTimestamp = regexp.MustCompile(`"timestamp":\d+`)
)

func (n *idNames) text(s string) string {
	s = hexID.ReplaceAllStringFunc(s, func(v string) string {
		if name, ok := n.names[v]; ok {
			return name
		}
		n.n++
		n.names[v] = "<id-" + strconv.Itoa(n.n) + ">"
		return n.names[v]
	})
	return eventTimestamp.ReplaceAllString(s, `"timestamp":0`)
}
