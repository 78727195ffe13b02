package cursor_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/aapagui/aapagui/internal/cursor"
)

func TestCursorRoundTrip(t *testing.T) {
	for _, seq := range []int64{0, 1, 42, 1 << 40} {
		got, ok := cursor.Parse(cursor.Encode(seq))
		assert.True(t, ok, "%d", seq)
		assert.Equal(t, seq, got)
	}
}

func TestCursorRefusesForeignValues(t *testing.T) {
	for _, bad := range []string{"", "after:1", "!!!", cursor.Encode(-1), "YWZ0ZXI6eA", "YmVmb3JlOjE"} {
		_, ok := cursor.Parse(bad)
		assert.False(t, ok, "%q", bad)
	}
}
