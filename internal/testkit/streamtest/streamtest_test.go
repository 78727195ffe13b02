package streamtest_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aapagui/aapagui/internal/testkit/streamtest"
)

// The client leaves once the marker has come: the server sees its
// request end while the stream is still open.
func TestLeaveAfter(t *testing.T) {
	left := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = io.WriteString(w, "data: first\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			close(left)
		case <-time.After(10 * time.Second):
		}
	}))
	defer srv.Close()
	streamtest.LeaveAfter(t, t.Context(), srv.URL, `{}`, "first")
	select {
	case <-left:
	case <-time.After(10 * time.Second):
		t.Fatal("the server never saw the client leave")
	}
}
