package runlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/bits"
	"strconv"
)

// How a log's events are kept. A stream's frames repeat themselves: a
// text delta's frame is some 100 bytes of which a few are its text, and
// its id line is the log's id and a number the store already has. So a
// batch holds each event's frame without its id line, as what it shares
// with the frame before it in the batch and what follows:
//
//	uvarint(shared) uvarint(len(rest)) rest
//
// the frame being the first shared bytes of the one before it and then
// rest. The first event of a batch shares nothing. Reading a batch gives
// each frame back after its id line, "id: <log>:<n>\n", byte for byte
// what the run's client was sent: a delta's event is kept in about a
// tenth of its frame, so that recording a run costs little beside sending
// it, in the run's memory, the store's writes and the store's size.

// appendEvent appends frame, the frame after prev in its batch (nil: the
// batch's first), to a batch. hint is how much the frame before shared
// with its own predecessor (what appendEvent returned for it): frames of
// one kind share as much as each other, so that is checked first, in one
// comparison.
func appendEvent(batch, prev, frame []byte, hint int) ([]byte, int) {
	shared := sharedPrefix(prev, frame, hint)
	if rest := len(frame) - shared; shared < 0x80 && rest < 0x80 {
		batch = append(batch, byte(shared), byte(rest)) // uvarints of one byte
	} else {
		batch = binary.AppendUvarint(batch, uint64(shared))
		batch = binary.AppendUvarint(batch, uint64(rest))
	}
	return append(batch, frame[shared:]...), shared
}

// firstEvent splits events whose first shares nothing (a Flush's, or a
// batch) into that event's frame and the events after it.
func firstEvent(events []byte) (frame, rest []byte) {
	_, n1 := binary.Uvarint(events)
	size, n2 := binary.Uvarint(events[n1:])
	frame = events[n1+n2:]
	return frame[:size], frame[size:]
}

// sharedPrefix is commonPrefix(a, b), found from hint on when a and b
// share hint bytes.
func sharedPrefix(a, b []byte, hint int) int {
	if hint <= 0 || hint > len(a) || hint > len(b) || !bytes.Equal(a[:hint], b[:hint]) {
		return commonPrefix(a, b)
	}
	n := min(len(a), len(b))
	for hint < n && a[hint] == b[hint] {
		hint++
	}
	return hint
}

// commonPrefix is the length of the longest prefix a and b share,
// compared eight bytes at a time.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for ; i+8 <= n; i += 8 {
		if x := binary.LittleEndian.Uint64(a[i:]) ^ binary.LittleEndian.Uint64(b[i:]); x != 0 {
			return i + bits.TrailingZeros64(x)/8
		}
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// errMalformed is a batch that was not written by appendEvent: a store
// that lost or changed its bytes.
var errMalformed = errors.New("run log: a stored batch is malformed")

// batchReader reads a batch's events back as frames.
type batchReader struct {
	batch []byte
	frame []byte // the event just read, without its id line
	spare []byte // the buffer of the one before it
}

// next reads the batch's next event into r.frame; false at the batch's
// end, or with errMalformed.
func (r *batchReader) next() (bool, error) {
	if len(r.batch) == 0 {
		return false, nil
	}
	shared, n1 := binary.Uvarint(r.batch)
	if n1 <= 0 || shared > uint64(len(r.frame)) {
		return false, errMalformed
	}
	size, n2 := binary.Uvarint(r.batch[n1:])
	if n2 <= 0 || size > uint64(len(r.batch)-n1-n2) {
		return false, errMalformed
	}
	rest := r.batch[n1+n2 : n1+n2+int(size)]
	r.batch = r.batch[n1+n2+int(size):]
	next := append(append(r.spare[:0], r.frame[:shared]...), rest...)
	r.spare, r.frame = r.frame, next
	return true, nil
}

// appendIDLine appends the id line of event n of log to buf.
func appendIDLine(buf []byte, log string, n int64) []byte {
	buf = append(append(append(buf, "id: "...), log...), ':')
	return append(strconv.AppendInt(buf, n, 10), '\n')
}
