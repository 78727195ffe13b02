package sse_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
	gosse "github.com/tmaxmax/go-sse"

	"github.com/aapagui/aapagui/internal/sse"
)

// FuzzReadLikeGoSSE holds Read to github.com/tmaxmax/go-sse, the reference
// SSE parser: for any input completed by a blank line, Read yields exactly
// the events go-sse reads that have data, with the same names and data. (A
// stream cut in the middle of an event is where they differ on purpose:
// go-sse dispatches the cut event, Read reports ErrIncompleteEvent; FuzzRead
// covers that.)
func FuzzReadLikeGoSSE(f *testing.F) {
	for _, seed := range []string{
		"",
		"data: x\n\n",
		"event: text_delta\ndata: {\"delta\":\"hi\"}\n\n",
		"event: a\r\ndata: 1\r\n\r\n",
		"event: a\rdata: 1\r\r",
		"data:a\ndata\ndata: b\n\n",
		"data:  two spaces\n\n",
		": c\nid: 1\nretry: 5\nfoo\n\n",
		"\xEF\xBB\xBFdata: x\n\n",
		"\xEF\xBB\xBF\xEF\xBB\xBFdata: x\n\n",
		"\xEF\xBBdata: x\n\n",
		"event: ping\n\ndata:\n\n",
		"event: a\nevent: b\ndata: x\n\ndata: y\n\n",
		"data: x\r",
		"data: a\n\n: bye",
		"\n\r\n\r\r\ndata: x\n\r",
		"Data: x\nDATA: y\ndata : z\n\n",
		"id: 1\x00\ndata: x\n\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		input = append(input, "\n\n"...)
		var want []event
		for ev, err := range gosse.Read(bytes.NewReader(input), &gosse.ReadConfig{MaxEventSize: sse.DefaultMaxEventSize}) {
			require.NoError(t, err)
			if ev.Data != "" {
				want = append(want, event{Name: ev.Type, Data: ev.Data})
			}
		}
		for _, rd := range readers {
			for _, small := range []bool{false, true} {
				got, err := readAll(t, rd.wrap(string(input)), sse.ReadOptions{SmallBuffer: small})
				require.NoError(t, err, rd.name)
				require.Equal(t, want, got, "%s, small buffer %v", rd.name, small)
			}
		}
	})
}
