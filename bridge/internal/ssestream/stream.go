package ssestream

import (
	"context"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/aapagui/aapagui/bridge/internal/fault"
	"github.com/aapagui/aapagui/bridge/internal/runlog"
	"github.com/aapagui/aapagui/internal/aside"
)

// Stream writes SSE frames to a client, coalescing them: frames are
// appended to a buffer that is written and flushed when the upstream has
// nothing more buffered (see FlushBeforeRead) or the buffer grows large.
// A trickling upstream thus gets per-event latency and a burst gets large
// writes. Stream is not safe for concurrent use.
type Stream struct {
	w      http.ResponseWriter
	rc     *http.ResponseController
	buf    []byte
	pooled *[]byte // the pool's handle of buf, reused to give it back without allocating
	err    error
	// MaxBuffer is the size at which the buffer is written out; zero means
	// 64 KiB.
	MaxBuffer int
	// KeepAlive is how long a started stream may wait for its upstream
	// before a comment line (": keep-alive") is sent, so that proxies and
	// browsers do not cut an idle stream; zero or negative means never.
	// The comment is the only write made on a timer: data is flushed only
	// when the upstream has nothing more buffered.
	KeepAlive time.Duration
	// StallTimeout bounds each write to the client: a write that makes no
	// progress for that long (from three quarters of it: the connection's
	// deadline is moved on only when a quarter has passed, not at every
	// write) fails, and the stream with it: a client that keeps its
	// connection open but stopped reading. Zero or negative means no
	// bound; a stream with one must be closed with Done.
	StallTimeout time.Duration
	// Cancel, when set, is called once when a write fails, with the cause
	// ErrClientStalled (a write past StallTimeout) or ErrClientGone,
	// possibly from the keep-alive timer's goroutine: it ends the
	// handler's context, so that nobody reading any more stops the
	// upstream.
	Cancel context.CancelCauseFunc

	// While the handler waits in an upstream read (idle), only the
	// keep-alive timer writes; mu orders the two.
	mu    sync.Mutex
	timer *time.Timer

	deadline time.Time // the connection's write deadline, when set

	Recorder *runlog.Recorder // the turn's run log, told of each flush

	// (The flags together: a stream is one 160-byte allocation.)
	idle    bool // (mu) the handler waits in an upstream read
	started bool
	sent    bool // something was written: the headers are on the wire
}

// New prepares w for an SSE response.
func New(w http.ResponseWriter) *Stream {
	return &Stream{w: w, rc: http.NewResponseController(w)}
}

// The buffer is taken from a pool when frames are appended and given back
// once it has been written out, so that a stream waiting for its upstream
// holds no buffer: with thousands of open, mostly idle streams this is
// most of what a stream would otherwise keep.
const (
	bufferSize    = 8 << 10
	maxPooledSize = 256 << 10 // larger buffers (a big snapshot) are left to the GC
)

var bufferPool = sync.Pool{New: func() any { b := make([]byte, 0, bufferSize); return &b }}

// Start sends the SSE response headers.
func (s *Stream) Start() {
	if s.started {
		return
	}
	s.started = true
	h := s.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // no proxy buffering (nginx)
	s.w.WriteHeader(http.StatusOK)
}

// Buffer returns the buffer to append frames to; give it back with Commit.
func (s *Stream) Buffer() []byte {
	if s.buf == nil {
		s.pooled = bufferPool.Get().(*[]byte)
		s.buf = (*s.pooled)[:0]
	}
	return s.buf
}

// Commit takes back the buffer after frames were appended, writing it out
// if it is Full.
func (s *Stream) Commit(buf []byte) {
	s.buf = buf
	if s.Full(buf) {
		s.Flush()
	}
}

// Full reports whether Commit(buf) writes buf out at once: it has grown
// past MaxBuffer.
func (s *Stream) Full(buf []byte) bool {
	max := s.MaxBuffer
	if max == 0 {
		max = 64 << 10
	}
	return len(buf) >= max
}

// Flush writes and flushes whatever is buffered.
func (s *Stream) Flush() { s.flush(false) }

