package textparts

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// spill splits text as a stream does: parts of at most max bytes, cut at
// rune starts, and the rest; it returns the parts and the text that
// stands for it (the marker and the rest).
func spill(text string, max int) (parts [][]byte, held string) {
	b := []byte(text)
	for len(b) > max {
		n := Cut(b, max)
		parts = append(parts, b[:n])
		b = b[n:]
	}
	if len(parts) == 0 {
		return nil, text
	}
	return parts, Marker("ref-1", len(parts)) + string(b)
}

// expanded is the text of row's "content" once Expand gave it the parts.
func expanded(t testing.TB, row []byte, parts [][]byte) string {
	out, err := Expand(row, func(ref string, n int) ([][]byte, error) {
		if ref != "ref-1" {
			return nil, nil
		}
		return parts[:min(n, len(parts))], nil
	})
	require.NoError(t, err)
	var m struct{ Content string }
	require.NoError(t, json.Unmarshal(out, &m), "%q", out)
	return m.Content
}

func TestExpandGivesTheWholeText(t *testing.T) {
	text := "héllo wörld 🎉 \"quoted\" \\ <tags> & \n\t\x00 \u2028 end "
	for i := 0; i < 6; i++ {
		text += text
	}
	for _, max := range []int{1, 3, 7, 64, len(text) - 1} {
		parts, held := spill(text, max)
		require.NotEmpty(t, parts)
		row, err := json.Marshal(map[string]string{"role": "assistant", "content": held})
		require.NoError(t, err)
		assert.True(t, text == expanded(t, row, parts), "parts of %d bytes: the text differs", max)
	}
}

func TestExpandLeavesWhatIsNoMarker(t *testing.T) {
	parts := [][]byte{[]byte("abc")}
	for _, text := range []string{
		"plain text",
		"\x00parts ref-1 2\x00 names two parts, and there is one",
		"\x00parts ref-2 1\x00 names parts that are not there",
		"\x00parts REF 1\x00 \x00parts ref-1\x00 \x00parts ref-1 x\x00 \x00parts ref-1 0\x00 \x00parts ref-1 1",
	} {
		row, err := json.Marshal(map[string]string{"content": text})
		require.NoError(t, err)
		assert.Equal(t, text, expanded(t, row, parts))
	}
}

func TestExpandReportsTheStoresError(t *testing.T) {
	row, _ := json.Marshal(map[string]string{"content": Marker("ref-1", 1)})
	failed := errors.New("store down")
	_, err := Expand(row, func(string, int) ([][]byte, error) { return nil, failed })
	assert.ErrorIs(t, err, failed)
}

func TestCutKeepsRunesWhole(t *testing.T) {
	b := []byte("aé🎉")            // 1 + 2 + 4 bytes
	assert.Equal(t, 1, Cut(b, 2)) // inside é
	assert.Equal(t, 3, Cut(b, 3))
	assert.Equal(t, 3, Cut(b, 6)) // inside 🎉
	assert.Equal(t, 7, Cut(b, 9))
	assert.Equal(t, 4, Cut([]byte("🎉🎉"), 1), "no rune starts within: the first after")
	assert.Equal(t, 6, Cut([]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80}, 2), "not UTF-8: cut a rune's length on")
}

// FuzzExpand: any text, held in parts of any size, reads back whole.
func FuzzExpand(f *testing.F) {
	f.Add("héllo 🎉 world", 3)
	f.Add("\x00parts ref-1 1\x00", 1)
	f.Add("\xff\xfe invalid", 2)
	f.Fuzz(func(t *testing.T, text string, max int) {
		if max <= 0 || max > 1<<10 {
			return
		}
		parts, held := spill(text, max)
		row, err := json.Marshal(map[string]string{"content": held})
		require.NoError(t, err)
		var want struct{ Content string }
		whole, _ := json.Marshal(map[string]string{"content": text})
		require.NoError(t, json.Unmarshal(whole, &want))
		if len(parts) == 0 {
			return // the text itself, which may look like a marker
		}
		assert.Equal(t, want.Content, expanded(t, row, parts))
	})
}
