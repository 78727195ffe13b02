package limit

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Keys counts requests and running turns per key (an owner id, never a
// key). The zero value and nil limit nothing.
type Keys struct {
	rate  rate.Limit // 0: no rate limit
	burst int
	turns int // 0: no turn limit

	mu    sync.Mutex
	keys  map[string]*key
	swept time.Time
}

type key struct {
	bucket  *rate.Limiter
	turns   int
	follows int // streams of turns followed (rejoins, connects): Follow
	used    time.Time
}

// idle reports whether e holds no turn and no followed stream.
func (e *key) idle() bool { return e.turns == 0 && e.follows == 0 }

// FollowsPerTurn is how many streams of running turns (a rejoin, a
// connect) a key may follow at once for each turn it may run: a turn's
// own client, a reloaded page and a tab or two beside it. The bound is
// apart from the turns', so that a key running its limit of turns can
// still follow them.
const FollowsPerTurn = 4

// sweepEvery is how often idle keys are forgotten: a key with no turn
// running and a full bucket is the same as a key never seen.
const sweepEvery = time.Minute

// New returns the limits: perSecond requests a second with bursts of
// burst (at least 1; zero: perSecond rounded up), and turns concurrent
// turns; zero (or less) turns a limit off. It returns nil when every limit
// is off.
func New(perSecond float64, burst, turns int) *Keys {
	if perSecond <= 0 && turns <= 0 {
		return nil
	}
	k := &Keys{turns: max(turns, 0), keys: map[string]*key{}}
	if perSecond > 0 {
		k.rate = rate.Limit(perSecond)
		if burst <= 0 {
			burst = int(math.Ceil(perSecond))
		}
		k.burst = max(burst, 1)
	}
	return k
}

// get returns owner's entry, creating it; k.mu is held.
func (k *Keys) get(owner string, now time.Time) *key {
	if now.Sub(k.swept) > sweepEvery {
		k.sweep(now)
	}
	e, ok := k.keys[owner]
	if !ok {
		e = &key{}
		if k.rate > 0 {
			e.bucket = rate.NewLimiter(k.rate, k.burst)
		}
		k.keys[owner] = e
	}
	e.used = now
	return e
}

// sweep forgets the keys that are as good as new; k.mu is held.
func (k *Keys) sweep(now time.Time) {
	k.swept = now
	for owner, e := range k.keys {
		if e.idle() && (e.bucket == nil || e.bucket.TokensAt(now) >= float64(k.burst)) {
			delete(k.keys, owner)
		}
	}
}

// Allow takes one request of owner's rate. When none is left it returns
// false and how long until one is.
func (k *Keys) Allow(owner string) (bool, time.Duration) {
	if k == nil || k.rate == 0 {
		return true, 0
	}
	now := time.Now()
	k.mu.Lock()
	defer k.mu.Unlock()
	b := k.get(owner, now).bucket
	if b.AllowN(now, 1) {
		return true, 0
	}
	wait := time.Duration((1 - b.TokensAt(now)) / float64(k.rate) * float64(time.Second))
	return false, max(wait, time.Millisecond)
}

// Rate is the request limit in requests a second, 0 if there is none.
func (k *Keys) Rate() float64 {
	if k == nil {
		return 0
	}
	return float64(k.rate)
}

// Turns is the turn limit, 0 if there is none.
func (k *Keys) Turns() int {
	if k == nil {
		return 0
	}
	return k.turns
}

// Acquire takes one of owner's turn places; release gives it back (once).
// It returns false when owner already runs as many turns as allowed.
func (k *Keys) Acquire(owner string) (release func(), ok bool) {
	if k == nil || k.turns == 0 {
		return func() {}, true
	}
	return k.hold(owner, func(e *key) *int { return &e.turns }, k.turns)
}

// Follows is the bound of the streams a key follows at once (Follow): 0 if
// there is none.
func (k *Keys) Follows() int { return k.Turns() * FollowsPerTurn }

// Follow takes one of owner's places to follow a running turn's stream (a
// rejoin, a connect), counted apart from its turns (FollowsPerTurn);
// release gives it back (once). It returns false when owner already
// follows Follows streams. With no turn limit there is no bound.
func (k *Keys) Follow(owner string) (release func(), ok bool) {
	if k == nil || k.turns == 0 {
		return func() {}, true
	}
	return k.hold(owner, func(e *key) *int { return &e.follows }, k.Follows())
}

// hold takes one of owner's places counted by n, of most.
func (k *Keys) hold(owner string, n func(*key) *int, most int) (release func(), ok bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	e := k.get(owner, time.Now())
	if *n(e) >= most {
		return nil, false
	}
	*n(e)++
	var once sync.Once
	return func() {
		once.Do(func() {
			k.mu.Lock()
			defer k.mu.Unlock()
			*n(e)--
			if e.idle() && e.bucket == nil {
				delete(k.keys, owner)
			}
		})
	}, true
}

// Len is the number of keys remembered (for tests).
func (k *Keys) Len() int {
	if k == nil {
		return 0
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.keys)
}
