package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"iter"
	"math/bits"
	"strconv"
	"sync"
)

// DefaultMaxEventSize is the event size limit [Read] applies when
// [ReadOptions.MaxEventSize] is zero: 16 MiB. 64 KiB (go-sse's default)
// is far too small for AAP session snapshots and AG-UI MESSAGES_SNAPSHOT /
// STATE_SNAPSHOT events, which carry a whole conversation (inline images
// included); 16 MiB still bounds the memory one upstream stream can pin.
const DefaultMaxEventSize = 16 << 20

// ErrIncompleteEvent is yielded by [Read] when the stream ends in the middle
// of an event: bytes other than line breaks follow the last blank line. The
// SSE specification discards such a partial event silently; a proxy wants to
// know that its upstream was cut off, so Read drops the partial event (as the
// specification says) and reports it with this error instead of ending
// cleanly. A trailing comment or unknown field without its blank line counts
// too: the framing cannot tell it apart from a cut event.
var ErrIncompleteEvent = errors.New("sse: stream ended in the middle of an event")

// EventTooLargeError is yielded by [Read] when one event is larger than
// [ReadOptions.MaxEventSize]. Nothing of that event is yielded.
type EventTooLargeError struct {
	// Limit is the MaxEventSize that was in effect, in bytes.
	Limit int
}

// Error implements error.
func (e *EventTooLargeError) Error() string {
	return "sse: event larger than " + strconv.Itoa(e.Limit) + " bytes"
}

// Event is one dispatched SSE event.
type Event struct {
	// Name is the value of the event's last `event:` field, or "" when it
	// had none (the specification's default type, "message").
	Name string
	// Data is the event's `data:` lines joined with "\n" (whatever line
	// breaks the stream used). It is never empty.
	//
	// Data is backed by a buffer that Read reuses: it is valid only until
	// the loop body returns. Copy it (or decode it, which copies) to keep it.
	Data []byte
}

// ReadOptions configures [Read]. The zero value is ready to use.
type ReadOptions struct {
	// MaxEventSize is the largest event accepted, in bytes as it appears on
	// the wire: field names, line breaks and any blank lines before it
	// included. A larger event stops the stream with *EventTooLargeError.
	// Zero or negative means DefaultMaxEventSize.
	MaxEventSize int
	// SmallBuffer makes the reader's own buffer, the one a stream waits
	// on, 128 bytes instead of 256: for a protocol whose per-token frames
	// are small (AAP's text_delta is some 45 bytes and its text; AG-UI's
	// TEXT_MESSAGE_CONTENT over 100). A frame that does not fit is read
	// into a larger buffer from the pool, as a burst is.
	SmallBuffer bool
}

func (o ReadOptions) maxEventSize() int {
	if o.MaxEventSize <= 0 {
		return DefaultMaxEventSize
	}
	return o.MaxEventSize
}

