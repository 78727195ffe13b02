package bridgetest

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/internal/testkit/metricstest"
)

// NoLabelHolds checks that no label of any metric in m carries one of
// values (the ids and keys of a test's requests).
func NoLabelHolds(t *testing.T, m metricstest.Snapshot, values ...string) {
	t.Helper()
	for name, f := range m {
		for _, s := range f.GetMetric() {
			for _, l := range s.GetLabel() {
				for _, v := range values {
					assert.NotContains(t, l.GetValue(), v, name)
				}
			}
		}
	}
}

// Streaming posts the JSON body to url with the API key and reads the
// answer until n lines hold marker: the turn is running. The client
// leaves when leave is called.
func Streaming(t *testing.T, url, key, body, marker string, n int) (leave func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	for seen := 0; seen < n && sc.Scan(); {
		if strings.Contains(sc.Text(), marker) {
			seen++
		}
	}
	return func() {
		cancel()
		resp.Body.Close()
	}
}

// Settled waits until the metrics at url (scraped with key) show no turn
// in flight (the gauge inFlight) and n turns ended (the histogram
// duration), and returns a scrape taken after that one: a scrape gathers
// its collectors one by one, so the one that saw the end may have missed
// what came just before it.
func Settled(t *testing.T, url, key, inFlight, duration string, n float64) metricstest.Snapshot {
	t.Helper()
	require.Eventually(t, func() bool {
		m := metricstest.Scrape(t, url, key)
		return m.Value(inFlight) == 0 && m.Value(duration) == n
	}, Timeout, 10*time.Millisecond, "the cancelled turn ends")
	return metricstest.Scrape(t, url, key)
}
