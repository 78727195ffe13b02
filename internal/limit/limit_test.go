package limit_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/internal/limit"
)

func TestOff(t *testing.T) {
	k := limit.New(0, 0, 0)
	assert.Nil(t, k, "no limit: nothing to count")
	ok, _ := k.Allow("a")
	assert.True(t, ok)
	release, ok := k.Acquire("a")
	assert.True(t, ok)
	release()
}

func TestRate(t *testing.T) {
	k := limit.New(1, 3, 0)
	for range 3 {
		ok, _ := k.Allow("a")
		require.True(t, ok, "the burst")
	}
	ok, wait := k.Allow("a")
	assert.False(t, ok)
	assert.Greater(t, wait, 900*time.Millisecond)
	assert.LessOrEqual(t, wait, time.Second)
	ok, _ = k.Allow("b")
	assert.True(t, ok, "each key has its own bucket")

	k = limit.New(2.5, 0, 0)
	n := 0
	for {
		if ok, _ := k.Allow("a"); !ok {
			break
		}
		n++
	}
	assert.Equal(t, 3, n, "the burst defaults to the rate, rounded up")
}

func TestTurns(t *testing.T) {
	k := limit.New(0, 0, 2)
	r1, ok := k.Acquire("a")
	require.True(t, ok)
	r2, ok := k.Acquire("a")
	require.True(t, ok)
	_, ok = k.Acquire("a")
	assert.False(t, ok, "a third turn")
	rb, ok := k.Acquire("b")
	assert.True(t, ok, "each key has its own count")
	r1()
	r1() // a second release gives back nothing more
	r3, ok := k.Acquire("a")
	require.True(t, ok)
	_, ok = k.Acquire("a")
	assert.False(t, ok, "r1 gave back one place, not two")
	r2()
	r3()
	rb()
	assert.Zero(t, k.Len(), "keys with nothing running are forgotten")
}

// The streams a key follows (rejoins, connects) have a bound of their
// own, FollowsPerTurn for each turn: a key running its limit of turns
// still follows them, and one following its limit of streams still
// starts a turn.
func TestFollows(t *testing.T) {
	k := limit.New(0, 0, 1)
	assert.Equal(t, limit.FollowsPerTurn, k.Follows())
	turn, ok := k.Acquire("a")
	require.True(t, ok)
	var releases []func()
	for range limit.FollowsPerTurn {
		r, ok := k.Follow("a")
		require.True(t, ok, "a key running its turn follows it")
		releases = append(releases, r)
	}
	_, ok = k.Follow("a")
	assert.False(t, ok, "one stream past the bound")
	_, ok = k.Follow("b")
	assert.True(t, ok, "each key has its own bound")
	turn()
	_, ok = k.Acquire("a")
	assert.True(t, ok, "followed streams take no turn place")
	releases[0]()
	releases[0]()
	r, ok := k.Follow("a")
	require.True(t, ok)
	_, ok = k.Follow("a")
	assert.False(t, ok, "a release gives back one place, not two")
	r()

	k = limit.New(5, 0, 0)
	for range 100 {
		_, ok := k.Follow("a")
		require.True(t, ok, "no turn limit: no bound on streams")
	}
}
