package aap2agui_test

import (
	"encoding/json"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/bridge/aap2agui"
	"github.com/aapagui/aapagui/bridge/internal/bridgetest"
	"github.com/aapagui/aapagui/internal/testkit/pgtest"
	"github.com/aapagui/aapagui/store"
)

var (
	benchStartTurns = flag.Int("turnstart.turns", 100, "turns started at once by BenchmarkTurnStart")
	benchStreams    = flag.Int("turnstart.streams", 1000, "streams opened by BenchmarkOpenStreams (10000 for the documented figures)")
	benchThink      = flag.Duration("turnstart.think", 0, "BenchmarkTurnStart's agent answers a run's headers at once and its first event after this long, as a model's time to first token")
)

// startBench is aap2agui with a store in front of the demo agent, and a
// client that keeps a connection per concurrent turn.
type startBench struct {
	url    string
	client *http.Client
}

func newStartBench(b *testing.B, upstream string, st store.Store) *startBench {
	srv, err := aap2agui.New(aap2agui.Config{Upstream: upstream, Store: st})
	if err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	b.Cleanup(hs.Close)
	return &startBench{url: hs.URL, client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 512}}}
}

// sessions creates n sessions, 50 at a time.
func (sb *startBench) sessions(b *testing.B, n int) []string {
	ids := make([]string, n)
	each(b, n, 50, func(i int) error {
		resp, err := sb.client.Post(sb.url+"/sessions", "application/json", strings.NewReader(`{"agent":{"name":"agent"}}`))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var out aap.PostSessionsResponse
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			return err
		}
		ids[i] = out.SessionID
		return nil
	})
	return ids
}

// each runs fn(0..n-1) on at most conc goroutines.
func each(b *testing.B, n, conc int, fn func(i int) error) {
	var wg sync.WaitGroup
	next := make(chan int)
	errs := make(chan error, conc)
	for range conc {
		wg.Go(func() {
			for i := range next {
				if err := fn(i); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
}

const startTurnBody = `{"stream":"delta","messages":[{"role":"user","content":"hello"}]}`

// The first text of an answer, through aap2agui and from the demo agent.
const (
	bridgeMarker = "event: text_delta"
	directMarker = `"type":"TEXT_MESSAGE_CONTENT"`
)

// BenchmarkTurnStart starts -turnstart.turns turns at once, each on its own
// session, and reports the time to the first text (p50 and p99, in ms)
// through aap2agui with each store, and of the same runs read directly
// from the demo agent, all measured in the same iteration.
//
// With -turnstart.think the agent waits that long before its first event,
// as a model does before its first token: the store's writes that overlap
// that wait add nothing to the time to the first text.
func BenchmarkTurnStart(b *testing.B) {
	upstream := demoAgent(b)
	if *benchThink > 0 {
		upstream = lateUpstream(b, func(r *http.Request) bool {
			select {
			case <-time.After(*benchThink):
				return true
			case <-r.Context().Done():
				return false
			}
		})
	}
	n := *benchStartTurns
	direct := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 512}}
	const directBody = `{"threadId":"t","runId":"r","state":{},"messages":[{"id":"m","role":"user","content":"hello"}],"tools":[],"context":[],"forwardedProps":{}}`
	var benches []*startBench
	var names []string
	for _, st := range benchStores() {
		benches = append(benches, newStartBench(b, upstream, st.Open(b)))
		names = append(names, st.Name)
	}
	measure := func(url func(i int) string, client *http.Client, body, marker string) []time.Duration {
		return bridgetest.AtOnce(b, client, n, url, func(int) string { return body }, marker)
	}
	// One round first, not measured: a running server's connection pools
	// are warm (a new PostgreSQL connection costs milliseconds).
	for _, sb := range benches {
		ids := sb.sessions(b, n)
		measure(func(i int) string { return sb.url + "/sessions/" + ids[i] + "/turns" }, sb.client, startTurnBody, bridgeMarker)
	}
	measure(func(int) string { return upstream }, direct, directBody, directMarker)
	results := map[string][]time.Duration{}
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		ids := make([][]string, len(benches))
		for j, sb := range benches {
			ids[j] = sb.sessions(b, n)
		}
		b.StartTimer()
		results["direct"] = append(results["direct"], measure(func(int) string { return upstream }, direct, directBody, directMarker)...)
		for j, sb := range benches {
			results[names[j]] = append(results[names[j]], measure(func(i int) string { return sb.url + "/sessions/" + ids[j][i] + "/turns" }, sb.client, startTurnBody, bridgeMarker)...)
		}
	}
	b.StopTimer()
	for _, name := range append([]string{"direct"}, names...) {
		b.ReportMetric(bridgetest.Percentile(results[name], 0.5), "p50-ms-"+name)
		b.ReportMetric(bridgetest.Percentile(results[name], 0.99), "p99-ms-"+name)
	}
}

// BenchmarkOpenStreams opens -turnstart.streams streams (a short turn on a
// session of its own, read to its end), 100 at a time, through aap2agui
// with each store, and reports the seconds it took for each; "direct"
// opens the same number of runs on the demo agent itself.
func BenchmarkOpenStreams(b *testing.B) {
	upstream := demoAgent(b)
	n := *benchStreams
	direct := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 512}}
	const directBody = `{"threadId":"t","runId":"r","state":{},"messages":[{"id":"m","role":"user","content":"hello"}],"tools":[],"context":[],"forwardedProps":{}}`
	secs := map[string]time.Duration{}
	var order []string
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		start := time.Now()
		b.StartTimer()
		each(b, n, 100, func(int) error {
			_, err := bridgetest.FirstEvent(direct, upstream, directBody, directMarker)
			return err
		})
		secs["direct"] += time.Since(start)
		for _, st := range benchStores() {
			b.StopTimer()
			sb := newStartBench(b, upstream, st.Open(b))
			ids := sb.sessions(b, n)
			b.StartTimer()
			start := time.Now()
			each(b, n, 100, func(i int) error {
				_, err := bridgetest.FirstEvent(sb.client, sb.url+"/sessions/"+ids[i]+"/turns", startTurnBody, bridgeMarker)
				return err
			})
			secs[st.Name] += time.Since(start)
			if !slices.Contains(order, st.Name) {
				order = append(order, st.Name)
			}
		}
	}
	for _, name := range append([]string{"direct"}, order...) {
		b.ReportMetric(secs[name].Seconds()/float64(b.N), "s-"+name)
	}
}

func pgtestDSN() string { return os.Getenv(pgtest.EnvDSN) }

// benchStores are the stores compared: memory, SQLite in a temp file, and
// PostgreSQL when AAPAGUI_TEST_POSTGRES names a database (a schema of its
// own).
func benchStores() []bridgetest.Store {
	stores := bridgetest.Stores()
	if pgtestDSN() == "" {
		stores = slices.DeleteFunc(stores, func(s bridgetest.Store) bool { return s.Name == "postgres" })
	}
	return stores
}
