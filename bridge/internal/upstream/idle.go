package upstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aapagui/aapagui/bridge/internal/fault"
)

// IdleBody is an upstream call's streamed body (Dial) with an idle
// timer: when no event arrives for d (within a quarter of it: the reader
// of the stream calls Touch for each event it reads) the call's context
// is cancelled, and the read that fails because of it returns
// ErrUpstreamIdle. Bytes alone do not count: an upstream that sends only
// SSE comments, or nothing whole, is idle. Zero or negative d: no idle
// bound. (Cancelling the request, not closing the body, is what unblocks
// a read in progress: net/http's Close waits for the read to return.)
//
// One timer bounds the call: first the wait for its response headers
// (the header timeout), then the stream's idle time.
type IdleBody struct {
	io.ReadCloser
	d      time.Duration
	cancel context.CancelCauseFunc // ends the call's context
	mu     sync.Mutex              // guards timer, phase and quarters
	timer  *time.Timer
	seen   atomic.Bool // an event came since the timer last looked
	fired  atomic.Bool // the idle bound cancelled the call
	phase  phase
	// quarters counts the timer's looks without an event since the last
	// one that found one.
	quarters uint8
}

// phase is what the timer of an IdleBody bounds.
type phase uint8

const (
	connecting phase = iota // the wait for the response headers
	watching                // the stream's idle time
	over                    // nothing: it fired, or the body was closed or has no idle bound
)

// tick is the timer's: past the header bound the call is cancelled with
// ErrHeaderTimeout; while watching, four quarters of d without an event
// cancel it with ErrUpstreamIdle. The cancel is made with mu held, so
// that connected sees a header bound that fired with its cause. (A timer
// reset per event, or a clock read, would cost more than the event: Touch
// only marks that an event came.)
func (b *IdleBody) tick() {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch b.phase {
	case connecting:
		b.phase = over
		b.cancel(ErrHeaderTimeout)
	case watching:
		if b.seen.Swap(false) {
			b.quarters = 0
		} else if b.quarters++; b.quarters >= 4 {
			b.phase = over
			b.fired.Store(true)
			b.cancel(fault.ErrUpstreamIdle)
			return
		}
		b.timer.Reset(b.d / 4)
	}
}

// connected ends the wait for the response headers, the call having
// returned err: the timer goes on as the idle bound, unless the header
// bound fired. It returns the call's outcome: err, or err wrapped with
// ErrHeaderTimeout when the bound fired (also when it fired just as the
// headers arrived, err being nil: the caller then closes the response
// it got).
func (b *IdleBody) connected(ctx context.Context, err error) error {
	b.mu.Lock()
	b.timer.Stop()
	if b.phase == connecting {
		b.phase = over
		if err == nil && b.d > 0 {
			b.phase = watching
			b.timer.Reset(b.d / 4)
		}
	}
	b.mu.Unlock()
	if !errors.Is(context.Cause(ctx), ErrHeaderTimeout) {
		return err
	}
	if err == nil || errors.Is(err, ErrHeaderTimeout) {
		return ErrHeaderTimeout
	}
	return fmt.Errorf("%w: %w", ErrHeaderTimeout, err)
}

// Touch tells the timer that an event arrived.
func (b *IdleBody) Touch() {
	if b.d > 0 && !b.seen.Load() {
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
// context.
func (b *IdleBody) Close() error {
	b.mu.Lock()
	b.timer.Stop()
	b.phase = over
	b.mu.Unlock()
	err := b.ReadCloser.Close()
	b.cancel(nil)
	return err
}
