package runlog

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/aapagui/aapagui/store"
)

// Bounds of a recorder.
const (
	// batchSize is the size past which frames are handed to the store
	// without waiting for the stream's next flush.
	batchSize = 64 << 10
	// maxPending is what a run may get ahead of its store: past it, the
	// run waits for the batch being written (the store sets the pace, as
	// it does for the run's history).
	maxPending = 4 << 20
	// linger is how long what a run recorded may wait to be written,
	// gathering more (a follower is at most this much further behind
	// than the run's own client, plus the write), while the process runs
	// few runs (Hub.linger).
	linger = 25 * time.Millisecond
	// maxSpare is the largest batch buffer kept for the next batch: a
	// batch holds maxPending and a frame at most, unless a frame is
	// larger (a whole message, in mode message).
	maxSpare = 2 * maxPending
	// quietBatch is the size under which a batch that leaves nothing
	// pending lets the recorder's buffers go (drain).
	quietBatch = 1 << 10
	// finishWait bounds the wait for the last batch at the run's end.
	finishWait = 10 * time.Second
	// writeTimeout bounds one batch's write.
	writeTimeout = 30 * time.Second
)

// A Recorder records one run's frames. Its methods but Finish are called
// by the goroutine that writes the run's stream; frames are stored by a
// goroutine of its own.
type Recorder struct {
	st     store.RunLogStore
	hub    *Hub
	log    *zerolog.Logger
	id     string
	rl     *store.RunLog // until the log is created (create)
	idLine []byte        // the id line of the next frame: "id: <log>:<next>\n"
	stage  *stage        // the events added since the last Flush; nil when none

	mu       sync.Mutex
	pending  []byte // events not handed to the store yet
	tail     []byte // a copy of pending's last frame, while pending holds it (empty: none)
	spare    []byte // a stored batch's buffer, empty, for the next pending
	count    int    // how many frames pending holds
	first    int64  // the number of pending's first frame
	room     *sync.Cond
	finished bool     // the run ended (Finish)
	phase    logPhase // where the log stands in the store
	writer   writer   // what stores the frames recorded next

	shown   bool          // Shown has waited for created
	done    chan struct{} // made by Finish, closed once the log is over (end)
	created chan struct{} // closed once the log is in the store (or could not be); nil once Shown saw it
}

// A logPhase is where a run's log stands in the store. Only drain moves
// it on, with mu held; drain reads it without.
type logPhase uint8

const (
	creating logPhase = iota // not in the store yet: the first drain creates it
	open                     // in the store, taking batches
	finalled                 // its finished batch is stored
	failed                   // a write failed: the log stops where it was
)

// ended reports whether the log takes no more batches: finalled or
// failed.
func (p logPhase) ended() bool { return p >= finalled }

// A writer is what stores the frames a recorder records next (mu).
type writer uint8

const (
	idle    writer = iota // nothing: a Flush that adds frames arms a timer
	armed                 // a timer runs kick after linger
	writing               // a drain goroutine runs (until end, once the log ended)
)

// over reports whether the log is over: it ended and its drain let go of
// it, the hub too (end); r.mu is held.
func (r *Recorder) over() bool { return r.phase.ended() && r.writer == idle }

// Start begins recording a run (rl: its Owner, Key, RunID, Form and
// Input; the log's ID is given here): it returns at once; the log is
// created in the store by the recorder's goroutine while the run waits for
// its upstream. Finish ends it.
func (h *Hub) Start(st store.RunLogStore, log *zerolog.Logger, rl store.RunLog) *Recorder {
	var b [8]byte
	_, _ = rand.Read(b[:])
	rl.ID, rl.Started = base64.RawURLEncoding.EncodeToString(b[:]), time.Now().UTC()
	r := &Recorder{
		st: st, hub: h, log: log, id: rl.ID, rl: &rl,
		first:   1,
		created: make(chan struct{}), writer: writing,
	}
	r.idLine = append(append([]byte("id: "), r.id...), ":1\n"...)
	h.running(r.id)
	go r.drain()
	return r
}

// ID is the log's id.
func (r *Recorder) ID() string { return r.id }

// AppendID appends the SSE id line of the next event to buf; Add records
// the event and numbers the one after it, once its frame is written (a
// frame that could not be written leaves its number to the next).
func (r *Recorder) AppendID(buf []byte) []byte { return append(buf, r.idLine...) }

// Add records the event whose frame was just written after AppendID's
// line (frame: without that line), kept as what it shares with the frame
// added before it and the rest (see appendEvent); frame must stay as it
// is until the stream's next Flush, which takes the events added.
func (r *Recorder) Add(frame []byte) {
	if r.stage == nil {
		r.stage = stagePool.Get().(*stage)
	}
	s := r.stage
	s.b, s.hint = appendEvent(s.b, s.last, frame, s.hint)
	s.last = frame
	s.n++
	r.advance()
}

