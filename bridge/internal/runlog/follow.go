package runlog

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/aapagui/aapagui/store"
)

// Hub knows the recorded runs this process is running, so that a
// follower of one of them is woken as soon as a batch is stored; a
// follower of a run of another replica reads the store every Poll. It
// also knows how to stop them (Stoppable, Stop: stop.go).
type Hub struct {
	mu      sync.Mutex
	runs    map[string]chan struct{} // log id → closed when a batch is stored; made when a follower waits (changed)
	stops   map[string]func()        // log id → what stops its run (Stoppable)
	polling bool                     // pollStops is running
	// Poll is how often a follower of another process's run reads the
	// store again; zero means DefaultPoll.
	Poll time.Duration
	// StopPoll is how often a process that runs stoppable runs asks the
	// store which were asked to stop; zero means DefaultStopPoll.
	StopPoll time.Duration
	// Log receives what the hub's poll has to say; nil: nothing.
	Log *zerolog.Logger
}

// DefaultPoll is Hub.Poll's default: what a follower on another replica
// may lag behind the run's own client.
const DefaultPoll = 200 * time.Millisecond

// NewHub returns a hub with no runs.
func NewHub() *Hub { return &Hub{runs: map[string]chan struct{}{}} }

// A run's channel is made only when a follower of it waits, and let go
// once closed: a run nobody follows (most) holds none, and its batches
// make none.

func (h *Hub) running(id string) {
	h.mu.Lock()
	h.runs[id] = nil
	h.mu.Unlock()
}

func (h *Hub) notify(id string) {
	h.mu.Lock()
	if ch := h.runs[id]; ch != nil {
		close(ch)
		h.runs[id] = nil
	}
	h.mu.Unlock()
}

func (h *Hub) stopped(id string) {
	h.mu.Lock()
	if ch, ok := h.runs[id]; ok {
		if ch != nil {
			close(ch)
		}
		delete(h.runs, id)
	}
	h.mu.Unlock()
}

// maxLingerWrites is about how many lingering writes a second the runs of
// a process make in all: with many runs trickling at once, each one's
// linger grows (runs ÷ this) rather than the store's load, as the
// checkpoints of aap2agui's turns share a budget. A run that fills a
// batch writes it at once whatever its linger.
const maxLingerWrites = 500

// linger is how long a run's recorded events may wait to be written: the
// recorder's linger, or longer when the process runs more runs than
// maxLingerWrites a second allow at it.
func (h *Hub) linger() time.Duration {
	h.mu.Lock()
	n := len(h.runs)
	h.mu.Unlock()
	return max(linger, time.Duration(n)*time.Second/maxLingerWrites)
}

// changed is closed when the next batch of log id is stored; nil when
// the run is not this process's (or is over).
func (h *Hub) changed(id string) <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	ch, ok := h.runs[id]
	if ok && ch == nil {
		ch = make(chan struct{})
		h.runs[id] = ch
	}
	return ch
}

func (h *Hub) poll() time.Duration {
	if h.Poll > 0 {
		return h.Poll
	}
	return DefaultPoll
}

// Sink is where a follower writes: the rejoining client's stream.
type Sink interface {
	// Write appends frames to the stream.
	Write(frames []byte)
	// Flush sends what was written; its error ends the follower (the
	// client left or stopped reading).
	Flush() error
	// Waiting tells the stream that the follower waits for the run (it
	// may send keep-alive comments meanwhile), or no longer does.
	Waiting(bool)
}

// ErrStale is Follow's error for a run that made no progress for its
// Idle bound without finishing: its process is gone.
var ErrStale = errors.New("the run made no progress for too long: the process running it is gone")

// Follow streams one run's log to a client.
type Follow struct {
	Store store.RunLogStore
	Hub   *Hub
	// Log is the log to follow (GetRunLog, LatestRunLog): its Owner and
	// ID are read.
	Log *store.RunLog
	// After is the number of the last event the client has (0: none).
	After int64
	// Idle is how long the run may make no progress before the follower
	// gives up (ErrStale): a bound above the run's own idle bound, so
	// that only a run whose process is gone reaches it.
	Idle time.Duration
	// Prologue, when following from the run's start (After 0), is written
	// right after the run's first event: what a client joining from
	// nothing needs beside the run's events (agui2aap: the conversation
	// before them). Its frames carry no id: the ids stay the run's.
	Prologue []byte
	// End, when set, ends the log of a run whose process is gone (see
	// Ending): the follower appends its terminal event, and follows the
	// log to it.
	End *Ending

	rd  batchReader // reads the batches back
	buf []byte      // what is written to the client next
}

