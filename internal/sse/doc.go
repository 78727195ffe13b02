// Package sse is the project's only code that knows Server-Sent Events bytes.
//
// Both protocols the bridge speaks ride on it: AAP frames carry an event name
// and one line of JSON (`event: turn_start` / `data: {}` / blank line), AG-UI
// frames carry only a `data:` line. Handlers and translators work with [Event]
// values and never see the framing.
//
// Reading is delegated to github.com/tmaxmax/go-sse, which follows the
// WHATWG event-stream grammar (LF, CRLF and CR line ends, `data:` with or
// without a space, a leading byte order mark, comments, multi-line data).
// [Read] is a thin adapter over it that adds what a proxy needs: a large,
// configurable event size limit, a typed error when it is exceeded, a
// detectable truncated stream ([ErrIncompleteEvent]) and a reused data buffer
// so that reading costs no allocation of its own per event.
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
