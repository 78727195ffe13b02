package streamtest

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// Frame is one SSE frame of a stream, as a client reads it: its id, its
// event name and its data (one line, as both bridges write it).
type Frame struct {
	ID, Event, Data string
}

// Stream is an open event stream a test reads frame by frame, the way a
// browser's EventSource does (comments skipped), and may leave at any
// point.
type Stream struct {
	Status int
	Body   string // the body of an answer that is not a stream
	resp   *http.Response
	sc     *bufio.Scanner
	cancel context.CancelFunc
}

// Open sends a request (body: JSON, or "" for none) with the given
// headers and returns its answer. A stream is read with Next; any other
// answer's body is in Body.
func Open(t testing.TB, ctx context.Context, method, url, body string, header http.Header) *Stream {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	s := &Stream{Status: resp.StatusCode, resp: resp, cancel: cancel}
	t.Cleanup(s.Leave)
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		s.Body = string(b)
		s.Leave()
		return s
	}
	s.sc = bufio.NewScanner(resp.Body)
	s.sc.Buffer(make([]byte, 64<<10), 64<<20)
	return s
}

// Next reads the next frame; false at the stream's end.
func (s *Stream) Next() (Frame, bool) {
	if s.sc == nil {
		return Frame{}, false
	}
	var f Frame
	seen := false
	for s.sc.Scan() {
		line := s.sc.Text()
		switch {
		case line == "":
			if seen {
				return f, true
			}
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "id: "):
			f.ID, seen = line[len("id: "):], true
		case strings.HasPrefix(line, "event: "):
			f.Event, seen = line[len("event: "):], true
		case strings.HasPrefix(line, "data: "):
			f.Data, seen = line[len("data: "):], true
		}
	}
	return Frame{}, false
}

// Until reads frames until one whose data holds marker has come n times,
// and returns them all; it fails the test if the stream ends first.
func (s *Stream) Until(t testing.TB, marker string, n int) []Frame {
	t.Helper()
	var got []Frame
	for seen := 0; seen < n; {
		f, ok := s.Next()
		if !ok {
			t.Fatalf("the stream ended after %d frames, before %d of %q", len(got), n, marker)
		}
		got = append(got, f)
		if strings.Contains(f.Data, marker) {
			seen++
		}
	}
	return got
}

// Rest reads the stream to its end.
func (s *Stream) Rest() []Frame {
	var got []Frame
	for f, ok := s.Next(); ok; f, ok = s.Next() {
		got = append(got, f)
	}
	return got
}

// Leave cancels the request and closes the connection.
func (s *Stream) Leave() {
	s.cancel()
	_ = s.resp.Body.Close()
}

// RequireNumbered checks that frames carry the SSE ids of one run's log
// ("<log>:<n>"), numbered on from first, and returns the log's id.
func RequireNumbered(t testing.TB, frames []Frame, first int) (log string) {
	t.Helper()
	if len(frames) == 0 {
		t.Fatal("no frames")
	}
	log, _, _ = strings.Cut(frames[0].ID, ":")
	if log == "" {
		t.Fatalf("no SSE id on the first event: %s", frames[0].Data)
	}
	for i, f := range frames {
		if want := log + ":" + strconv.Itoa(first+i); f.ID != want {
			t.Fatalf("frame %d has id %q, want %q: %s", i, f.ID, want, f.Data)
		}
	}
	return log
}
