package aap2agui_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/stretchr/testify/require"
)

// runInput is one RunAgentInput an upstream received: decoded, and as raw
// JSON for the fields whose exact shape matters.
type runInput struct {
	types.RunAgentInput
	Raw    map[string]json.RawMessage
	Header http.Header
}

// messageIDs returns the AG-UI ids of the run's messages.
func (in *runInput) messageIDs() []string {
	ids := make([]string, len(in.Messages))
	for i, m := range in.Messages {
		ids[i] = m.ID
	}
	return ids
}

// fakeUpstream is a scripted AG-UI agent: it records every RunAgentInput
// and answers with what respond writes.
type fakeUpstream struct {
	URL string

	mu     sync.Mutex
	inputs []*runInput
}

// newFakeUpstream starts an AG-UI agent whose answer to each run is
// written by respond (n counts runs from 0).
func newFakeUpstream(t testing.TB, respond func(w http.ResponseWriter, r *http.Request, in *runInput, n int)) *fakeUpstream {
	t.Helper()
	f := &fakeUpstream{}
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		in := &runInput{Header: r.Header.Clone()}
		if err := json.Unmarshal(body, &in.RunAgentInput); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if err := json.Unmarshal(body, &in.Raw); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body)) // for respond to read again
		f.mu.Lock()
		n := len(f.inputs)
		f.inputs = append(f.inputs, in)
		f.mu.Unlock()
		respond(w, r, in, n)
	}))
	t.Cleanup(s.Close)
	f.URL = s.URL
	return f
}

// input returns the n-th (from 0) input received.
func (f *fakeUpstream) input(t *testing.T, n int) *runInput {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	require.Greater(t, len(f.inputs), n, "the upstream got %d runs", len(f.inputs))
	return f.inputs[n]
}

// count returns how many runs the upstream got.
func (f *fakeUpstream) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.inputs)
}

// sseEvents writes AG-UI events (JSON objects) as an SSE stream and
// flushes.
func sseEvents(w http.ResponseWriter, evs ...string) {
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "text/event-stream")
	}
	var b bytes.Buffer
	for _, ev := range evs {
		fmt.Fprintf(&b, "data: %s\n\n", ev)
	}
	_, _ = w.Write(b.Bytes())
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// AG-UI events for scripted upstreams.
func runStarted(in *runInput) string {
	return fmt.Sprintf(`{"type":"RUN_STARTED","threadId":%q,"runId":%q}`, in.ThreadID, in.RunID)
}

func runFinished(in *runInput) string {
	return fmt.Sprintf(`{"type":"RUN_FINISHED","threadId":%q,"runId":%q}`, in.ThreadID, in.RunID)
}

// textMessage is a whole text message: start, one content event per
// delta, end.
func textMessage(id string, deltas ...string) []string {
	out := []string{fmt.Sprintf(`{"type":"TEXT_MESSAGE_START","messageId":%q,"role":"assistant"}`, id)}
	for _, d := range deltas {
		b, _ := json.Marshal(d)
		out = append(out, fmt.Sprintf(`{"type":"TEXT_MESSAGE_CONTENT","messageId":%q,"delta":%s}`, id, b))
	}
	return append(out, fmt.Sprintf(`{"type":"TEXT_MESSAGE_END","messageId":%q}`, id))
}

// toolCallEvents is a whole tool call: start, the arguments in one delta, end.
func toolCallEvents(id, name, parent, args string) []string {
	b, _ := json.Marshal(args)
	return []string{
		fmt.Sprintf(`{"type":"TOOL_CALL_START","toolCallId":%q,"toolCallName":%q,"parentMessageId":%q}`, id, name, parent),
		fmt.Sprintf(`{"type":"TOOL_CALL_ARGS","toolCallId":%q,"delta":%s}`, id, b),
		fmt.Sprintf(`{"type":"TOOL_CALL_END","toolCallId":%q}`, id),
	}
}

// concat joins event lists.
func concat(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// textRun is a complete run saying one text message.
func textRun(in *runInput, id string, deltas ...string) []string {
	return concat([]string{runStarted(in)}, textMessage(id, deltas...), []string{runFinished(in)})
}
