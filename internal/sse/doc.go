// Package sse is the project's only code that knows Server-Sent Events bytes.
//
// Both protocols the bridge speaks ride on it: AAP frames carry an event name
// and one line of JSON (`event: turn_start` / `data: {}` / blank line), AG-UI
// frames carry only a `data:` line. Handlers and translators work with [Event]
// values and never see the framing.
//
// Reading is [Read], a small parser of the WHATWG event-stream grammar (LF,
// CRLF and CR line ends, `data:` with or without a space, a leading byte
// order mark, comments, fields without a colon, multi-line data) that adds
// what a proxy needs: a large, configurable event size limit, a typed error
// when it is exceeded, a detectable truncated stream ([ErrIncompleteEvent]),
// and no allocation per event. It replaced an adapter over
// github.com/tmaxmax/go-sse, which stays as the reference: the fuzz tests
// require identical events from both. go-sse copies every event into a new
// string and scans it with a bufio.Scanner whose split function rescans the
// buffered event after each read (quadratic for large events split over
// many reads); neither can be configured away, and the adapter needed its
// own pass over the framing anyway to tell a cut stream from a clean end.
// The parser is half the time per event of go-sse alone.
//
// Writing is [AppendEvent], a pure append function: the caller owns the
// buffer, batches frames as it likes and decides when to flush.
//
//	for ev, err := range sse.Read(resp.Body, sse.ReadOptions{}) {
//		if err != nil {
//			return err // io errors, *sse.EventTooLargeError, sse.ErrIncompleteEvent
//		}
//		buf = sse.AppendEvent(buf[:0], ev.Name, ev.Data) // ev.Data is reused: use it now
//	}
package sse
