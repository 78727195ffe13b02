package sse_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/internal/sse"
)

// FuzzRead checks, for any input and size limit, that Read never yields an
// event after an error, never yields empty data or data larger than the
// limit, never leaves a line break in a name or a CR in data, and only fails
// with its documented errors. With the default limit it also checks that the
// result does not depend on how the input is split into reads, and that a
// clean end really is an event boundary: a further event appended to the
// input is read back after the same events. And that Read never waits for
// more input while it holds a complete event.
func FuzzRead(f *testing.F) {
	for _, seed := range []string{
		"",
		"data: x\n\n",
		"event: text_delta\ndata: {\"delta\":\"hi\"}\n\n",
		"event: a\r\ndata: 1\r\n\r\n",
		"event: a\rdata: 1\r\r",
		"data:a\ndata\ndata: b\n\n",
		": c\nid: 1\nretry: 5\nfoo\n\n",
		"\xEF\xBB\xBFdata: x\n\n",
		"\xEF\xBB",
		"event: ping\n\ndata:\n\n",
		"data: x\n",
		"data: x\r",
		"data: a\n\n: bye",
		"\n\r\n\r\r\n",
	} {
		f.Add([]byte(seed), uint16(0))
		f.Add([]byte(seed), uint16(8))
	}
	f.Fuzz(func(t *testing.T, input []byte, limit uint16) {
		opts := sse.ReadOptions{MaxEventSize: int(limit)}
		maxSize := opts.MaxEventSize
		if maxSize == 0 {
			maxSize = sse.DefaultMaxEventSize
		}
		got, err := readAll(t, bytes.NewReader(input), opts)
		for _, ev := range got {
			require.NotEmpty(t, ev.Data)
			require.LessOrEqual(t, len(ev.Data), maxSize)
			require.NotContains(t, ev.Data, "\r")
			require.NotContains(t, ev.Name, "\r")
			require.NotContains(t, ev.Name, "\n")
		}
		var tooLarge *sse.EventTooLargeError
		if err != nil && !errors.Is(err, sse.ErrIncompleteEvent) && !errors.As(err, &tooLarge) {
			t.Fatalf("unexpected error %v", err)
		}
		if tooLarge != nil {
			require.Equal(t, maxSize, tooLarge.Limit)
		}
		if limit != 0 {
			return
		}

		for _, rd := range readers[1:] {
			chunked, chunkedErr := readAll(t, rd.wrap(string(input)), opts)
			assert.Equal(t, got, chunked, rd.name)
			assert.Equal(t, err, chunkedErr, rd.name)
		}

		// Read must not ask for more input while it holds a complete event:
		// when the input runs out, every event is already out.
		stall := &stallReader{r: bytes.NewReader(input)}
		yielded := 0
		for _, err := range sse.Read(stall, opts) {
			if err != nil {
				require.ErrorIs(t, err, errStall)
				break
			}
			yielded++
			stall.yielded = yielded
		}
		require.True(t, stall.stalled)
		assert.Equal(t, len(got), stall.yieldedAtStall, "events yielded before Read asked for more input")

		if err == nil {
			more, err := readAll(t, strings.NewReader(string(input)+"data: z\n\n"), opts)
			require.NoError(t, err)
			assert.Equal(t, append(got, event{"", "z"}), more)
		}
	})
}

// FuzzRoundTrip checks that for any name and data, Read(AppendEvent(name,
// data)) yields exactly one event whose name is name without its CR and LF
// bytes and whose data is data with every "\r\n", then every remaining "\r",
// replaced by "\n" — or, for empty data, no event — and then ends cleanly.
// A second frame appended after it is read back too.
func FuzzRoundTrip(f *testing.F) {
	f.Add("", []byte(`{"type":"RUN_STARTED"}`))
	f.Add("text_delta", []byte(`{"delta":"hi"}`))
	f.Add("a\r\nb", []byte("x\r\ny\rz\n"))
	f.Add(" ", []byte("\r\r\n\n"))
	f.Add("", []byte(""))
	f.Add("\xEF\xBB\xBF", []byte("\xEF\xBB\xBFdata: x\n\n"))
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		frames := sse.AppendEvent(nil, name, data)
		frames = sse.AppendEvent(frames, "", []byte("next"))

		wantName := strings.NewReplacer("\r", "", "\n", "").Replace(name)
		wantData := strings.ReplaceAll(strings.ReplaceAll(string(data), "\r\n", "\n"), "\r", "\n")
		var want []event
		if len(data) > 0 {
			want = append(want, event{wantName, wantData})
		}
		want = append(want, event{"", "next"})

		got, err := readAll(t, bytes.NewReader(frames), sse.ReadOptions{})
		require.NoError(t, err)
		assert.Equal(t, want, got)
	})
}

var errStall = errors.New("stalled")

// stallReader hands over its input a byte at a time, then records how many
// events had been yielded when it was asked for more, and fails.
type stallReader struct {
	r                       *bytes.Reader
	yielded, yieldedAtStall int
	stalled                 bool
}

func (s *stallReader) Read(p []byte) (int, error) {
	if s.r.Len() == 0 {
		if !s.stalled {
			s.stalled, s.yieldedAtStall = true, s.yielded
		}
		return 0, errStall
	}
	return s.r.Read(p[:min(len(p), 1)])
}

// FuzzReaderLikeRead checks that Reader.Next gives, for any input and size
// limit, exactly the events and the error Read yields, and io.EOF at a
// clean end.
func FuzzReaderLikeRead(f *testing.F) {
	for _, seed := range []string{"", "data: x\n\n", "event: a\r\ndata: 1\r\n\r\n", "data: x\n", "\xEF\xBBdata: 1\n\n", ": c\n\ndata: a\ndata: b\n\n"} {
		f.Add([]byte(seed), uint16(0))
		f.Add([]byte(seed), uint16(4))
	}
	f.Fuzz(func(t *testing.T, input []byte, limit uint16) {
		opts := sse.ReadOptions{MaxEventSize: int(limit)}
		want, wantErr := readAll(t, bytes.NewReader(input), opts)
		r := sse.NewReader(bytes.NewReader(input), opts)
		var got []event
		var err error
		for {
			var ev sse.Event
			if ev, err = r.Next(); err != nil {
				break
			}
			got = append(got, event{Name: ev.Name, Data: string(ev.Data)})
		}
		assert.Equal(t, want, got)
		if wantErr == nil {
			assert.ErrorIs(t, err, io.EOF)
		} else {
			assert.Equal(t, wantErr.Error(), err.Error())
		}
	})
}