// readSize is about what a follower reads of the store at once.
const readSize = 256 << 10

// Run writes the log's frames after f.After to out and follows the run
// live until it finishes (nil), the log is dropped (store.ErrNotFound),
// it goes stale (ErrStale), ctx ends or out fails.
func (f *Follow) Run(ctx context.Context, out Sink) error {
	after, last := f.After, time.Now()
	for {
		changed := f.Hub.changed(f.Log.ID)
		l, err := f.Store.GetRunLog(ctx, f.Log.Owner, f.Log.ID)
		if err != nil {
			return err
		}
		if l.Events > after {
			if after, err = f.copy(ctx, out, after, l.Events); err != nil {
				return err
			}
			last = time.Now()
		}
		if l.Finished {
			return nil
		}
		if f.End != nil && changed == nil { // a run of this process is alive
			ended, err := f.End.check(ctx, f.Store, l, last)
			if ended {
				continue
			}
			if err != nil && ctx.Err() == nil && f.Hub.Log != nil {
				f.Hub.Log.Warn().Err(err).Str("run_log", l.ID).Msg("run log: whether its run is still alive could not be read; asked again later")
			}
		}
		if f.Idle > 0 && time.Since(last) > f.Idle {
			return ErrStale
		}
		if err := f.wait(ctx, out, changed); err != nil {
			return err
		}
	}
}

// copy writes the events after after, up to upTo, and flushes them.
func (f *Follow) copy(ctx context.Context, out Sink, after, upTo int64) (int64, error) {
	for after < upTo {
		batches, err := f.Store.ReadRunLog(ctx, f.Log.ID, after, readSize)
		if err != nil {
			return after, err
		}
		if len(batches) == 0 {
			break
		}
		for _, b := range batches {
			if end := b.First + int64(b.Count) - 1; end > after {
				if err := f.write(out, b, after); err != nil {
					return after, err
				}
				after = end
			}
		}
		if err := out.Flush(); err != nil {
			return after, err
		}
	}
	return after, nil
}

// writeSize is about how much a follower writes to its client at once.
const writeSize = 64 << 10

// write writes the frames of b's events after after, each after its id
// line, and the Prologue right after the run's first event.
func (f *Follow) write(out Sink, b store.RunLogBatch, after int64) error {
	f.rd.batch, f.rd.frame = b.Frames, f.rd.frame[:0]
	buf, n := f.buf[:0], b.First
	for ; ; n++ {
		ok, err := f.rd.next()
		if err != nil {
			return fmt.Errorf("%w (log %s, events from %d)", err, f.Log.ID, b.First)
		}
		if !ok {
			break
		}
		if n <= after {
			continue
		}
		buf = append(appendIDLine(buf, f.Log.ID, n), f.rd.frame...)
		if n == 1 {
			buf = append(buf, f.Prologue...)
		}
		if len(buf) >= writeSize {
			out.Write(buf)
			buf = buf[:0]
		}
	}
	if n != b.First+int64(b.Count) {
		return fmt.Errorf("%w (log %s: %d events from %d, not %d)", errMalformed, f.Log.ID, n-b.First, b.First, b.Count)
	}
	if len(buf) > 0 {
		out.Write(buf)
	}
	if f.buf = buf[:0]; cap(buf) > 4*writeSize {
		f.buf = nil
	}
	return nil
}

// wait waits for the run's next batch: woken by the hub when the run is
// this process's, else after a poll.
func (f *Follow) wait(ctx context.Context, out Sink, changed <-chan struct{}) error {
	out.Waiting(true)
	defer out.Waiting(false)
	t := time.NewTimer(f.Hub.poll())
	defer t.Stop()
	if changed != nil {
		t.Reset(time.Minute) // a bound, should the hub miss a batch
	}
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-changed:
	case <-t.C:
	}
	return nil
}
