package admit

import (
	"context"
	"errors"
	"math"
	"sync"
	"time"

	"github.com/aapagui/aapagui/bridge/internal/fault"
	"github.com/aapagui/aapagui/bridge/internal/metrics"
)

// Load is what the process can carry, measured, so that a turn is taken
// only while the turns it holds are kept alive: how late the process's
// own ticker fires (its scheduling delay: the CPU it does not get, from
// its own turns or from its neighbours on the machine) and how late its
// lock renewals are confirmed (renewal lag: the ticker's lateness, the
// store's queue, the store). Either past its bound, a turn's start is
// refused before anything of it runs: 503 overloaded with Retry-After
// (Admit). The store's own wait is bounded at the start itself
// (StartTimeout: 503 store_busy).
//
// Each measure is a recent average: a fifth of each sample, the rest the
// average before it, which itself halves every loadHalfLife without
// samples. So a lone late tick (a GC pause, a neighbour's spike) refuses
// nothing, a process that stays late refuses starts while it does, and
// admission resumes within seconds of the load going. The
// ticker runs for loadIdle after each start: an idle process holds no
// goroutine for it.
type Load struct {
	met                   *metrics.Metrics
	maxDelay, maxRenewLag time.Duration
	mu                    sync.Mutex
	delay, lag            average
	ticking               bool
	lastStart             time.Time
	tokens                float64       // starts that may go ahead now (Admit)
	minted                chan struct{} // closed (and replaced) as tokens are minted
}

// Defaults and constants of Load.
const (
	// DefaultMaxSchedulingDelay is Serving.MaxSchedulingDelay's default:
	// a Go process that gets its CPU fires its timers within a few ms.
	DefaultMaxSchedulingDelay = 500 * time.Millisecond
	loadTick                  = 50 * time.Millisecond
	loadHalfLife              = time.Second
	loadIdle                  = 10 * time.Second
	loadMint                  = 64  // tokens an on-time tick mints: about 1,280 starts a second
	loadBurst                 = 256 // tokens held at most: the starts taken at once
	overloadRetry             = 2 * time.Second
)

// average is a recent average that halves every loadHalfLife without
// samples.
type average struct {
	v  float64 // seconds
	at time.Time
}

// loadWeight is a sample's weight in the average.
const loadWeight = 0.2

func (p *average) add(now time.Time, d time.Duration) {
	v := p.value(now)
	p.v = v + loadWeight*(d.Seconds()-v)
	p.at = now
}

func (p *average) value(now time.Time) float64 {
	if p.at.IsZero() {
		return 0
	}
	return p.v * math.Exp2(-now.Sub(p.at).Seconds()/loadHalfLife.Seconds())
}

// New returns the load of a process: maxDelay bounds the scheduling
// delay and maxRenewLag the lag of its lock renewals, whose leases last
// leaseTTL (zero: defaults, negative: none).
func New(m *metrics.Metrics, maxDelay, maxRenewLag, leaseTTL time.Duration) *Load {
	l := &Load{met: m, maxDelay: maxDelay, maxRenewLag: maxRenewLag, tokens: loadBurst, minted: make(chan struct{})}
	if l.maxDelay == 0 {
		l.maxDelay = DefaultMaxSchedulingDelay
	}
	if l.maxRenewLag == 0 {
		// A lease is late past about half its TTL without a renewal;
		// new turns are refused well before.
		l.maxRenewLag = leaseTTL / 6
	}
	return l
}

// Admit decides a turn's start: nil lets it seek its lock (Started counts
// what came of it), a *Failure (503 overloaded, Retry-After) refuses it,
// counted, naming the measure past its bound.
//
// A start also takes one of the tokens the ticker mints as it fires: up
// to loadMint each tick, fewer the later the tick (none at
// MaxSchedulingDelay), at most loadBurst held. So a burst that comes all
// at once, before anything is measured, is taken in at the pace the
// process shows it can keep, not all together: a start waits for a token
// as long as ctx lets it (the start's bound, StartTimeout), and is then
// refused (scheduling_delay).
func (l *Load) Admit(ctx context.Context) error {
	for {
		now := time.Now()
		l.mu.Lock()
		l.lastStart = now
		l.tickLocked()
		cause := l.overLocked(now)
		paced := l.maxDelay > 0
		if cause == "" && (!paced || l.tokens >= 1) {
			if paced {
				l.tokens--
			}
			l.mu.Unlock()
			return nil
		}
		minted := l.minted
		l.mu.Unlock()
		if cause != "" {
			return l.refuse(cause)
		}
		select {
		case <-minted:
		case <-ctx.Done():
			return l.refuse(metrics.CauseSchedDelay)
		}
	}
}

// overLocked names the measure past its bound, "" when none is; l.mu is
// held.
func (l *Load) overLocked(now time.Time) string {
	switch {
	case l.maxDelay > 0 && l.delay.value(now) > l.maxDelay.Seconds():
		return metrics.CauseSchedDelay
	case l.maxRenewLag > 0 && l.lag.value(now) > l.maxRenewLag.Seconds():
		return metrics.CauseRenewalLag
	}
	return ""
}

// refuse counts a refusal for cause and returns its 503.
func (l *Load) refuse(cause string) error {
	l.met.Admission(cause)
	return &fault.Failure{Kind: fault.KindUnavailable, Code: "overloaded", Retry: overloadRetry,
		Message: "the server is too busy to keep another turn alive now (" + cause + " past its bound); nothing of it ran; retry after Retry-After"}
}

// Started counts what became of an admitted start once its lock was
// sought: err nil, admitted; ErrStoreBusy, refused for the store.
func (l *Load) Started(err error) {
	switch {
	case err == nil:
		l.met.Admission("")
	case errors.Is(err, fault.ErrStoreBusy):
		l.met.Admission(metrics.CauseStoreBusy)
	}
}

// Renewed is a lease's OnRenew: it records a renewal's lag.
func (l *Load) Renewed(lag time.Duration) {
	l.met.RenewalLag(lag)
	l.mu.Lock()
	l.lag.add(time.Now(), lag)
	l.mu.Unlock()
}

// tickLocked starts the ticker unless it runs; l.mu is held.
func (l *Load) tickLocked() {
	if !l.ticking {
		l.ticking = true
		l.tokens = loadBurst // idle since the ticker stopped
		go l.tick()
	}
}

// tick measures, every loadTick, how late it fires, until the process
// has held no turn and started none for loadIdle.
func (l *Load) tick() {
	t := time.NewTimer(loadTick)
	defer t.Stop()
	for due := time.Now().Add(loadTick); ; due = time.Now().Add(loadTick) {
		<-t.C
		now := time.Now()
		late := max(now.Sub(due), 0)
		l.met.SchedulingDelay(late)
		l.mu.Lock()
		l.delay.add(now, late)
		if l.maxDelay > 0 {
			l.tokens = min(loadBurst, l.tokens+loadMint*max(0, 1-late.Seconds()/l.maxDelay.Seconds()))
		}
		close(l.minted)
		l.minted = make(chan struct{})
		if now.Sub(l.lastStart) > loadIdle {
			l.ticking = false
			l.mu.Unlock()
			return
		}
		l.mu.Unlock()
		t.Reset(loadTick)
	}
}