// advance moves the number in the id line on by one, in place: its
// decimal digits end right before the line's '\n'.
func (r *Recorder) advance() {
	line := r.idLine
	i := len(line) - 2
	for ; line[i] == '9'; i-- {
		line[i] = '0'
	}
	if line[i] == ':' {
		r.idLine = append(append(line[:i+1:i+1], '1'), line[i+1:]...)
		return
	}
	line[i]++
}

// maxStage is the largest buffer of added events kept for the next ones.
const maxStage = 1 << 20

// Flush takes the events added since the last Flush to be stored: the
// stream calls it as it flushes its client (before it lets go of the
// frames), so that a follower is about as close to the run as its client
// is. What came is written within linger, with what comes meanwhile, or
// at once past batchSize: a burst is a few large writes, not one per
// flush. It waits while the run is maxPending ahead of its store.
func (r *Recorder) Flush() {
	stage, n := r.stage, 0
	r.stage = nil
	if stage != nil {
		n = stage.n
		defer stage.put()
	}
	r.mu.Lock()
	for n > 0 && len(r.pending) >= maxPending && r.phase != failed {
		if r.room == nil {
			r.room = sync.NewCond(&r.mu) // made when first needed: most runs never wait
		}
		r.room.Wait()
	}
	if n > 0 && r.phase != failed {
		if need := len(r.pending) + len(stage.b); need > cap(r.pending) {
			// Twice the room, not append's quarter more: the buffer is
			// used again (drain), and grows to what the run gets ahead of
			// its store in a few steps.
			r.pending = slices.Grow(r.pending, max(need, min(2*cap(r.pending), maxPending+batchSize))-len(r.pending))
		}
		r.appendStage(stage.b, stage.last)
		r.count += n
	}
	full := len(r.pending) >= batchSize
	arm := !full && r.writer == idle && !r.phase.ended() && r.count > 0
	if arm {
		r.writer = armed
	}
	r.mu.Unlock()
	switch {
	case full:
		r.kick()
	case arm:
		// A timer each time, not one kept: an idle run holds none.
		time.AfterFunc(r.hub.linger(), r.kick)
	}
}

// A stage is the events added since a Flush, taken from stagePool by the
// first and given back by Flush: a stream waiting for its upstream holds
// none.
type stage struct {
	b    []byte // the events, kept as appendEvent keeps them
	n    int    // how many
	last []byte // the frame added last
	hint int    // how much it shared with the one before it
}

var stagePool = sync.Pool{New: func() any { return new(stage) }}

func (s *stage) put() {
	if cap(s.b) <= maxStage {
		*s = stage{b: s.b[:0]}
		stagePool.Put(s)
	}
}

// maxTail is the largest frame kept for the next Flush's first event to
// be kept against.
const maxTail = 4 << 10

// appendStage appends the events a Flush took (last: the frame added
// last) to pending, with r.mu held. The first of them shares nothing:
// it is kept again as what it shares with pending's last frame (tail),
// when pending holds some, as if the two Flushes had been one, so that a
// stream that trickles, flushing after every event, is stored in what a
// burst is, not in a whole frame per event. A batch's first event still
// shares nothing (drain empties tail as it takes pending).
func (r *Recorder) appendStage(events, last []byte) {
	if len(r.pending) > 0 && len(r.tail) > 0 {
		var first []byte
		first, events = firstEvent(events)
		r.pending, _ = appendEvent(r.pending, r.tail, first, 0)
	}
	r.pending = append(r.pending, events...)
	if len(last) <= maxTail {
		r.tail = append(r.tail[:0], last...)
	} else {
		r.tail = r.tail[:0]
	}
}

// kick starts a goroutine writing what was recorded, unless one is
// writing already (it takes what came meanwhile in its next batch).
func (r *Recorder) kick() {
	r.mu.Lock()
	if r.writer == armed {
		r.writer = idle
	}
	start := r.writer == idle && !r.phase.ended() && (r.count > 0 || r.finished)
	if start {
		r.writer = writing
	}
	r.mu.Unlock()
	if start {
		go r.drain()
	}
}

// Shown is called before the stream's first bytes reach its client: it
// waits, a bounded time, for the log to be in the store, so that a client
// that has an event of the run can rejoin it (the log is created while
// the run waits for its upstream's first event, so this seldom waits).
func (r *Recorder) Shown() {
	if r.shown {
		return
	}
	r.shown = true
	select {
	case <-r.created:
		r.created = nil // (create closed it: nothing waits on it again)
	case <-time.After(finishWait):
	}
}

