//go:build race

package runlog_test

// raceEnabled: the race detector's sync.Pool drops a quarter of what is
// put in it, so allocation counts do not hold under it.
const raceEnabled = true
