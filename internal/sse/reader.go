package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"iter"
	"strconv"
	"strings"

	gosse "github.com/tmaxmax/go-sse"
)

// DefaultMaxEventSize is the event size limit [Read] applies when
// [ReadOptions.MaxEventSize] is zero: 16 MiB. go-sse's own default (64 KiB)
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
// Comments and the `id:` and `retry:` fields are ignored. An event without
// data is not yielded: the specification says not to dispatch an event
// whose data is empty, and go-sse reports an event with no `data:` field
// (only `event:` or `id:`) exactly like one with a single empty `data:`
// line, so Read skips both. Neither occurs in AAP or AG-UI, whose data is
// always JSON.
//
// Per event Read allocates only what go-sse does (the event's text and its
// joined data); Event.Data is copied into one reused buffer and Event.Name
// is copied once per change of name, so that neither pins go-sse's buffers.
func Read(r io.Reader, opts ReadOptions) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		if r == nil {
			yield(Event{}, errors.New("sse: nil reader"))
			return
		}
		limit := opts.maxEventSize()
		tr := &tailReader{r: r}
		var (
			data []byte
			name string
		)
		for ev, err := range gosse.Read(tr, &gosse.ReadConfig{MaxEventSize: limit}) {
			if err != nil {
				yield(Event{}, readError(err, tr, limit))
				return
			}
			if ev.Data == "" {
				continue
			}
			// ev.Type is a substring of go-sse's copy of the whole event;
			// keeping it would pin that copy for as long as a caller keeps
			// the name. Names rarely change from one event to the next.
			if ev.Type != name {
				name = strings.Clone(ev.Type)
			}
			data = append(data[:0], ev.Data...)
			if !yield(Event{Name: name, Data: data}, nil) {
				return
			}
		}
		// go-sse reports every error tailReader returns, but do not rely on
		// it to end cleanly after a cut stream.
		if tr.err != nil {
			yield(Event{}, readError(nil, tr, limit))
		}
	}
}

// readError turns the error that ended go-sse's iteration into the one Read
// yields. What tailReader saw comes first: after an I/O error or a cut stream
// go-sse may instead report its own "unexpected end of input" for the
// unterminated last line.
func readError(err error, tr *tailReader, limit int) error {
	switch {
	case errors.Is(tr.err, ErrIncompleteEvent):
		return ErrIncompleteEvent
	case tr.err != nil:
		return fmt.Errorf("sse: reading stream: %w", tr.err)
	case errors.Is(err, bufio.ErrTooLong):
		// go-sse scans with a bufio.Scanner whose maximum token is one event.
		return &EventTooLargeError{Limit: limit}
	default:
		return fmt.Errorf("sse: %w", err)
	}
}

// tailReader sits between the stream and go-sse and follows the event
// framing — line breaks (LF, CRLF, CR) and blank lines, never fields — for
// two reasons.
//
// At the end of the stream it replaces io.EOF with ErrIncompleteEvent when
// the bytes read do not end at an event boundary: go-sse would otherwise
// dispatch a final event whose blank line never came, and a non-EOF error
// makes it drop that event, as the specification wants.
//
// And it keeps go-sse linear. go-sse scans with a bufio.Scanner whose split
// function rescans the whole buffered event after every Read, so an event
// delivered in k reads costs O(k × size): a 1 MiB snapshot arriving in 16 KiB
// TLS records took 0.8 s, 15 MiB took 30 s. The scanner only calls Read when
// it holds no complete event, so until a blank line arrives it has nothing
// to dispatch anyway: Read keeps filling the scanner's buffer until it has
// read the end of an event, the buffer is full or the stream fails. Events
// are still handed over as soon as they are complete.
type tailReader struct {
	r     io.Reader
	state tailState
	// bom is how many bytes of a leading UTF-8 byte order mark have been
	// read; bomDone once the start of the stream is behind.
	bom int
	// err is the error handed to go-sse, other than io.EOF.
	err error
}

