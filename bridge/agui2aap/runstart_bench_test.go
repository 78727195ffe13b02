package agui2aap_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/agui2aap"
	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/internal/testkit/pgtest"
	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/store/postgres"
	"github.com/aapagui/aapagui/store/sqlite"
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
	stores := map[string]func() store.Store{
		"memory": func() store.Store { return store.NewMemory() },
		"sqlite": func() store.Store {
			s, err := sqlite.Open(filepath.Join(b.TempDir(), "bench.db"))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = s.Close() })
			return s
		},
	}
	if os.Getenv(pgtest.EnvDSN) != "" {
		stores["postgres"] = func() store.Store {
			s, err := postgres.Open(context.Background(), pgtest.Schema(b))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = s.Close() })
			return s
		}
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range stores {
			if !yield(k) {
				return
			}
		}
	})
	urls := map[string]string{}
	for _, name := range names {
		srv, err := agui2aap.New(agui2aap.Config{Upstream: agent.URL, Store: stores[name]()})
		if err != nil {
			b.Fatal(err)
		}
		hs := httptest.NewServer(srv)
		b.Cleanup(hs.Close)
		urls[name] = hs.URL + "/agents/demo"
	}
	first := func(url, body, marker string) (time.Duration, error) {
		start := time.Now()
		resp, err := client.Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return 0, fmt.Errorf("HTTP %d", resp.StatusCode)
		}
		r := bufio.NewReader(resp.Body)
		for {
			line, err := r.ReadSlice('\n')
			if err != nil {
				return 0, fmt.Errorf("no %q: %w", marker, err)
			}
			if strings.Contains(string(line), marker) {
				break
			}
		}
		d := time.Since(start)
		_, err = io.Copy(io.Discard, r)
		return d, err
	}
	measure := func(url func(i int) string, body func(i int) string, marker string) []time.Duration {
		ds := make([]time.Duration, n)
		errs := make([]error, n)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				<-start
				ds[i], errs[i] = first(url(i), body(i), marker)
			})
		}
		close(start)
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
		return ds
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
	pct := func(ds []time.Duration, p float64) float64 {
		slices.Sort(ds)
		return float64(ds[int(float64(len(ds)-1)*p)].Microseconds()) / 1000
	}
	for _, name := range append([]string{"direct"}, names...) {
		b.ReportMetric(pct(results[name], 0.5), "p50-ms-"+name)
		b.ReportMetric(pct(results[name], 0.99), "p99-ms-"+name)
	}
}
