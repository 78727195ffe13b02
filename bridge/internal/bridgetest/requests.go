package bridgetest

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/internal/testkit/metricstest"
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
