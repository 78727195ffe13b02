package bridgetest

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/internal/testkit/metricstest"
	"github.com/aapagui/aapagui/store"
)

// Leave posts the JSON body to url and goes away (cancels the request)
// once arrived says that the bridge waits on what it called; the client
// sees its request cancelled, never an answer.
func Leave(t *testing.T, url, body string, arrived <-chan struct{}) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	done := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	select {
	case <-arrived:
	case <-time.After(Timeout):
		t.Fatal("the bridge never waited")
	}
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
}

// CountedAsLeft waits until the metric of the HTTP requests (named
// metric, at metricsURL) counts n requests with these labels and status
// 499 (client closed request), and checks that it counts no request as a
// server error.
func CountedAsLeft(t *testing.T, metricsURL, metric string, n float64, labels ...string) {
	t.Helper()
	labels = append(labels, "status", "499")
	var statuses []string
	require.Eventually(t, func() bool {
		m := metricstest.Scrape(t, metricsURL, "")
		statuses = m.LabelValues(metric, "status")
		return m.Value(metric, labels...) == n
	}, Timeout, 10*time.Millisecond, "%v requests counted as 499: %v", n, statuses)
	for _, s := range statuses {
		assert.False(t, strings.HasPrefix(s, "5"), "no request counted as a server error: %v", statuses)
	}
}

// RanToItsEnd waits for the upstream call whose client left to say
// whether it was cancelled: it was not, it ran to its end.
func RanToItsEnd(t *testing.T, cancelled <-chan bool) {
	t.Helper()
	select {
	case c := <-cancelled:
		require.False(t, c, "the upstream call was cancelled when the client left")
	case <-time.After(Timeout):
		t.Fatal("the upstream call never ended")
	}
}

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

// Delete sends DELETE url with h and returns the status and the body.
func Delete(t *testing.T, ctx context.Context, url string, h http.Header) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, url, nil)
	require.NoError(t, err)
	req.Header = h
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// ForReplicas runs test on each of ReplicaSetups, as a subtest, with the
// stores of its two processes.
func ForReplicas(t *testing.T, test func(t *testing.T, a, b store.Store)) {
	for _, setup := range ReplicaSetups() {
		t.Run(setup.Name, func(t *testing.T) {
			a, b := setup.Open(t)
			test(t, a, b)
		})
	}
}
