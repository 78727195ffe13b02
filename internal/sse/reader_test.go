package sse_test

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/internal/sse"
)

// event is an sse.Event with its data copied out of Read's reused buffer.
type event struct {
	Name string
	Data string
}

// readAll drains Read and fails the test if anything is yielded after an
// error or if an error comes with a non-zero event.
func readAll(t testing.TB, r io.Reader, opts sse.ReadOptions) ([]event, error) {
	t.Helper()
	var (
		got    []event
		gotErr error
	)
	for ev, err := range sse.Read(r, opts) {
		if gotErr != nil {
			t.Fatalf("yielded (%+v, %v) after error %v", ev, err, gotErr)
		}
		if err != nil {
			if ev.Name != "" || ev.Data != nil {
				t.Fatalf("error %v yielded with event %+v", err, ev)
			}
			gotErr = err
			continue
		}
		got = append(got, event{Name: ev.Name, Data: string(ev.Data)})
	}
	return got, gotErr
}

// readers splits the same input in the ways a network does, so that every
// case also checks line breaks and EOF split across reads.
var readers = []struct {
	name string
	wrap func(string) io.Reader
}{
	{"whole", func(s string) io.Reader { return strings.NewReader(s) }},
	{"one byte", func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) }},
	{"half", func(s string) io.Reader { return iotest.HalfReader(strings.NewReader(s)) }},
	{"eof with data", func(s string) io.Reader { return iotest.DataErrReader(strings.NewReader(s)) }},
}

func TestReadSpec(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  []event
	}{
		{"empty stream", "", nil},
		{"single data line", "data: x\n\n", []event{{"", "x"}}},
		{"no space after colon", "data:x\n\n", []event{{"", "x"}}},
		{"only the first space is removed", "data:  x \n\n", []event{{"", " x "}}},
		{"field without colon", "data\ndata: x\n\n", []event{{"", "\nx"}}},
		{
			"AAP frames",
			"event: turn_start\ndata: {}\n\nevent: text_delta\ndata: {\"delta\":\"hi\"}\n\n",
			[]event{{"turn_start", "{}"}, {"text_delta", `{"delta":"hi"}`}},
		},
		{
			"AG-UI frames",
			"data: {\"type\":\"RUN_STARTED\"}\n\ndata: {\"type\":\"RUN_FINISHED\"}\n\n",
			[]event{{"", `{"type":"RUN_STARTED"}`}, {"", `{"type":"RUN_FINISHED"}`}},
		},
		{"CRLF", "event: a\r\ndata: 1\r\n\r\ndata: 2\r\n\r\n", []event{{"a", "1"}, {"", "2"}}},
		{"CR", "event: a\rdata: 1\r\rdata: 2\r\r", []event{{"a", "1"}, {"", "2"}}},
		{"mixed line breaks", "data: 1\r\ndata: 2\rdata: 3\n\r\n", []event{{"", "1\n2\n3"}}},
		{"multi-line data", "data: a\ndata: b\ndata: c\n\n", []event{{"", "a\nb\nc"}}},
		{"empty data line inside", "data: a\ndata:\ndata: b\n\n", []event{{"", "a\n\nb"}}},
		{"trailing empty data line", "data: a\ndata: \n\n", []event{{"", "a\n"}}},
		{"data colon in value", "data: a: b\n\n", []event{{"", "a: b"}}},
		{"comments are ignored", ": ping\n\ndata: x\n: inside\n\n:\n\n", []event{{"", "x"}}},
		{"id and retry are ignored", "id: 7\nretry: 100\ndata: x\n\n", []event{{"", "x"}}},
		{"unknown fields are ignored", "foo: bar\nDATA: y\ndata: x\n\n", []event{{"", "x"}}},
		{"last event field wins", "event: a\nevent: b\ndata: x\n\n", []event{{"b", "x"}}},
		{"name does not carry over", "event: a\ndata: 1\n\ndata: 2\n\n", []event{{"a", "1"}, {"", "2"}}},
		{"blank lines between events", "\n\r\n\rdata: 1\n\n\n\n\r\ndata: 2\n\n\n", []event{{"", "1"}, {"", "2"}}},
		{"leading BOM", "\xEF\xBB\xBFdata: x\n\n", []event{{"", "x"}}},
		{"BOM only", "\xEF\xBB\xBF", nil},
		{"second BOM is part of the field name", "\xEF\xBB\xBF\xEF\xBB\xBFdata: x\n\n", nil},
		{"bytes pass through", "data: \x00\xff\xfe é\n\n", []event{{"", "\x00\xff\xfe é"}}},
		// The specification does not dispatch an event whose data is empty.
		{"event without data", "event: ping\n\ndata: x\n\n", []event{{"", "x"}}},
		{"id without data", "id: 1\n\ndata: x\n\n", []event{{"", "x"}}},
		// Dispatched with empty data by the specification; skipped by Read,
		// which cannot tell it from the two cases above through go-sse.
		{"single empty data line", "data:\n\ndata: x\n\n", []event{{"", "x"}}},
	}
	for _, tt := range tests {
		for _, rd := range readers {
			t.Run(tt.name+"/"+rd.name, func(t *testing.T) {
				got, err := readAll(t, rd.wrap(tt.input), sse.ReadOptions{})
				require.NoError(t, err)
				assert.Equal(t, tt.want, got)
			})
		}
	}
}

