package runlog

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A process running many runs at once lets each wait longer before its
// events are written, so that they make about maxLingerWrites writes a
// second in all; a few runs wait the recorder's linger.
func TestLingerShared(t *testing.T) {
	h := NewHub()
	require.Equal(t, linger, h.linger())
	for i := range 2000 {
		h.running(strconv.Itoa(i))
	}
	require.Equal(t, 2000*time.Second/maxLingerWrites, h.linger())
	for i := range 1990 {
		h.stopped(strconv.Itoa(i))
	}
	require.Equal(t, linger, h.linger())
}
