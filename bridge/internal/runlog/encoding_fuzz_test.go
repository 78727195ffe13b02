package runlog

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

// A batch reads back exactly the frames it was written with, and bytes
// that are not a batch are an error, never a panic or a frame made up
// past them.
func FuzzBatchReader(f *testing.F) {
	f.Add([]byte("event: text_delta\ndata: {\"delta\":\"a\"}\n\n|event: text_delta\ndata: {\"delta\":\"b\"}\n\n"), false)
	f.Add([]byte("event: turn_stop\ndata: {\"stopReason\":\"end_turn\"}\n\n||x"), false)
	f.Add(append(bytes.Repeat([]byte("a"), 300), "|"+string(bytes.Repeat([]byte("a"), 200))...), false)
	f.Add([]byte{0x05, 0x01, 'x'}, true)
	f.Add([]byte{0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, true)
	f.Fuzz(func(t *testing.T, data []byte, raw bool) {
		if raw {
			r := batchReader{batch: data}
			for {
				ok, err := r.next()
				if !ok || err != nil {
					return
				}
			}
		}
		frames := bytes.Split(data, []byte("|"))
		var batch, prev []byte
		hint := 0
		for _, fr := range frames {
			batch, hint = appendEvent(batch, prev, fr, hint)
			prev = fr
		}
		r := batchReader{batch: batch}
		for i, want := range frames {
			ok, err := r.next()
			require.NoError(t, err)
			require.True(t, ok, "frame %d of %d", i, len(frames))
			require.Equal(t, string(want), string(r.frame), "frame %d", i)
		}
		ok, err := r.next()
		require.NoError(t, err)
		require.False(t, ok, "nothing past the last frame")
	})
}

func TestCommonPrefix(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "abc", 0},
		{"abc", "abd", 2},
		{"abcdefgh", "abcdefgh", 8},
		{"abcdefghijklmnop", "abcdefghijklmnoq", 15},
		{"abcdefghij", "abcdefghi", 9},
		{"event: text_delta\ndata: {\"delta\":\"a", "event: text_delta\ndata: {\"delta\":\"b", 34},
	} {
		require.Equal(t, c.want, commonPrefix([]byte(c.a), []byte(c.b)), "%q %q", c.a, c.b)
		for hint := range len(c.a) + 2 {
			require.Equal(t, c.want, sharedPrefix([]byte(c.a), []byte(c.b), hint), "%q %q from %d", c.a, c.b, hint)
		}
	}
}