func TestReadIncompleteEvent(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  []event
	}{
		{"unterminated line", "data: x", nil},
		{"line without blank line", "data: x\n", nil},
		{"CR without blank line", "data: x\r", nil},
		{"CRLF without blank line", "data: x\r\n", nil},
		{"name only", "event: a", nil},
		{"after a complete event", "data: a\n\ndata: b\n", []event{{"", "a"}}},
		{"trailing comment", "data: a\n\n: bye", []event{{"", "a"}}},
		{"trailing comment line", "data: a\n\n: bye\n", []event{{"", "a"}}},
		{"partial BOM", "\xEF\xBB", nil},
	}
	for _, tt := range tests {
		for _, rd := range readers {
			t.Run(tt.name+"/"+rd.name, func(t *testing.T) {
				got, err := readAll(t, rd.wrap(tt.input), sse.ReadOptions{})
				require.ErrorIs(t, err, sse.ErrIncompleteEvent)
				assert.Equal(t, tt.want, got)
			})
		}
	}
}

func TestReadCleanEnd(t *testing.T) {
	// Each ends at an event boundary, whichever line break ends the blank line.
	for _, input := range []string{"data: a\n\n", "data: a\r\r", "data: a\r\n\r\n", "data: a\n\r", "data: a\r\n\r", "data: a\n\n\n\r\n"} {
		for _, rd := range readers {
			t.Run(strings.NewReplacer("\r", `\r`, "\n", `\n`).Replace(input)+"/"+rd.name, func(t *testing.T) {
				got, err := readAll(t, rd.wrap(input), sse.ReadOptions{})
				require.NoError(t, err)
				assert.Equal(t, []event{{"", "a"}}, got)
			})
		}
	}
}

func TestReadEventTooLarge(t *testing.T) {
	tests := []struct {
		name  string
		limit int
		input string
		want  []event
		large bool
	}{
		{"at the limit", len("data: 0123\n\n"), "data: 0123\n\n", []event{{"", "0123"}}, false},
		{"one byte over", len("data: 0123\n\n") - 1, "data: 0123\n\n", nil, true},
		{"after smaller events", 16, "data: a\n\ndata: 0123456789abcdef\n\ndata: b\n\n", []event{{"", "a"}}, true},
		{"blank lines before an event count", 9, "data: a\n\n\n\n\n\n\n\ndata: b\n\n", []event{{"", "a"}}, true},
	}
	for _, tt := range tests {
		for _, rd := range readers {
			t.Run(tt.name+"/"+rd.name, func(t *testing.T) {
				got, err := readAll(t, rd.wrap(tt.input), sse.ReadOptions{MaxEventSize: tt.limit})
				assert.Equal(t, tt.want, got)
				if !tt.large {
					require.NoError(t, err)
					return
				}
				var tooLarge *sse.EventTooLargeError
				require.ErrorAs(t, err, &tooLarge)
				assert.Equal(t, tt.limit, tooLarge.Limit)
			})
		}
	}
}

