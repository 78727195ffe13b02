package limit_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/internal/limit"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// One client alone may take the whole burst at once, and the whole rate
// after it: the share of its own, then what is above the reserve.
func TestFairOneClientGetsTheWholeRate(t *testing.T) {
	f := limit.NewFair(20, 40)
	n := 0
	for {
		if ok, _ := f.Take("a", t0); !ok {
			break
		}
		n++
	}
	assert.Equal(t, 40, n, "the burst")
	ok, wait := f.Take("a", t0)
	assert.False(t, ok)
	assert.Greater(t, wait, time.Duration(0))

	taken := 0
	now := t0
	for range 1000 { // 100 s, a request every 100 ms
		now = now.Add(100 * time.Millisecond)
		if ok, _ := f.Take("a", now); ok {
			taken++
		}
	}
	assert.GreaterOrEqual(t, taken, 1000-30, "a client alone is held back only while the reserve refills")
}

// While one client floods, another's request passes within a second, and
// all of them together never take more than the shared rate.
func TestFairFloodLeavesRoomForOthers(t *testing.T) {
	f := limit.NewFair(20, 40)
	now, taken, firstOther := t0, 0, time.Duration(-1)
	for step := range 100 { // 10 s
		now = now.Add(100 * time.Millisecond)
		for range 100 {
			if ok, _ := f.Take("flood", now); ok {
				taken++
			}
		}
		if step%10 == 9 && firstOther < 0 {
			if ok, _ := f.Take("other", now); ok {
				firstOther = now.Sub(t0)
				taken++
			}
		}
	}
	require.GreaterOrEqual(t, firstOther, time.Duration(0), "the other client never got a token")
	assert.LessOrEqual(t, firstOther, time.Second)
	assert.LessOrEqual(t, taken, 40+20*10, "at most the burst and the rate, all clients together")
}

// Clients are remembered up to a bound; idle ones are forgotten, and a
// client past the bound has no share of its own, only the tokens above
// the reserve.
func TestFairClientsAreBounded(t *testing.T) {
	f := limit.NewFair(1e6, 10)
	now := t0
	for i := range 5000 {
		f.Take(fmt.Sprint("c", i), now)
	}
	assert.Equal(t, 4096, f.Clients())
	now = now.Add(time.Second) // every share full again
	ok, _ := f.Take("new", now)
	assert.True(t, ok)
	assert.Equal(t, 1, f.Clients(), "the idle clients are forgotten")
}

func TestClient(t *testing.T) {
	for addr, want := range map[string]string{
		"192.0.2.7:5000":            "192.0.2.7",
		"[::ffff:192.0.2.7]:5000":   "192.0.2.7",
		"[2001:db8:1:2:3::4]:443":   "2001:db8:1:2::/64",
		"[2001:db8:1:2:ffff::]:443": "2001:db8:1:2::/64",
		"[fe80::1%eth0]:80":         "fe80::/64",
		"@":                         "@",
	} {
		assert.Equal(t, want, limit.Client(addr), addr)
	}
}
