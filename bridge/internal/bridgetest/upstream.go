package bridgetest

import (
	"io"
	"net/http"
	"time"
)

// Trickle writes more(0), more(1), … to w, one every interval, each
// flushed, until the request r is cancelled (or a write fails): an
// upstream that never ends its answer.
func Trickle(w http.ResponseWriter, r *http.Request, interval time.Duration, more func(n int) string) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for n := 0; ; n++ {
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
		}
		if _, err := io.WriteString(w, more(n)); err != nil {
			return
		}
		_ = http.NewResponseController(w).Flush()
	}
}