func TestReadDefaultMaxEventSize(t *testing.T) {
	// go-sse's own default is 64 KiB; snapshots are larger.
	big := strings.Repeat("x", 1<<20)
	got, err := readAll(t, strings.NewReader("data: "+big+"\n\n"), sse.ReadOptions{})
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Len(t, got[0].Data, len(big))

	if testing.Short() {
		t.Skip("reads 16 MiB")
	}
	_, err = readAll(t, strings.NewReader("data: "+strings.Repeat("x", sse.DefaultMaxEventSize)+"\n\n"), sse.ReadOptions{MaxEventSize: -1})
	var tooLarge *sse.EventTooLargeError
	require.ErrorAs(t, err, &tooLarge)
	assert.Equal(t, sse.DefaultMaxEventSize, tooLarge.Limit)
}

func TestReadIOError(t *testing.T) {
	errBoom := errors.New("boom")
	tests := []struct {
		name  string
		input string
		want  []event
	}{
		{"at a boundary", "data: a\n\n", []event{{"", "a"}}},
		{"mid line", "data: a\n\ndata: b", []event{{"", "a"}}},
		{"mid event", "data: a\n\ndata: b\n", []event{{"", "a"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := io.MultiReader(strings.NewReader(tt.input), iotest.ErrReader(errBoom))
			got, err := readAll(t, r, sse.ReadOptions{})
			require.ErrorIs(t, err, errBoom)
			assert.NotErrorIs(t, err, sse.ErrIncompleteEvent)
			assert.Equal(t, tt.want, got)
		})
	}
}

// emptyReader returns nothing and no error, forever: an io.Reader that
// breaks the contract.
type emptyReader struct{}

func (emptyReader) Read([]byte) (int, error) { return 0, nil }

func TestReadNoProgress(t *testing.T) {
	got, err := readAll(t, io.MultiReader(strings.NewReader("data: a\n\n"), emptyReader{}), sse.ReadOptions{})
	require.ErrorIs(t, err, io.ErrNoProgress)
	assert.Equal(t, []event{{"", "a"}}, got)
}

func TestReadNilReader(t *testing.T) {
	got, err := readAll(t, nil, sse.ReadOptions{})
	require.Error(t, err)
	assert.Empty(t, got)
}

func TestReadStopEarly(t *testing.T) {
	r := strings.NewReader("data: 1\n\ndata: 2\n\ndata: 3\n\n")
	var got []string
	for ev, err := range sse.Read(r, sse.ReadOptions{}) {
		require.NoError(t, err)
		got = append(got, string(ev.Data))
		if len(got) == 2 {
			break
		}
	}
	assert.Equal(t, []string{"1", "2"}, got)
}

// TestReadYieldsCompleteEventsWithoutWaiting feeds a stream through a pipe
// one write at a time and writes the next piece only after the previous
// event came out: Read must hand over each event as soon as its blank line
// has arrived, even when that blank line comes in a write of its own.
func TestReadYieldsCompleteEventsWithoutWaiting(t *testing.T) {
	pieces := [][]string{
		{"data: 1\n\n"},
		{"data: 2\n", "\n"},
		{"event: a\r", "data: 3\r", "\r"},
		{"data: 4\r\n", "\r\n"},
		{": comment\n\n", "data: 5\n", "\r\n"},
	}
	pr, pw := io.Pipe()
	next := make(chan struct{})
	go func() {
		for _, event := range pieces {
			for _, p := range event {
				if _, err := pw.Write([]byte(p)); err != nil {
					return
				}
			}
			<-next
		}
		pw.Close()
	}()

	results := make(chan event)
	go func() {
		defer close(results)
		for ev, err := range sse.Read(pr, sse.ReadOptions{}) {
			if err != nil {
				results <- event{Name: "error", Data: err.Error()}
				return
			}
			results <- event{Name: ev.Name, Data: string(ev.Data)}
		}
	}()

	want := []event{{"", "1"}, {"", "2"}, {"a", "3"}, {"", "4"}, {"", "5"}}
	for _, w := range want {
		select {
		case got := <-results:
			require.Equal(t, w, got)
		case <-time.After(5 * time.Second):
			t.Fatalf("event %q not yielded while the stream waits for it to be read", w.Data)
		}
		next <- struct{}{}
	}
	_, open := <-results
	assert.False(t, open, "clean end after the last event")
}
