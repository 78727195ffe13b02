package aap2agui_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/tools/txtar"
)

// TestConformance runs the HTTP-level cases of testdata/conformance: each
// file is one turn through aap2agui, from a client's request to what the
// client and history get, against an AG-UI agent that answers with the
// stream the file gives. Its sections:
//
//	session     the POST /sessions body (hand-written; {"agent":{"name":"agent"}} when absent)
//	request     the POST /sessions/{session}/turns body (hand-written)
//	upstream    the agent's SSE answer, sent as written (hand-written)
//	run         the RunAgentInput the agent received (derived)
//	response    the response's status, Content-Type and body (derived)
//	history     GET /sessions/{session}/history?type=full afterwards (derived)
//
// Derived sections are compared byte for byte and rewritten only with
// -update. Generated ids (128-bit hex, UUIDs) read as <id-N> and
// <uuid-N>, numbered by first appearance in the file's derived sections,
// and timestamps as 0.
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
			if *updateGolden {
				setSections(arc, got)
				require.NoError(t, os.WriteFile(path, txtar.Format(arc), 0o644))
				return
			}
			for _, name := range []string{"run", "response", "history"} {
				want, ok := section(arc, name)
				require.True(t, ok, "%s: no section %s (go test -run TestConformance -update)", path, name)
				require.Equal(t, string(want), got[name], "%s: section %s", path, name)
			}
		})
	}
}

// runConformance plays a case and returns its derived sections.
func runConformance(t *testing.T, arc *txtar.Archive) map[string]string {
	reply, ok := section(arc, "upstream")
	require.True(t, ok, "no upstream section")
	var mu sync.Mutex
	var run []byte
	upstream := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		run = body
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(reply)
	}))
	e := newEnv(t, upstream)
	create, ok := section(arc, "session")
	if !ok {
		create = []byte(`{"agent":{"name":"agent"}}`)
	}
	resp := doJSON(t, http.MethodPost, e.URL+"/sessions", create)
	require.Equal(t, http.StatusCreated, resp.StatusCode, resp.Body)
	id := regexp.MustCompile(`"sessionId":"([^"]+)"`).FindStringSubmatch(resp.Body)[1]
	req, ok := section(arc, "request")
	require.True(t, ok, "no request section")
	turn := doJSON(t, http.MethodPost, e.URL+"/sessions/"+id+"/turns", req)
	hist := doJSON(t, http.MethodGet, e.URL+"/sessions/"+id+"/history?type=full", nil)

	n := newNormalizer(id)
	mu.Lock()
	defer mu.Unlock()
	return map[string]string{
		"run":      n.text(indentJSON(run)),
		"response": n.text(fmt.Sprintf("%d %s\n%s", turn.StatusCode, turn.ContentType, turn.Body)),
		"history":  n.text(fmt.Sprintf("%d\n%s", hist.StatusCode, indentJSON([]byte(hist.Body)))),
	}
}

type httpResult struct {
	StatusCode  int
	ContentType string
	Body        string
}

func doJSON(t *testing.T, method, url string, body []byte) httpResult {
	t.Helper()
	req, err := http.NewRequestWithContext(testContext(t), method, url, bytes.NewReader(body))
	require.NoError(t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return httpResult{resp.StatusCode, resp.Header.Get("Content-Type"), string(data)}
}

// indentJSON is a JSON document indented, or the bytes as they are when
// they are not JSON; with a final newline.
func indentJSON(data []byte) string {
	var b bytes.Buffer
	if err := json.Indent(&b, bytes.TrimSpace(data), "", "  "); err != nil {
		return strings.TrimRight(string(data), "\n") + "\n"
	}
	return b.String() + "\n"
}

// normalizer gives generated values stable names, by first appearance.
type normalizer struct {
	session string
	names   map[string]string
	ids     int
	uuids   int
}

var (
	hexID     = regexp.MustCompile(`[0-9a-f]{32}`)
	uuidID    = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	timestamp = regexp.MustCompile(`"timestamp":\d+`)
)

func newNormalizer(session string) *normalizer {
	return &normalizer{session: session, names: map[string]string{}}
}

func (n *normalizer) text(s string) string {
	s = strings.ReplaceAll(s, n.session, "{session}")
	s = uuidID.ReplaceAllStringFunc(s, func(v string) string { return n.name(v, "uuid", &n.uuids) })
	s = hexID.ReplaceAllStringFunc(s, func(v string) string { return n.name(v, "id", &n.ids) })
	return timestamp.ReplaceAllString(s, `"timestamp":0`)
}

func (n *normalizer) name(v, kind string, count *int) string {
	if name, ok := n.names[v]; ok {
		return name
	}
	*count++
	name := "<" + kind + "-" + strconv.Itoa(*count) + ">"
	n.names[v] = name
	return name
}

func section(arc *txtar.Archive, name string) ([]byte, bool) {
	for _, f := range arc.Files {
		if f.Name == name {
			return f.Data, true
		}
	}
	return nil, false
}

// setSections writes the derived sections, in their order, after the
// hand-written ones.
func setSections(arc *txtar.Archive, got map[string]string) {
	var files []txtar.File
	for _, f := range arc.Files {
		if _, derived := got[f.Name]; !derived {
			files = append(files, f)
		}
	}
	for _, name := range []string{"run", "response", "history"} {
		files = append(files, txtar.File{Name: name, Data: []byte(got[name])})
	}
	arc.Files = files
}
