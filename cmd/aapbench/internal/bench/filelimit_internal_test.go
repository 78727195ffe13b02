package bench

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A run that needs more open files than the process may have is refused
// before it starts, saying what to change (10,000 idle streams with the
// bridges in processes of their own, on a machine allowing 20,000, hung
// with every accept failing); one within the limit, or with the limit
// unknown, goes ahead.
func TestCheckFileLimit(t *testing.T) {
	alone := Options{Idle: 10_000, Streams: []int{1, 100}, BridgeProcess: []string{"aapbench"}}
	err := checkFileLimit(alone, 20_000)
	require.Error(t, err)
	assert.Equal(t, "-idle 10000 and -streams up to 100 need about 20100 open files, and this process may open 20000: lower them, or raise the limit (ulimit -n)", err.Error())
	assert.NoError(t, checkFileLimit(alone, 1<<20))
	alone.Idle = 9_900
	assert.NoError(t, checkFileLimit(alone, 20_000), "9,900 fit under 20,000")
	assert.NoError(t, checkFileLimit(alone, 0), "an unknown limit is not checked")

	inProcess := Options{Idle: 1000, Streams: []int{1, 100}}
	assert.Equal(t, 4100, filesNeeded(inProcess), "four per idle stream through a bridge in this process")
	trickled := Options{Idle: -1, Streams: []int{1, 1000}}
	assert.Equal(t, 6100, filesNeeded(trickled), "six per trickled stream through the chain")
	assert.Error(t, checkFileLimit(trickled, 4096))

	memory := MemoryOptions{Command: []string{"aapbench"}, Streams: []int{1000, 9_900}}
	assert.NoError(t, checkFileLimit(memory.files(), 20_000), "-memory with 9,900 streams: two per stream here, the bridge's in its process")
	memory.Streams = []int{10_000}
	assert.Error(t, checkFileLimit(memory.files(), 20_000))
}
