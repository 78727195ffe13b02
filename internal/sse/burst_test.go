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
	require.Len(t, p.buf, minBuffer)
}