// FlushFirst is Flush for a caller that runs aside already, off the
// goroutine that waits on the stream (internal/aside), while the stream
// has sent nothing: its first write, which goes deep, is made there, not
// on yet another goroutine. Once the stream has sent, or on a nil stream
// (an answer that does not stream), it does nothing: the flush before the
// next upstream read sends the rest.
func (s *Stream) FlushFirst() {
	if s != nil && !s.sent {
		s.flush(true)
	}
}

// flush is Flush; here makes the first write on the caller's goroutine.
func (s *Stream) flush(here bool) {
	if s.buf == nil {
		return
	}
	if s.Recorder != nil {
		s.Recorder.Flush()
	}
	if len(s.buf) > 0 && s.err == nil {
		if s.Recorder != nil {
			s.Recorder.Shown()
		}
		s.Start()
		s.write(s.buf, here)
	}
	if s.pooled != nil && cap(s.buf) <= maxPooledSize {
		*s.pooled = s.buf[:0]
		bufferPool.Put(s.pooled)
	}
	s.buf, s.pooled = nil, nil
}

// Done ends the stream's use of the connection: it stops the keep-alive
// timer and takes its write deadline off, so that none is left for the
// next request on the connection (net/http sets none of its own without a
// server WriteTimeout).
func (s *Stream) Done() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.idle = false
	if s.timer != nil {
		s.timer.Stop()
	}
	if !s.deadline.IsZero() {
		_ = s.rc.SetWriteDeadline(time.Time{})
		s.deadline = time.Time{}
	}
}

// Err is the first write error (the client went away), if any.
func (s *Stream) Err() error { return s.err }

// FlushBeforeRead wraps an upstream body so that the stream is flushed
// just before each read of it: the SSE parser reads only when it has
// consumed everything already buffered, which is exactly when the client
// should get what has been produced so far.
func FlushBeforeRead(r io.Reader, s *Stream) io.Reader { return &flushReader{r: r, s: s} }

type flushReader struct {
	r io.Reader
	s *Stream
}

func (f *flushReader) Read(p []byte) (int, error) {
	f.s.Flush()
	if f.s.KeepAlive <= 0 || !f.s.started {
		return f.r.Read(p)
	}
	f.s.Waiting(true)
	n, err := f.r.Read(p)
	f.s.Waiting(false)
	return n, err
}

// keepAliveFrame is an SSE comment: clients ignore it.
var keepAliveFrame = []byte(": keep-alive\n\n")

// Waiting marks the handler as blocked in an upstream read (or back from
// one), arming or stopping the keep-alive timer.
func (s *Stream) Waiting(idle bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.idle = idle
	switch {
	case idle && s.timer == nil:
		s.timer = time.AfterFunc(s.KeepAlive, s.keepAlive)
	case idle:
		s.timer.Reset(s.KeepAlive)
	case s.timer != nil:
		s.timer.Stop()
	}
}

func (s *Stream) keepAlive() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.idle || s.err != nil {
		return
	}
	if s.write(keepAliveFrame, false); s.err != nil {
		return
	}
	s.timer.Reset(s.KeepAlive)
}

// send writes b and flushes it.
func (s *Stream) send(b []byte) error {
	if _, err := s.w.Write(b); err != nil {
		return err
	}
	return s.rc.Flush()
}

// write writes b and flushes it, within StallTimeout; the first failure is
// kept in s.err and its cause told to Cancel. The first write goes aside
// unless here (FlushFirst).
func (s *Stream) write(b []byte, here bool) {
	if s.StallTimeout > 0 {
		// A deadline the connection cannot take (a writer that is not
		// net/http's) leaves the write unbounded, as before.
		if now := time.Now(); s.deadline.Sub(now) < s.StallTimeout*3/4 {
			s.deadline = now.Add(s.StallTimeout)
			_ = s.rc.SetWriteDeadline(s.deadline)
		}
	}
	var err error
	if s.sent || here {
		err = s.send(b)
		s.sent = true
	} else {
		// The first write puts the headers on the wire, net/http's
		// deepest write (and a drain of what the client sent unread):
		// aside, off the goroutine that waits on the stream.
		_ = aside.Do(func() error { err = s.send(b); return nil })
		s.sent = true
	}
	if err != nil {
		s.err = err
		if s.Cancel != nil {
			s.Cancel(fault.WriteFailure(err))
		}
	}
}
