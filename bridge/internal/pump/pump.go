package pump

import (
	"context"
	"io"

	"github.com/aapagui/aapagui/bridge/internal/ssestream"
	"github.com/aapagui/aapagui/bridge/internal/upstream"
	"github.com/aapagui/aapagui/internal/aside"
	"github.com/aapagui/aapagui/internal/sse"
)

// Taker is a bridge's side of the loop: Take takes one frame of the
// upstream's stream (its SSE event name, "" when it has none, and its
// data, valid until the next read): it decodes, counts, sizes, translates
// and writes it. done reports that the reading is over (the run ended, or
// a follow-up is due); an error is what cut the stream short, and ends
// the reading too. Take runs aside (internal/aside).
type Taker interface {
	Take(ctx context.Context, name string, data []byte) (done bool, err error)
}

// FastTaker is a Taker that takes some frames on the stream's goroutine
// (the stream's usual text delta), without their being decoded aside:
// TakeFast reports whether it took the frame (ok), with Take's done and
// error; a frame it did not take is Take's. The pump finds the ability on
// the Taker, as grpc-gateway finds Delimited on a marshaler.
type FastTaker interface {
	Taker
	TakeFast(ctx context.Context, name string, data []byte) (ok, done bool, err error)
}

// Source is the upstream's stream the pump reads.
type Source struct {
	// Body is the upstream's response body; each frame read touches its
	// idle bound. The caller closes it.
	Body *upstream.IdleBody
	// Out is the client's stream, flushed just before each read of Body
	// (ssestream.FlushBeforeRead: keep-alives while it waits) and after
	// the first frame taken aside; nil: an answer that does not stream.
	Out *ssestream.Stream
	// BeforeRead, when not nil, runs before each read of Body, before Out
	// is flushed (aap2agui saves there what settled).
	BeforeRead func()
	// MaxEventSize bounds one event's bytes (sse.ReadOptions).
	MaxEventSize int
	// SmallBuffer waits on a small read buffer (sse.ReadOptions): for
	// a stream of small frames.
	SmallBuffer bool
}

// Run reads src's frames and hands each to t, until the stream ends
// (nil), t reports done (nil), t fails (its error) or a read does (the
// reader's error, sse's or the idle bound's).
func Run(ctx context.Context, src Source, t Taker) error {
	// A loop of its own over the reader, not a range over sse.Read: the
	// goroutine waits here for as long as the stream is open, and a range
	// keeps the loop's body and the iterator's frames on its stack.
	frames := sse.NewReader(src.reader(), sse.ReadOptions{MaxEventSize: src.MaxEventSize, SmallBuffer: src.SmallBuffer})
	fast, _ := t.(FastTaker)
	for {
		f, err := frames.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		src.Body.Touch()
		if fast != nil {
			ok, done, err := fast.TakeFast(ctx, f.Name, f.Data)
			if err != nil || (ok && done) {
				return err
			}
			if ok {
				continue
			}
		}
		if done, err := takeAside(ctx, t, src.Out, f.Name, f.Data); done || err != nil {
			return err
		}
	}
}

// takeAside is t.Take on a goroutine of its own (internal/aside), the
// first frame's bytes sent at once. (A function of its own: a closure in
// Run would move Run's variables to the heap on every frame.)
func takeAside(ctx context.Context, t Taker, out *ssestream.Stream, name string, data []byte) (done bool, err error) {
	_ = aside.Do(func() error {
		done, err = t.Take(ctx, name, data)
		out.FlushFirst()
		return nil
	})
	return done, err
}

// reader is the body as the pump reads it: BeforeRead, then Out flushed,
// before each read.
func (s Source) reader() io.Reader {
	var r io.Reader = s.Body
	if s.Out != nil {
		r = ssestream.FlushBeforeRead(r, s.Out)
	}
	if s.BeforeRead != nil {
		r = beforeRead{r: r, before: s.BeforeRead}
	}
	return r
}

// beforeRead calls before before each read of r.
type beforeRead struct {
	r      io.Reader
	before func()
}

func (b beforeRead) Read(p []byte) (int, error) {
	b.before()
	return b.r.Read(p)
}