// Read parses the SSE stream r and yields its events in order, each as soon
// as its blank line has been read: Read waits for more input only when what
// it has read holds no complete event.
//
// Iteration ends silently at a clean end of stream (io.EOF at an event
// boundary). Otherwise the last value yielded is an error, exactly once, with
// a zero Event: the error r returned (wrapped), *EventTooLargeError, or
// ErrIncompleteEvent. Breaking out of the loop early is fine; Read never
// closes r.
//
// Read follows the specification's parsing rules (LF, CRLF and CR line
// breaks, a leading byte order mark, comments, fields without a colon, one
// optional space after the colon, multi-line data); the fuzz tests hold it
// to github.com/tmaxmax/go-sse's results. Comments and the `id:` and
// `retry:` fields are ignored. An event without data is not yielded: the
// specification says not to dispatch an event whose data is empty, and
// Read treats an event with no `data:` field (only `event:` or `id:`)
// exactly like one with a single empty `data:` line, skipping both. Neither
// occurs in AAP or AG-UI, whose data is always JSON.
//
// Read does not allocate per event: it reads into one buffer of its own
// (256 bytes, 128 with SmallBuffer) and, while reads fill it, into larger
// ones (doubling up to 64 KiB, or what one line needs) taken from a pool
// the process's streams share and given back once everything read is
// parsed and reads trickle again: an open stream that waits holds its own
// buffer alone. It copies
// data into one reused buffer, and allocates Event.Name once per change of
// name.
func Read(r io.Reader, opts ReadOptions) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		if r == nil {
			yield(Event{}, errors.New("sse: nil reader"))
			return
		}
		p := parser{r: r, limit: opts.maxEventSize(), small: opts.SmallBuffer, lf: search{at: -1}, cr: search{at: -1}}
		for {
			ev, err := p.next()
			if err == io.EOF {
				return
			}
			if err != nil {
				yield(Event{}, err)
				return
			}
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// Reader reads the events of a stream one at a time, as Read yields them,
// for a caller that pulls them in a loop of its own (a range over Read
// holds the loop's body and the iterator's frames on the stack while it
// waits for the stream).
type Reader struct{ p parser }

// NewReader returns a Reader of r's events.
func NewReader(r io.Reader, opts ReadOptions) *Reader {
	return &Reader{p: parser{r: r, limit: opts.maxEventSize(), small: opts.SmallBuffer, lf: search{at: -1}, cr: search{at: -1}}}
}

// Next returns the next event, which is valid until the next call (its
// Data is reused), or io.EOF at a clean end; any other error is Read's,
// after which the stream is over.
func (r *Reader) Next() (Event, error) {
	if r.p.r == nil {
		return Event{}, errors.New("sse: nil reader")
	}
	return r.p.next()
}

const (
	byteOrderMark = "\xEF\xBB\xBF"
	minBuffer     = 128      // the smaller own buffer (ReadOptions.SmallBuffer); the pool's sizes are it doubled
	maxBuffer     = 64 << 10 // what reads grow the buffer to; longer lines grow it further
)

// parser is the state of one Read.
type parser struct {
	r     io.Reader
	limit int

	buf        []byte    // buf[start:end] is read and not yet parsed
	own        []byte    // the parser's own buffer, 256 bytes, or 128 (small)
	burst      *burstBuf // buf, when it is a larger one (use)
	start, end int
	// lf and cr cache where the next LF and CR are: at is its index in
	// buf, or -1 when none is known; from is where the search resumes
	// (nothing before it, from start on, is that byte).
	lf, cr search
	ioErr  error
	empty  int // consecutive reads that returned nothing
	last   int // what the last read returned
	size   int // bytes of the current event so far, blank lines before it included

	data    []byte // data lines, each followed by LF
	nameBuf []byte
	name    string // the last yielded name, reused while it does not change

	// (The flags together: a parser is one 240-byte allocation.)
	bomDone  bool
	skipLF   bool // the last line ended with CR: an LF next completes a CRLF
	eof      bool
	midEvent bool // a non-empty line since the last event boundary
	hasData  bool
	small    bool // ReadOptions.SmallBuffer
}

type search struct{ at, from int }

// index returns the index of the next c in p.buf[p.start:p.end], or -1.
func (s *search) index(p *parser, c byte) int {
	if s.at >= p.start {
		return s.at
	}
	from := max(s.from, p.start)
	if j := bytes.IndexByte(p.buf[from:p.end], c); j >= 0 {
		s.at = from + j
		return s.at
	}
	s.at, s.from = -1, p.end
	return -1
}

// next returns the next event, or io.EOF at a clean end.
func (p *parser) next() (Event, error) {
	for {
		if !p.bomDone {
			if err := p.bom(); err != nil {
				return Event{}, err
			}
			continue
		}
		if p.skipLF && p.start < p.end {
			p.skipLF = false
			if p.buf[p.start] == '\n' {
				p.start++
			}
		}
		lf, cr := p.lf.index(p, '\n'), p.cr.index(p, '\r')
		j := lf
		if j < 0 || (cr >= 0 && cr < j) {
			j = cr
		}
		if j < 0 {
			if err := p.fill(); err != nil {
				return Event{}, err
			}
			continue
		}
		line := p.buf[p.start:j]
		brk := 1
		if p.buf[j] == '\r' {
			if j+1 < p.end {
				if p.buf[j+1] == '\n' {
					brk = 2
				}
			} else {
				p.skipLF = true
			}
		}
		p.start = j + brk
		p.size += len(line) + brk
		if p.size > p.limit {
			return Event{}, &EventTooLargeError{Limit: p.limit}
		}
		if len(line) > 0 {
			p.field(line)
			continue
		}
		// A blank line: the end of an event, if one has begun.
		if !p.midEvent {
			continue
		}
		ev, ok := p.dispatch()
		if ok {
			return ev, nil
		}
	}
}

// field applies one non-empty line.
func (p *parser) field(line []byte) {
	p.midEvent = true
	if line[0] == ':' {
		return // a comment
	}
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) {
	case "data":
		p.data = append(p.data, value...)
		p.data = append(p.data, '\n')
		p.hasData = true
	case "event":
		p.nameBuf = append(p.nameBuf[:0], value...)
	}
}

// dispatch ends the current event and returns it, unless its data is empty.
func (p *parser) dispatch() (Event, bool) {
	data := p.data
	if len(data) > 0 {
		data = data[:len(data)-1]
	}
	if string(p.nameBuf) != p.name {
		p.name = string(p.nameBuf)
	}
	name := p.name
	p.data, p.hasData, p.nameBuf = p.data[:0], false, p.nameBuf[:0]
	p.midEvent, p.size = false, 0
	if len(data) == 0 {
		return Event{}, false
	}
	return Event{Name: name, Data: data}, true
}

