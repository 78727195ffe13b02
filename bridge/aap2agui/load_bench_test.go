package aap2agui_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/internal/testkit/pgtest"
	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/store/postgres"
)

var (
	loadSessions = flag.Int("load.sessions", 20, "sessions of BenchmarkLoad (1000 for the documented figures)")
	loadTurns    = flag.Int("load.turns", 3, "turns per session of BenchmarkLoad (10 for the documented figures)")
	loadConc     = flag.Int("load.conc", 10, "sessions running at once in BenchmarkLoad (50 for the documented figures)")
)

// BenchmarkLoad runs -load.sessions sessions of -load.turns turns each,
// -load.conc sessions at a time, each turn sent once the previous one has
// ended, through: one aap2agui on the memory store, one on SQLite, and two
// replicas on one PostgreSQL database with turns alternating between them.
// It reports the seconds each took, p50/p99 turn time, and counts of 409s,
// other errors and lost messages (history compared with what was sent),
// which should all be zero.
func BenchmarkLoad(b *testing.B) {
	upstream := demoAgent(b)
	type config struct {
		name     string
		replicas func(b *testing.B) []string
	}
	serve := func(b *testing.B, st store.Store) string {
		srv, err := aap2agui.New(aap2agui.Config{Upstream: upstream, Store: st})
		if err != nil {
			b.Fatal(err)
		}
		hs := httptest.NewServer(srv)
		b.Cleanup(hs.Close)
		return hs.URL
	}
	configs := []config{}
	for _, st := range benchStores() {
		if st.Name == "postgres" { // only with a database: see benchStores
			configs = append(configs, config{"postgres-2-replicas", func(b *testing.B) []string {
				dsn := pgtest.Schema(b)
				var urls []string
				for range 2 {
					s, err := postgres.Open(context.Background(), dsn)
					if err != nil {
						b.Fatal(err)
					}
					b.Cleanup(func() { _ = s.Close() })
					urls = append(urls, serve(b, s))
				}
				return urls
			}})
			continue
		}
		configs = append(configs, config{st.Name, func(b *testing.B) []string { return []string{serve(b, st.Open(b))} }})
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 512}}
	// The baseline: the same runs sent straight to the demo agent.
	b.Run("direct", func(b *testing.B) {
		for range b.N {
			each(b, *loadSessions**loadTurns, *loadConc, func(int) error {
				resp, err := client.Post(upstream, "application/json", strings.NewReader(`{"threadId":"t","runId":"r","state":{},"messages":[{"id":"m","role":"user","content":"hello"}],"tools":[],"context":[],"forwardedProps":{}}`))
				if err != nil {
					return err
				}
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				return err
			})
		}
		b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s")
	})
	for _, cfg := range configs {
		b.Run(cfg.name, func(b *testing.B) {
			var conflicts, failures, lost atomic.Int64
			var durations []time.Duration
			var mu sync.Mutex
			for range b.N {
				b.StopTimer()
				urls := cfg.replicas(b)
				b.StartTimer()
				each(b, *loadSessions, *loadConc, func(s int) error {
					resp, err := client.Post(urls[0]+"/sessions", "application/json", strings.NewReader(`{"agent":{"name":"agent"}}`))
					if err != nil {
						return err
					}
					var created aap.PostSessionsResponse
					err = json.NewDecoder(resp.Body).Decode(&created)
					resp.Body.Close()
					if err != nil {
						return err
					}
					var sent []string
					for k := range *loadTurns {
						url := urls[(s+k)%len(urls)] + "/sessions/" + created.SessionID + "/turns"
						text := fmt.Sprintf("hello %d", k)
						start := time.Now()
						resp, err := client.Post(url, "application/json", strings.NewReader(`{"stream":"delta","messages":[{"role":"user","content":"`+text+`"}]}`))
						if err != nil {
							return err
						}
						body, _ := io.ReadAll(resp.Body)
						resp.Body.Close()
						d := time.Since(start)
						switch {
						case resp.StatusCode == http.StatusConflict:
							conflicts.Add(1)
							continue
						case resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"stopReason":"end_turn"`):
							failures.Add(1)
							continue
						}
						sent = append(sent, text)
						mu.Lock()
						durations = append(durations, d)
						mu.Unlock()
					}
					hist, err := aap.NewClient(urls[len(urls)-1], aap.ClientOptions{HTTPClient: client}).History(context.Background(), created.SessionID, aap.HistoryFull)
					if err != nil {
						return err
					}
					var got []string
					for _, m := range hist {
						if u, ok := m.(*aap.UserMessage); ok {
							got = append(got, u.Content.Text)
						}
					}
					if len(hist) != 2*len(sent) || strings.Join(got, "\n") != strings.Join(sent, "\n") {
						lost.Add(1)
					}
					return nil
				})
			}
			b.StopTimer()
			turns := float64(len(durations))
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s")
			b.ReportMetric(turns/b.Elapsed().Seconds(), "turns/s")
			if len(durations) > 0 {
				b.ReportMetric(bridgetest.Percentile(durations, 0.5), "p50-ms")
				b.ReportMetric(bridgetest.Percentile(durations, 0.99), "p99-ms")
			}
			b.ReportMetric(float64(conflicts.Load()), "409s")
			b.ReportMetric(float64(failures.Load()), "errors")
			b.ReportMetric(float64(lost.Load()), "lost-sessions")
		})
	}
}
