package aap2agui_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/tools/txtar"

	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/internal/testkit/txtartest"
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
	txtartest.Run(t, "testdata/conformance/*.txtar", []string{"run", "response", "history"}, *updateGolden, runConformance)
}

// runConformance plays a case and returns its derived sections.
func runConformance(t *testing.T, arc *txtar.Archive) map[string]string {
	reply, ok := txtartest.Section(arc, "upstream")
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
	create, ok := txtartest.Section(arc, "session")
	if !ok {
		create = []byte(`{"agent":{"name":"agent"}}`)
	}
	resp := doJSON(t, http.MethodPost, e.URL+"/sessions", create)
	require.Equal(t, http.StatusCreated, resp.StatusCode, resp.Body)
	id := regexp.MustCompile(`"sessionId":"([^"]+)"`).FindStringSubmatch(resp.Body)[1]
	req, ok := txtartest.Section(arc, "request")
	require.True(t, ok, "no request section")
	turn := doJSON(t, http.MethodPost, e.URL+"/sessions/"+id+"/turns", req)
	hist := doJSON(t, http.MethodGet, e.URL+"/sessions/"+id+"/history?type=full", nil)

	var n txtartest.Names
	norm := func(s string) string { return n.Text(strings.ReplaceAll(s, id, "{session}")) }
	mu.Lock()
	defer mu.Unlock()
	return map[string]string{
		"run":      norm(indentJSON(run)),
		"response": norm(fmt.Sprintf("%d %s\n%s", turn.StatusCode, turn.ContentType, turn.Body)),
		"history":  norm(fmt.Sprintf("%d\n%s", hist.StatusCode, indentJSON([]byte(hist.Body)))),
	}
}

type httpResult struct {
	StatusCode  int
	ContentType string
	Body        string
}

func doJSON(t *testing.T, method, url string, body []byte) httpResult {
	t.Helper()
	req, err := http.NewRequestWithContext(bridgetest.Context(t), method, url, bytes.NewReader(body))
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