// bom drops a byte order mark at the very start of the stream.
func (p *parser) bom() error {
	for p.end-p.start < len(byteOrderMark) {
		if !bytes.HasPrefix([]byte(byteOrderMark), p.buf[p.start:p.end]) {
			break // not a mark: the bytes are part of the first line
		}
		if err := p.fill(); err != nil {
			if err == io.EOF && p.end > p.start {
				return ErrIncompleteEvent // a partial mark, cut off
			}
			return err
		}
	}
	if bytes.HasPrefix(p.buf[p.start:p.end], []byte(byteOrderMark)) {
		p.start += len(byteOrderMark)
	}
	p.bomDone = true
	return nil
}

// fill reads more input. At the end of the stream it returns io.EOF at an
// event boundary and ErrIncompleteEvent elsewhere; the limit is checked
// against the partial line it holds.
func (p *parser) fill() error {
	if p.eof {
		if p.midEvent || p.end > p.start {
			return ErrIncompleteEvent
		}
		return io.EOF
	}
	if p.ioErr != nil {
		return fmt.Errorf("sse: reading stream: %w", p.ioErr)
	}
	pending := p.end - p.start
	if p.bomDone && p.size+pending > p.limit {
		return &EventTooLargeError{Limit: p.limit}
	}
	switch {
	case p.buf == nil:
		n := 2 * minBuffer
		if p.small {
			n = minBuffer
		}
		p.own = make([]byte, n)
		p.buf = p.own
	case pending == len(p.buf):
		// A line longer than the buffer: double it, up to what the limit
		// allows (one byte past it, so that the limit check can fire).
		n := min(2*len(p.buf), p.limit-p.size+1)
		nb := takeBuf(max(n, len(p.buf)+1))
		copy(nb.b, p.buf[p.start:p.end])
		p.use(nb)
		p.shift(p.start)
	case pending == 0 && p.burst != nil && p.last < len(p.buf)/4:
		// Everything read is parsed and reads trickle again: the larger
		// buffer goes back to the pool, and the stream waits on its own.
		// (A stream read as fast as it comes keeps it: its reads are
		// larger.)
		p.use(nil)
		p.shift(p.start)
	case p.start > 0:
		copy(p.buf, p.buf[p.start:p.end])
		p.shift(p.start)
	}
	n, err := p.r.Read(p.buf[p.end:])
	if n < 0 || n > len(p.buf)-p.end {
		p.ioErr = fmt.Errorf("invalid count %d from %T.Read", n, p.r)
		return fmt.Errorf("sse: reading stream: %w", p.ioErr)
	}
	p.end, p.last = p.end+n, n
	if p.end == len(p.buf) && len(p.buf) < maxBuffer && p.start == 0 && n > 0 && pending < n {
		// Reads fill the buffer: a burst. Read bigger pieces next time.
		nb := takeBuf(2 * len(p.buf))
		p.end = copy(nb.b, p.buf[:p.end])
		p.use(nb)
	}
	switch {
	case err == io.EOF: // io.Reader returns io.EOF itself, never wrapped
		p.eof = true
	case err != nil:
		p.ioErr = err
	}
	if n == 0 && err != nil {
		return p.fill()
	}
	if n == 0 {
		// A reader that keeps returning nothing would spin this loop; give
		// up after as many empty reads as bufio does.
		if p.empty++; p.empty >= 100 {
			p.ioErr = io.ErrNoProgress
		}
	} else {
		p.empty = 0
	}
	return nil
}

// burstBuf is a buffer larger than a parser's own: of a size
// that is minBuffer doubled up to maxBuffer, it comes from and goes back to
// burstPools; of another (a line longer than the last), it is let go.
type burstBuf struct{ b []byte }

// burstPools holds the burstBufs of each size minBuffer<<i, i from 1 to
// 9 (maxBuffer).
var burstPools [10]sync.Pool

// poolIndex is the index in burstPools of buffers of n bytes, or 0 when
// none holds them.
func poolIndex(n int) int {
	if n <= minBuffer || n > maxBuffer || n&(n-1) != 0 {
		return 0
	}
	return bits.Len(uint(n/minBuffer)) - 1
}

// takeBuf returns a buffer of n bytes, from its pool when it has one.
func takeBuf(n int) *burstBuf {
	if i := poolIndex(n); i > 0 {
		if b, ok := burstPools[i].Get().(*burstBuf); ok {
			return b
		}
	}
	return &burstBuf{b: make([]byte, n)}
}

// use makes b the parser's buffer (nil: its own), giving the larger one it
// had back to its pool. The caller has copied what it needed of it.
func (p *parser) use(b *burstBuf) {
	if old := p.burst; old != nil {
		if i := poolIndex(len(old.b)); i > 0 {
			burstPools[i].Put(old)
		}
	}
	p.burst = b
	if b == nil {
		p.buf = p.own
		return
	}
	p.buf = b.b
}

// shift moves the buffered bytes back by off after a copy to the front.
func (p *parser) shift(off int) {
	p.start -= off
	p.end -= off
	p.lf.at, p.cr.at = -1, -1
	p.lf.from, p.cr.from = max(p.lf.from-off, 0), max(p.cr.from-off, 0)
}
