package edge

import (
	"errors"
	"fmt"
	"time"

	"github.com/aapagui/aapagui/bridge/internal/fault"
	"github.com/aapagui/aapagui/internal/limit"
)

// Allow takes one of owner's requests from k (nil: no limit). When the key
// has none left the error is the 429 too_many_requests naming the rate,
// with Retry-After the time until one is.
func Allow(k *limit.Keys, owner string) error {
	if ok, wait := k.Allow(owner); !ok {
		return fault.Throttled("too_many_requests", fmt.Sprintf("this key is over its limit of %g requests a second", k.Rate()), wait)
	}
	return nil
}

// KeyLimits are the per-key limits both bridges have, named as each names
// them: the conversations (sessions, threads) a key holds, the turns
// (runs) it has going at once, and its requests a second with bursts of
// Burst; each off at zero.
type KeyLimits struct {
	Conversations     int
	Turns             int
	RequestsPerSecond float64
	Burst             int
}

// Keys checks the limits (name begins the error) and returns the
// per-process limiter of the rate and the turns (nil: none).
func (l KeyLimits) Keys(name string) (*limit.Keys, error) {
	if l.Conversations < 0 || l.Turns < 0 || l.RequestsPerSecond < 0 || l.Burst < 0 {
		return nil, errors.New(name + ": Config.Limits: a limit is zero (off) or positive")
	}
	return limit.New(l.RequestsPerSecond, l.Burst, l.Turns), nil
}

// Place takes one of owner's places for a turn (KeyLimits.Turns), or
// returns the 429 code (too_many_turns, too_many_runs) naming the limit
// of what (turns, runs), with Retry-After 1 s: a place frees when one of
// the key's turns ends, at no foreseeable time.
func Place(k *limit.Keys, owner, code, what string) (release func(), err error) {
	release, ok := k.Acquire(owner)
	if !ok {
		return nil, fault.Throttled(code, fmt.Sprintf("this key already has %d %s going, its limit; retry once one has ended", k.Turns(), what), time.Second)
	}
	return release, nil
}

// Follow takes one of owner's places to follow a running turn's stream
// (a rejoin, a connect: limit.Keys.Follow), or returns the 429
// too_many_streams naming the bound, limit.FollowsPerTurn for each of
// what (turns, runs) the key may run, with Retry-After 1 s.
func Follow(k *limit.Keys, owner, what string) (release func(), err error) {
	release, ok := k.Follow(owner)
	if !ok {
		return nil, fault.Throttled("too_many_streams", fmt.Sprintf("this key already follows %d streams of running %s at once (rejoins, connects), its limit: %d for each of the %d %s it may run; retry once one has closed",
			k.Follows(), what, limit.FollowsPerTurn, k.Turns(), what), time.Second)
	}
	return release, nil
}
