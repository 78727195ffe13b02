// Package streamtest plays the clients of event streams that tests need:
// one that leaves in the middle of an answer.
package streamtest

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// LeaveAfter posts body (JSON) to url, reads the event stream that answers
// until marker has come, then leaves: the request is cancelled and the
// connection closed. It returns once the server has had time to see the
// connection close (a short pause: what the server does then is the test's
// to check, never timed here).
func LeaveAfter(t testing.TB, ctx context.Context, url, body, marker string) {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	buf := make([]byte, 4096)
	for !strings.Contains(got.String(), marker) {
		n, err := resp.Body.Read(buf)
		got.Write(buf[:n])
		if err != nil && err != io.EOF || err == io.EOF && !strings.Contains(got.String(), marker) {
			t.Fatalf("the stream ended before %q (%v): %s", marker, err, got.String())
		}
	}
	cancel()
	resp.Body.Close()
	time.Sleep(50 * time.Millisecond) // the server sees the connection close
}
