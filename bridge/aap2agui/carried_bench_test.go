package aap2agui_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/internal/sse"
	"github.com/aapagui/aapagui/store"
)

// BenchmarkCarriedEvents streams a turn of benchDeltas events of the
// agent's through aap2agui in delta mode: text deltas (the per-event path
// the others are held to), CUSTOM events to a client granted the AG-UI
// extension (carried whole as agui events), and the same CUSTOM events to
// a plain AAP client (counted, not sent). ns/event of the carried run is
// the text delta's plus what its bytes cost.
func BenchmarkCarriedEvents(b *testing.B) {
	frames := func(event string) []byte {
		out := sse.AppendEvent(nil, "", []byte(`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`))
		out = sse.AppendEvent(out, "", []byte(`{"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}`))
		for i := range benchDeltas {
			out = sse.AppendEvent(out, "", fmt.Appendf(nil, event, i))
		}
		out = sse.AppendEvent(out, "", []byte(`{"type":"TEXT_MESSAGE_END","messageId":"m"}`))
		return sse.AppendEvent(out, "", []byte(`{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`))
	}
	for _, c := range []struct {
		name, event string
		carry       bool
	}{
		{"text_delta", `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"w%d "}`, false},
		{"custom/carried", `{"type":"CUSTOM","name":"tick","value":{"n":%d}}`, true},
		{"custom/plain", `{"type":"CUSTOM","name":"tick","value":{"n":%d}}`, false},
	} {
		body := frames(c.event)
		b.Run(c.name, func(b *testing.B) {
			agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = w.Write(body)
			}))
			defer agent.Close()
			srv, err := aap2agui.New(aap2agui.Config{Upstream: agent.URL, Store: store.NewMemory()})
			if err != nil {
				b.Fatal(err)
			}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			h := http.Header{}
			if c.carry {
				h.Set(aap.ExtensionsHeader, aap.ExtensionAGUI)
			}
			cl := aap.NewClient(ts.URL, aap.ClientOptions{Header: h, HTTPClient: benchClient})
			created, err := cl.CreateSession(b.Context(), &aap.PostSessionsRequest{Agent: aap.AgentConfig{Name: "agent"}})
			if err != nil {
				b.Fatal(err)
			}
			turn := `{"stream":"delta","messages":[{"role":"user","content":"go"}]}`
			measure(b, func() string { return ts.URL + "/sessions/" + created.SessionID + "/turns" }, func(url string) {
				req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(turn))
				req.Header = h.Clone()
				req.Header.Set("Content-Type", "application/json")
				resp, err := benchClient.Do(req)
				if err != nil || resp.StatusCode != http.StatusOK {
					b.Fatalf("turn: %v %v", err, resp)
				}
				drain(b, resp)
			})
		})
	}
}
