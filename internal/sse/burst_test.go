package sse

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// burstThenTrickle gives a burst of events in reads as large as asked,
// then one small event a read.
type burstThenTrickle struct {
	burst   *strings.Reader
	trickle int
}

func (r *burstThenTrickle) Read(p []byte) (int, error) {
	if r.burst.Len() > 0 {
		return r.burst.Read(p)
	}
	if r.trickle == 0 {
		return 0, io.EOF
	}
	r.trickle--
	return copy(p, "data: {\"delta\":\"x\"}\n\n"), nil
}

// framesApart gives its frames one read each, as a stream that trickles
// does: a frame larger than the read's buffer takes the reads it needs.
type framesApart struct {
	frames []string
	rest   string // what is left of the frame being read
}

func (r *framesApart) Read(p []byte) (int, error) {
	if r.rest == "" {
		if len(r.frames) == 0 {
			return 0, io.EOF
		}
		r.rest, r.frames = r.frames[0], r.frames[1:]
	}
	n := copy(p, r.rest)
	r.rest = r.rest[n:]
	return n, nil
}

// A burst is read into larger buffers from the pool, which go back once
// what they held is parsed: a stream that then trickles, or waits, holds
// the reader's own 256 bytes.
func TestBurstBufferGoesBack(t *testing.T) {
	var burst strings.Builder
	for i := range 200 {
		fmt.Fprintf(&burst, "data: {\"delta\":\"token %d\"}\n\n", i)
	}
	r := &burstThenTrickle{burst: strings.NewReader(burst.String()), trickle: 3}
	p := parser{r: r, limit: 1 << 20, lf: search{at: -1}, cr: search{at: -1}}
	grew := false
	for i := range 203 {
		ev, err := p.next()
		require.NoError(t, err, i)
		require.NotEmpty(t, ev.Data, i)
		grew = grew || p.burst != nil
	}
	require.True(t, grew, "the burst was read 256 bytes at a time")
	require.Nil(t, p.burst, "the burst's buffer was kept")
	require.Len(t, p.buf, 2*minBuffer)
}

// A reader with the small buffer (AAP's frames) waits on 128 bytes; a
// frame that does not fit it is read into a larger one from the pool,
// which goes back as reads trickle again, and every frame comes whole.
func TestSmallBufferTakesLargerFrames(t *testing.T) {
	r := &framesApart{}
	var want []string
	for i := range 50 {
		delta := strings.Repeat("x", i%7*40) // frames of 43 to 283 bytes
		r.frames = append(r.frames, fmt.Sprintf("event: text_delta\ndata: {\"delta\":\"%s\"}\n\n", delta))
		want = append(want, `{"delta":"`+delta+`"}`)
	}
	rd := NewReader(r, ReadOptions{SmallBuffer: true})
	for i, w := range want {
		ev, err := rd.Next()
		require.NoError(t, err, i)
		require.Equal(t, w, string(ev.Data), i)
		if i == 0 {
			require.Len(t, rd.p.buf, minBuffer, "the reader's own buffer")
		}
	}
	_, err := rd.Next()
	require.ErrorIs(t, err, io.EOF)
	require.Nil(t, rd.p.burst, "a larger buffer was kept")
	require.Len(t, rd.p.buf, minBuffer)
}
