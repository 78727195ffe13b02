package agui2aap_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/tools/txtar"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/internal/testkit/txtartest"
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
	txtartest.Run(t, "testdata/conformance/*.txtar", conformanceDerived, *update, runConformance)
}

var conformanceDerived = []string{"create", "turn", "response", "thread"}

// runConformance plays a case and returns its derived sections.
func runConformance(t *testing.T, arc *txtar.Archive) map[string]string {
	reply, ok := txtartest.Section(arc, "upstream")
	require.True(t, ok, "no upstream section")
	f := newFakeAAP(t, func(w http.ResponseWriter, _ *http.Request, _ int, _ *aap.PostSessionTurnRequest) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(reply)
	})
	e := newBridge(t, f.URL)
	input, ok := txtartest.Section(arc, "input")
	require.True(t, ok, "no input section")
	req, err := http.NewRequestWithContext(bridgetest.Context(t), http.MethodPost, e.URL+"/agents/demo", bytes.NewReader(input))
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
	if th, err := e.Store.GetThread(bridgetest.Context(t), "", threadID.ThreadID); err == nil {
		thread = map[string]any{"sessionId": th.SessionID, "agent": th.Agent, "delivered": th.Delivered,
			"clientCalls": th.ClientCalls, "interrupts": th.Interrupts, "title": th.Title}
	}
	f.mu.Lock()
	create, turn := marshalIndent(t, f.creates), marshalIndent(t, f.turns)
	f.mu.Unlock()
	var n txtartest.Names
	return map[string]string{
		"create":   n.Text(create),
		"turn":     n.Text(turn),
		"response": n.Text(fmt.Sprintf("%d %s\n%s", resp.StatusCode, resp.Header.Get("Content-Type"), body)),
		"thread":   n.Text(marshalIndent(t, thread)),
	}
}

func marshalIndent(t *testing.T, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	require.NoError(t, err)
	return string(b) + "\n"
}
