package upstream

import (
	"context"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aapagui/aapagui/bridge/internal/fault"
)

// IdleTimeout returns body with an idle timer: when no event arrives for
// d (within a quarter of it: the reader of the stream calls Touch for each
// event it reads) the request is cancelled through cancel, and the read
// that fails because of it returns ErrUpstreamIdle. Bytes alone do not
// count: an upstream that sends only SSE comments, or nothing whole, is
// idle. Zero or negative d: no timer. (Cancelling the request, not closing
// the body, is what unblocks a read in progress: net/http's Close waits
// for the read to return.)
func IdleTimeout(body io.ReadCloser, d time.Duration, cancel context.CancelCauseFunc) *IdleBody {
	b := &IdleBody{ReadCloser: body, d: d}
	if d <= 0 {
		return b
	}
	b.on = true
	b.mu.Lock()
	defer b.mu.Unlock()
	// A timer reset per event, or a clock read, would cost more than the
	// event: Touch only marks that an event came, and the timer looks
	// every quarter of d; four quarters without one are idle.
	quarters := 0
	b.timer = time.AfterFunc(d/4, func() {
		if b.seen.Swap(false) {
			quarters = 0
		} else if quarters++; quarters >= 4 {
			b.fired.Store(true)
			cancel(fault.ErrUpstreamIdle)
			return
		}
		b.mu.Lock()
		b.timer.Reset(d / 4)
		b.mu.Unlock()
	})
	return b
}

// IdleBody is an upstream body with an idle timer (IdleTimeout).
type IdleBody struct {
	io.ReadCloser
	d     time.Duration
	on    bool        // a timer runs
	seen  atomic.Bool // an event came since the timer last looked
	mu    sync.Mutex  // guards timer
	timer *time.Timer
	fired atomic.Bool
	// release, when set (Dial), ends the call's context once the body is
	// closed.
	release context.CancelCauseFunc
}

// Touch tells the timer that an event arrived.
func (b *IdleBody) Touch() {
	if b.on && !b.seen.Load() {
		b.seen.Store(true)
	}
}

func (b *IdleBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF && b.fired.Load() {
		return n, fault.ErrUpstreamIdle
	}
	return n, err
}

// Close stops the timer and closes the body, then ends the call's
// context when Dial made it.
func (b *IdleBody) Close() error {
	if b.on {
		b.mu.Lock()
		b.timer.Stop()
		b.mu.Unlock()
	}
	err := b.ReadCloser.Close()
	if b.release != nil {
		b.release(nil)
	}
	return err
}