const (
	byteOrderMark = "\xEF\xBB\xBF"
	bomDone       = -1
)

// tailState is where the stream is relative to the event framing.
type tailState uint8

const (
	atBoundary   tailState = iota // at the start, or just after a blank line
	atBoundaryCR                  // just after a blank line ended by CR: an LF would complete it
	inLine                        // inside a non-empty line
	afterLF                       // a non-empty line just ended with LF (or CRLF)
	afterCR                       // a non-empty line just ended with CR: an LF would complete it
)

// next is the state after the line break c ('\n' or '\r'); any other byte
// leads to inLine.
func (s tailState) next(c byte) tailState {
	if c == '\n' {
		switch s {
		case inLine, afterCR:
			return afterLF
		default: // a blank line, or the LF of a CRLF that ended one
			return atBoundary
		}
	}
	if s == inLine {
		return afterCR
	}
	return atBoundaryCR // a blank line
}

func (s tailState) midEvent() bool {
	return s == inLine || s == afterLF || s == afterCR
}

func (t *tailReader) Read(p []byte) (int, error) {
	if t.err != nil {
		return 0, t.err
	}
	n := 0
	for {
		m, err := t.r.Read(p[n:])
		if m < 0 || m > len(p)-n {
			t.err = fmt.Errorf("invalid count %d from %T.Read", m, t.r)
			return n, t.err
		}
		complete := t.observe(p[n : n+m])
		n += m
		switch {
		case err == io.EOF: // io.Reader returns io.EOF itself, never wrapped
			if t.state.midEvent() || (t.bom > 0 && t.bom < len(byteOrderMark)) {
				t.err = ErrIncompleteEvent
				return n, t.err
			}
			return n, io.EOF
		case err != nil:
			t.err = err
			return n, err
		case complete || m == 0 || n == len(p):
			return n, nil
		}
	}
}

// observe advances the state over b, the next bytes of the stream, and
// reports whether they end an event: a blank line after a non-empty line.
func (t *tailReader) observe(b []byte) bool {
	// A byte order mark is ignored only at the very start of the stream.
	for t.bom != bomDone && len(b) > 0 {
		if t.bom == len(byteOrderMark) {
			t.bom = bomDone
			break
		}
		if b[0] != byteOrderMark[t.bom] {
			if t.bom > 0 {
				t.state = inLine // a partial mark is just bytes of a line
			}
			t.bom = bomDone
			break
		}
		t.bom++
		b = b[1:]
	}
	// Jump from line break to line break. lf and cr are the next LF and CR
	// at or after i (len(b) when there is none), each searched again only
	// once i has passed it, so that the whole scan is linear.
	lf, cr := -1, -1
	for i := 0; i < len(b); {
		if lf < i {
			lf = indexFrom(b, i, '\n')
		}
		if cr < i {
			cr = indexFrom(b, i, '\r')
		}
		j := min(lf, cr)
		if j == len(b) {
			t.state = inLine
			return false
		}
		if j > i {
			t.state = inLine
		}
		prev := t.state
		t.state = prev.next(b[j])
		i = j + 1
		if (prev == afterLF || prev == afterCR) && !t.state.midEvent() {
			t.skip(b[i:])
			return true
		}
	}
	return false
}

// skip advances the state over b without looking for the end of an event.
// Any byte other than a line break puts the stream inside a line whatever
// came before, so only the line breaks after the last such byte matter.
func (t *tailReader) skip(b []byte) {
	i := len(b) - 1
	for i >= 0 && (b[i] == '\n' || b[i] == '\r') {
		i--
	}
	if i >= 0 {
		t.state = inLine
	}
	for _, c := range b[i+1:] {
		t.state = t.state.next(c)
	}
}

// indexFrom returns the index of the first c in b at or after from, or len(b).
func indexFrom(b []byte, from int, c byte) int {
	if j := bytes.IndexByte(b[from:], c); j >= 0 {
		return from + j
	}
	return len(b)
}
