package bridgetest

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// FirstEvent posts body to url and returns the time until the first line
// of the answer holding marker (the first text: the user sees the answer
// begin), then reads the rest.
func FirstEvent(client *http.Client, url, body, marker string) (time.Duration, error) {
	start := time.Now()
	resp, err := client.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(resp.Body)
		return 0, fmt.Errorf("HTTP %d: %s", resp.StatusCode, msg)
	}
	r := bufio.NewReader(resp.Body)
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return 0, fmt.Errorf("no %q in the answer: %w", marker, err)
		}
		if strings.Contains(string(line), marker) {
			break
		}
	}
	ttfe := time.Since(start)
	_, err = io.Copy(io.Discard, r)
	return ttfe, err
}

// AtOnce sends n requests at once, the i-th posting body(i) to url(i),
// and returns the time each took to its first line holding marker (see
// FirstEvent); an error ends the benchmark.
func AtOnce(b *testing.B, client *http.Client, n int, url, body func(i int) string, marker string) []time.Duration {
	ds := make([]time.Duration, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			ds[i], errs[i] = FirstEvent(client, url(i), body(i), marker)
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

// Percentile is the p-th percentile (0 to 1) of ds, in milliseconds; it
// sorts ds.
func Percentile(ds []time.Duration, p float64) float64 {
	slices.Sort(ds)
	return float64(ds[int(float64(len(ds)-1)*p)].Microseconds()) / 1000
}
