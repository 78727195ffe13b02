package agui2aap_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/agui2aap"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/internal/testkit/pgtest"
)

// BenchmarkRunStart starts 100 runs at once, each on a thread of its own
// (so agui2aap creates the AAP session, then runs the turn), and reports
// the time to the first text (p50 and p99, in ms) through agui2aap with
// the memory, SQLite and (with AAPAGUI_TEST_POSTGRES) PostgreSQL stores,
// and of a turn read directly from the AAP demo agent on a session made
// beforehand, all in the same iteration.
func BenchmarkRunStart(b *testing.B) {
	const n = 100
	agent := httptest.NewServer(demo.NewAAPAgent(demo.AAPAgentOptions{}))
	b.Cleanup(agent.Close)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 512}}
	var names []string
	urls := map[string]string{}
	for _, st := range bridgetest.Stores() {
		if st.Name == "postgres" && os.Getenv(pgtest.EnvDSN) == "" {
			continue
		}
		srv, err := agui2aap.New(agui2aap.Config{Upstream: agent.URL, Store: st.Open(b)})
		if err != nil {
			b.Fatal(err)
		}
		hs := httptest.NewServer(srv)
		b.Cleanup(hs.Close)
		names = append(names, st.Name)
		urls[st.Name] = hs.URL + "/agents/demo"
	}
	measure := func(url, body func(i int) string, marker string) []time.Duration {
		return bridgetest.AtOnce(b, client, n, url, body, marker)
	}
	results := map[string][]time.Duration{}
	ac := aap.NewClient(agent.URL, aap.ClientOptions{HTTPClient: client})
	for it := range b.N {
		b.StopTimer()
		sessions := make([]string, n)
		for i := range sessions {
			created, err := ac.CreateSession(context.Background(), &aap.PostSessionsRequest{Agent: aap.AgentConfig{Name: "demo"}})
			if err != nil {
				b.Fatal(err)
			}
			sessions[i] = created.SessionID
		}
		b.StartTimer()
		results["direct"] = append(results["direct"], measure(
			func(i int) string { return agent.URL + "/sessions/" + sessions[i] + "/turns" },
			func(int) string { return `{"stream":"delta","messages":[{"role":"user","content":"hello"}]}` },
			"event: text_delta")...)
		for _, name := range names {
			results[name] = append(results[name], measure(
				func(int) string { return urls[name] },
				func(i int) string {
					return fmt.Sprintf(`{"threadId":"t%d-%d","runId":"r","state":{},"messages":[{"id":"m","role":"user","content":"hello"}],"tools":[],"context":[],"forwardedProps":{}}`, it, i)
				},
				`"type":"TEXT_MESSAGE_CONTENT"`)...)
		}
	}
	b.StopTimer()
	for _, name := range append([]string{"direct"}, names...) {
		b.ReportMetric(bridgetest.Percentile(results[name], 0.5), "p50-ms-"+name)
		b.ReportMetric(bridgetest.Percentile(results[name], 0.99), "p99-ms-"+name)
	}
}