// Finish records that the run ended and waits, a bounded time, for its
// last batch to be stored.
func (r *Recorder) Finish() {
	r.Flush()
	r.mu.Lock()
	r.finished = true
	over := r.over()
	if r.done == nil && !over {
		r.done = make(chan struct{})
	}
	done := r.done
	r.mu.Unlock()
	r.kick()
	if over {
		return
	}
	select {
	case <-done:
	case <-time.After(finishWait):
		r.log.Warn().Str("run_log", r.id).Msg("run log: its last batch is not stored yet; the run's followers may stop short of its end")
	}
}

// drain stores what was recorded, batch by batch, until nothing is
// left; the first drain creates the log first. The run's last batch (once
// it finished) ends the log: done is closed, as it is when a write fails.
//
// The buffers of the batches are used again: pending and the batch being
// written swap, so that a long run makes no garbage of its frames (the
// store keeps none of a batch's bytes once it has stored it; a batch whose
// write failed is let go).
func (r *Recorder) drain() {
	if r.phase == creating {
		if err := r.create(); err != nil {
			r.fail(err)
			return
		}
		r.mu.Lock()
		r.phase = open
		r.mu.Unlock()
	}
	var written []byte // the frames of the batch just stored
	for {
		r.mu.Lock()
		if written != nil && cap(written) <= maxSpare {
			r.spare = written[:0]
		}
		b := store.RunLogBatch{First: r.first, Count: r.count, Frames: r.pending}
		finished := r.finished
		if b.Count == 0 && !finished {
			r.writer = idle
			if len(written) < quietBatch {
				// Nothing more for now, and the last batch was small
				// (a run that trickles, or has gone quiet): the buffers
				// go, so that a waiting run holds none. A run that
				// writes large batches keeps them for the next.
				r.pending, r.spare, r.tail = nil, nil, nil
			}
			r.mu.Unlock()
			return
		}
		r.pending, r.spare, r.count, r.first = r.spare, nil, 0, r.first+int64(r.count)
		r.tail = r.tail[:0] // the next batch's first event shares nothing
		r.wake()
		r.mu.Unlock()
		if err := r.write(b, finished); err != nil {
			r.fail(err)
			return
		}
		written = b.Frames
		r.hub.notify(r.id)
		if finished {
			r.mu.Lock()
			r.phase = finalled
			r.mu.Unlock()
			r.end()
			return
		}
	}
}

// create stores the log, empty, as the run begins.
func (r *Recorder) create() error {
	defer close(r.created)
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	rl := r.rl
	r.rl = nil // what only the store needs (the run's input, say) is not held while the run is open
	return r.st.StartRunLog(ctx, rl)
}

// write stores one batch.
func (r *Recorder) write(b store.RunLogBatch, finished bool) error {
	ctx, cancel := context.WithTimeout(store.Progress(context.Background()), writeTimeout)
	defer cancel()
	return r.st.AppendRunLog(ctx, r.id, b, finished)
}

// fail stops the log where it is: the run goes on, unrecorded, and holds
// nothing more for it.
func (r *Recorder) fail(err error) {
	r.log.Error().Err(err).Str("run_log", r.id).Msg("run log: it could not be stored; the run goes on unrecorded from here")
	r.mu.Lock()
	r.phase, r.pending, r.spare, r.tail = failed, nil, nil, nil
	r.wake()
	r.mu.Unlock()
	r.end()
}

// wake wakes a Flush that waits for room; r.mu is held.
func (r *Recorder) wake() {
	if r.room != nil {
		r.room.Broadcast()
	}
}

// end marks the log over, its last batch stored or a write failed, once
// the hub has let go of it: its drain lets go of it last (the writer is
// idle again, and stays so), and wakes Finish. (The channel Finish waits
// on is made only by Finish: a run that is still open holds none.)
func (r *Recorder) end() {
	r.hub.stopped(r.id)
	r.mu.Lock()
	r.writer = idle
	done := r.done
	r.mu.Unlock()
	if done != nil {
		close(done)
	}
}

// ErrBadEventID is ParseEventID's for an id that is not one of a run
// log's events.
var ErrBadEventID = errors.New("not an event id of a run: want <log>:<number>")

// ParseEventID reads an SSE id written by a recorder (a Last-Event-ID).
func ParseEventID(id string) (log string, n int64, err error) {
	i := strings.LastIndexByte(id, ':')
	if i <= 0 {
		return "", 0, ErrBadEventID
	}
	n, err = strconv.ParseInt(id[i+1:], 10, 64)
	if err != nil || n < 0 {
		return "", 0, ErrBadEventID
	}
	return id[:i], n, nil
}
