package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"
)

// LeaseTTL is how long a lease lasts without a heartbeat: the longest a
// holder that died (kill -9, a lost machine) keeps others out. It leaves
// room under the 10 s the bridges promise for the next request to arrive.
const LeaseTTL = 8 * time.Second

// ErrHeld reports a lock that another holder has; the error is a
// *HeldError saying for how long.
var ErrHeld = errors.New("store: held by another holder")

// HeldError reports a lock held by another holder. Left is how long that
// holder's lease runs unless it is renewed: a turn that is still running
// renews it, one whose holder died does not.
type HeldError struct {
	Left time.Duration
}

// Error says how long the other holder's lease has left.
func (e *HeldError) Error() string {
	return fmt.Sprintf("store: held by another holder (lease ends in %s unless renewed)", e.Left.Round(time.Millisecond))
}

// Unwrap makes errors.Is(err, ErrHeld) true.
func (e *HeldError) Unwrap() error { return ErrHeld }

// LeaseOptions configure a Lease. The zero value is usable.
type LeaseOptions struct {
	// TTL is how long the lease lasts without a heartbeat; zero means
	// LeaseTTL. The heartbeat renews it every TTL/3.
	TTL time.Duration
	// OnError is told of failed heartbeats and release attempts (op is
	// "renew", "release" or "lost"); nil ignores them. The lease retries on
	// its own.
	OnError func(op string, err error)
	// OnRenew is told of each renewal that succeeded, with its lag: the
	// time from when it was due to when the store confirmed it (how late
	// its timer fired, its wait for the store, the store's answer); nil
	// ignores them.
	OnRenew func(lag time.Duration)
}

// Lease is a held lock on one session or thread, kept alive by a heartbeat
// until Release. A holder that dies stops its heartbeat, so its lease runs
// out within the TTL and the next turn takes the lock over.
//
// The heartbeat is one timer, not a goroutine: an idle stream's lease
// costs no goroutine between renewals. The timer fires for what comes
// first, the next renewal or, while a renewal is in flight or failing,
// the point shortly before the store may let the lock go (see tick).
//
// Release frees the lock with a context of its own (the request's may be
// gone by then) and retries a failed attempt until it holds or the lease
// has run out by itself, so a release is never lost.
type Lease struct {
	holder  string
	calls   lockCalls // the lease's calls to its store
	ttl     time.Duration
	onErr   func(op string, err error)
	onRenew func(lag time.Duration)

	lost    chan struct{} // made by Lost when asked for
	once    sync.Once
	beating sync.WaitGroup // the renewal in flight, if any

	mu       sync.Mutex
	timer    *time.Timer // the next renewal, or the lease's doom before it (arm)
	stopped  bool        // Release has begun: no more renewals
	gone     bool        // lost: another holder took the lock
	lapsed   bool        // no renewal succeeded in time: the hold is unconfirmed until the next one
	renewing bool        // a renewal is in flight
	// stopBeat cancels the renewal in flight, if any (Release stops it).
	stopBeat context.CancelFunc
	due      time.Time // when the next renewal is due
	binds    []context.CancelCauseFunc
	expires  time.Time // a lower bound of when the store lets the lease go
}

// margin is how long before the store may let the lease go that a holder
// whose renewals are late renews at once, and then more often, until one
// answers.
func (l *Lease) margin() time.Duration { return l.ttl / 8 }

// TakeSession takes the turn lock of session id in s. A lock that another
// live lease holds is a *HeldError; a missing session is ErrNotFound.
func TakeSession(ctx context.Context, s SessionLocker, id string, opts LeaseOptions) (*Lease, error) {
	holder := newHolder()
	return take(ctx, holder, opts, &sessionLock{st: s, id: id, holder: holder})
}

// sessionLock is a session's turn lock (TakeSession).
type sessionLock struct {
	st         SessionLocker
	id, holder string
}

func (c *sessionLock) lock(ctx context.Context, ttl time.Duration) (bool, time.Duration, error) {
	return c.st.Lock(ctx, c.id, c.holder, ttl)
}

func (c *sessionLock) renew(ctx context.Context, ttl time.Duration) (bool, error) {
	return c.st.RenewLock(ctx, c.id, c.holder, ttl)
}

func (c *sessionLock) unlock(ctx context.Context) error { return c.st.Unlock(ctx, c.id, c.holder) }

// TakeThread takes the run lock of thread id of owner in s (the thread need
// not exist yet). A lock that another live lease holds is a *HeldError.
func TakeThread(ctx context.Context, s ThreadLocker, owner, id string, opts LeaseOptions) (*Lease, error) {
	holder := newHolder()
	return take(ctx, holder, opts, &threadLock{st: s, owner: owner, id: id, holder: holder})
}

// threadLock is a thread's run lock (TakeThread).
type threadLock struct {
	st                ThreadLocker
	owner, id, holder string
}

func (c *threadLock) lock(ctx context.Context, ttl time.Duration) (bool, time.Duration, error) {
	return c.st.LockThread(ctx, c.owner, c.id, c.holder, ttl)
}

func (c *threadLock) renew(ctx context.Context, ttl time.Duration) (bool, error) {
	return c.st.RenewThreadLock(ctx, c.owner, c.id, c.holder, ttl)
}

func (c *threadLock) unlock(ctx context.Context) error {
	return c.st.UnlockThread(ctx, c.owner, c.id, c.holder)
}

// lockCalls are a lease's calls to its store: lock takes the lock (and
// says how long another holder has left), renew is the heartbeat's,
// unlock frees it. One small value per lease rather than three closures.
type lockCalls interface {
	lock(ctx context.Context, ttl time.Duration) (bool, time.Duration, error)
	renew(ctx context.Context, ttl time.Duration) (bool, error)
	unlock(ctx context.Context) error
}

// TakeAndLoadSession takes the turn lock of owner's session id and reads
// the session and its history under it (SessionLocker.LockLoadSession: one
// round trip on PostgreSQL). A lock that another live lease holds is a
// *HeldError; a session that is not owner's is ErrNotFound. The history is
// not read, and hist is nil, when the caller holds it at version known.
func TakeAndLoadSession(ctx context.Context, st SessionLocker, owner, id string, known int64, opts LeaseOptions) (*Lease, *Session, []Entry, error) {
	holder := newHolder()
	c := &sessionLoadLock{sessionLock: sessionLock{st: st, id: id, holder: holder}, owner: owner, known: known}
	l, err := take(ctx, holder, opts, c)
	sess, hist := c.sess, c.hist
	c.sess, c.hist = nil, nil // the lease keeps none of it
	if err != nil {
		return nil, nil, nil, err
	}
	return l, sess, hist, nil
}

// sessionLoadLock is a session's turn lock whose first taking reads the
// session and its history under it (TakeAndLoadSession); it is a
// sessionLock after that.
type sessionLoadLock struct {
	sessionLock
	owner  string
	known  int64
	loaded bool // take called lock once before it returned; renewals come later
	sess   *Session
	hist   []Entry
}

func (c *sessionLoadLock) lock(ctx context.Context, ttl time.Duration) (bool, time.Duration, error) {
	if c.loaded {
		return c.sessionLock.lock(ctx, ttl)
	}
	c.loaded = true
	sess, hist, ok, left, err := c.st.LockLoadSession(ctx, c.owner, c.id, c.holder, c.known, ttl)
	c.sess, c.hist = sess, hist
	return ok, left, err
}

func newHolder() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "lease-" + hex.EncodeToString(b[:])
}

func take(ctx context.Context, holder string, opts LeaseOptions, calls lockCalls) (*Lease, error) {
	l := &Lease{holder: holder, calls: calls, ttl: opts.TTL, onErr: opts.OnError, onRenew: opts.OnRenew}
	if l.ttl <= 0 {
		l.ttl = LeaseTTL
	}
	if l.onErr == nil {
		l.onErr = func(string, error) {}
	}
	start := time.Now()
	ok, left, err := l.calls.lock(ctx, l.ttl)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, &HeldError{Left: left}
	}
	l.expires = start.Add(l.ttl)
	l.mu.Lock()
	l.due = time.Now().Add(l.ttl / 3)
	l.timer = time.AfterFunc(l.ttl/3, l.tick)
	l.mu.Unlock()
	return l, nil
}

// Lost is closed when the lease is lost: the heartbeat found the lock taken
// by another holder (this holder stalled for longer than the TTL, and
// another turn took the lock meanwhile). A renewal that is late, even past
// the TTL, keeps a lock nobody else took: the store renews a lock by its
// holder, not by its time.
func (l *Lease) Lost() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lost == nil {
		l.lost = make(chan struct{})
		if l.gone {
			close(l.lost)
		}
	}
	return l.lost
}

// ErrLeaseLost is the cause of a Bind context's end when the lease was
// lost.
var ErrLeaseLost = errors.New("store: the turn lock was lost to another holder")

// ErrLeaseExpired wraps ErrLeaseLost. A lease no longer gives itself up
// when its renewals are late (a busy process, a slow store): it is lost
// only when another holder took the lock, with ErrLeaseLost.
//
// Deprecated: no lease ends with it; test for ErrLeaseLost.
var ErrLeaseExpired = fmt.Errorf("%w: it could not be renewed in time", ErrLeaseLost)

// ErrLeaseLate is what OnError is told (op "late") when no renewal of the
// lease succeeded by shortly before the store may let the lock go (the
// process or the store too busy): the lease renews at once, and then every
// margin, until one answers. A renewal that finds the lock still the
// holder's keeps it, however late; one that finds another holder's loses
// it (ErrLeaseLost).
var ErrLeaseLate = errors.New("store: the turn lock's renewal is late")

// doomIn is how long until the lease is about to run out in the store
// (its doom: expires less the margin); l.mu is held.
func (l *Lease) doomIn() time.Duration { return time.Until(l.expires) - l.margin() }

// armLocked sets the timer for what comes first: the next renewal, in
// next, or, unless the lease is lapsed already, its doom; l.mu is held.
func (l *Lease) armLocked(next time.Duration) {
	if d := l.doomIn(); !l.lapsed && d < next {
		next = max(d, 0)
	}
	l.timer.Reset(next)
}

// tick is the timer's. At the lease's doom, unless a renewal has moved
// expires on, the lease is lapsed (told to OnError as "late") and renews
// now, or, with a renewal in flight, when that one ends. A renewal that is
// due runs.
func (l *Lease) tick() {
	l.mu.Lock()
	if l.stopped || l.gone {
		l.mu.Unlock()
		return
	}
	if !l.lapsed && l.doomIn() <= 0 {
		l.lapsed = true
		l.onErr("late", ErrLeaseLate)
	}
	if l.renewing {
		l.mu.Unlock() // the renewal in flight sets the timer when it ends
		return
	}
	if !l.lapsed && time.Now().Before(l.due) {
		l.armLocked(time.Until(l.due)) // a doom that a renewal moved on
		l.mu.Unlock()
		return
	}
	l.mu.Unlock()
	l.renew()
}

// Lapsed reports whether the lease's renewals are late: no renewal
// succeeded by shortly before the store may let the lock go, and none has
// since. A lapsed lease is not lost: its next renewal tells.
func (l *Lease) Lapsed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lapsed && !l.gone
}

// loseLocked marks the lease lost and ends every Bind context with cause;
// l.mu is held.
func (l *Lease) loseLocked(cause error) {
	if l.gone {
		return
	}
	l.gone = true
	l.onErr("lost", cause)
	if l.lost != nil {
		close(l.lost)
	}
	for _, cancel := range l.binds {
		cancel(cause)
	}
	l.binds = nil
	l.timer.Stop()
}

// Bind returns a context derived from parent that ends (with cause
// ErrLeaseLost) if the lease is lost, so that a turn whose lock another
// holder took stops instead of running beside the new one. stop frees it.
func (l *Lease) Bind(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	l.CancelOnLoss(cancel)
	return ctx, func() { cancel(context.Canceled) }
}

// CancelOnLoss is Bind for a context the caller already cancels: cancel
// is called with ErrLeaseLost if the lease is lost (at once when it is),
// and is kept until then or until the lease ends. A turn's own context
// ends so without another context made for it.
func (l *Lease) CancelOnLoss(cancel context.CancelCauseFunc) {
	l.mu.Lock()
	if l.gone {
		cancel(ErrLeaseLost)
	} else {
		l.binds = append(l.binds, cancel)
	}
	l.mu.Unlock()
}

// renew is the heartbeat: it runs every TTL/3 on the timer's goroutine
// (tick), renews the lock and sets the timer again, until Release or until
// the lock turns out to have been taken by another holder. While it waits
// for the store, the timer is set for the lease's doom.
func (l *Lease) renew() {
	l.mu.Lock()
	if l.stopped || l.gone || l.renewing {
		l.mu.Unlock()
		return
	}
	l.renewing = true
	l.beating.Add(1) // under mu: Release waits for it, or it never starts
	ctx, cancel := context.WithTimeout(context.Background(), l.ttl/3)
	l.stopBeat = cancel
	if d := l.doomIn(); !l.lapsed && d > 0 {
		l.timer.Reset(d)
	}
	l.mu.Unlock()
	defer l.beating.Done()

	start := time.Now()
	ok, err := l.calls.renew(ctx, l.ttl)
	cancel()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.renewing, l.stopBeat = false, nil
	switch {
	case l.stopped || l.gone:
		return
	case err != nil:
		l.onErr("renew", err)
	case !ok:
		l.loseLocked(ErrLeaseLost)
		return
	default:
		l.expires = start.Add(l.ttl)
		if l.onRenew != nil {
			l.onRenew(time.Since(l.due))
		}
		l.lapsed = false
	}
	next := l.ttl / 3
	if l.lapsed {
		next = l.margin()
	}
	if err == nil {
		l.due = time.Now().Add(next) // a failed renewal is still due
	}
	l.armLocked(next)
}

// releaseWait is how long Release itself keeps trying before it leaves the
// remaining attempts to a goroutine.
const releaseWait = 2 * time.Second

// Release stops the heartbeat and frees the lock. It returns once the lock
// is free, or after a few seconds of failed attempts, which then go on in
// the background until one holds or the lease has run out by itself.
// Calling it again does nothing.
func (l *Lease) Release() {
	l.once.Do(func() {
		l.stop()
		l.unlockRetrying()
	})
}

// ReleaseWith is Release whose unlock is write, a store write that frees
// the lock of the holder it is given along with what it saves
// (SaveSession with the holder): a turn's end in one write instead of two. The
// heartbeat stops first, so that no renewal takes the freed lock again.
//
// A write that fails is tried again, with backoff, for as long as the
// lease holds and for one TTL at most: between tries the lock is renewed
// (a store that answers again keeps it), and the tries end shortly before
// the store may let it go. So write must be safe to repeat: a try whose
// outcome is unknown (the connection broke at its commit) may have been
// stored. A lease already lost is not written with: ReleaseWith returns
// ErrLeaseLost. When every
// try fails, Release's own unlock follows. Called after Release, it only
// writes, once. It returns the last try's error.
func (l *Lease) ReleaseWith(write func(holder string) error) error {
	var err error
	done := false
	l.once.Do(func() {
		done = true
		lost := l.stop() || !l.confirm()
		if lost {
			err = ErrLeaseLost
			l.unlockRetrying()
			return
		}
		if err = l.writeRetrying(write); err != nil {
			l.unlockRetrying()
		}
	})
	if !done {
		return write(l.holder)
	}
	return err
}

// writeRetrying calls write until it succeeds or the lease no longer
// holds. After a retry that succeeded, the lock is freed again: an
// earlier try may have freed it, and a renewal since then taken it back.
func (l *Lease) writeRetrying(write func(holder string) error) error {
	backoff := 20 * time.Millisecond
	var giveUp time.Time // one TTL after the first failure, at most
	for tries := 1; ; tries++ {
		err := write(l.holder)
		if err == nil {
			if tries > 1 {
				l.unlockRetrying()
			}
			return nil
		}
		if giveUp.IsZero() {
			giveUp = time.Now().Add(l.ttl - l.margin())
		}
		l.mu.Lock()
		left := min(time.Until(l.expires), time.Until(giveUp)) - l.margin()
		l.mu.Unlock()
		if left < backoff {
			return err
		}
		l.onErr("save", err)
		time.Sleep(backoff)
		backoff = min(2*backoff, 500*time.Millisecond)
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), max(left-backoff, time.Millisecond))
		// The lock is taken again, not renewed: a write whose outcome
		// was unknown may have been stored, releasing the lock with it
		// (SaveThread, SaveSession with the holder), and a renewal, which
		// only extends a lock still there, would take that for a lost
		// lease. Taking it is right as long as no other holder has it.
		ok, _, lerr := l.calls.lock(ctx, l.ttl)
		cancel()
		switch {
		case lerr != nil:
			// The store is still away: the next try tells.
		case !ok:
			return fmt.Errorf("%w (while retrying: %w)", ErrLeaseLost, err)
		default:
			l.mu.Lock()
			l.expires = start.Add(l.ttl)
			l.mu.Unlock()
		}
	}
}

// confirm renews a lapsed lease once more before its last write, the
// heartbeat stopped: false when another holder has the lock (the lease is
// then lost). A lease that is not lapsed, or a renewal that fails, is
// taken as held: the write's own retries take the lock again.
func (l *Lease) confirm() bool {
	l.mu.Lock()
	lapsed := l.lapsed
	l.mu.Unlock()
	if !lapsed {
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), l.ttl/3)
	ok, err := l.calls.renew(ctx, l.ttl)
	cancel()
	if err != nil || ok {
		return true
	}
	l.mu.Lock()
	l.loseLocked(ErrLeaseLost)
	l.mu.Unlock()
	return false
}

// stop ends the heartbeat, waiting for a renewal in flight; it reports
// whether the lease was lost.
func (l *Lease) stop() (lost bool) {
	l.mu.Lock()
	l.stopped = true
	l.timer.Stop()
	lost = l.gone
	if l.stopBeat != nil {
		l.stopBeat() // the renewal in flight stops
	}
	l.mu.Unlock()
	l.beating.Wait()
	return lost
}

// unlockRetrying frees the lock, retrying for releaseWait, then in the
// background.
func (l *Lease) unlockRetrying() {
	deadline := time.Now().Add(releaseWait)
	backoff := 10 * time.Millisecond
	for {
		if l.tryRelease() {
			return
		}
		if time.Now().After(deadline) {
			go l.releaseLater(backoff)
			return
		}
		time.Sleep(backoff)
		backoff = min(2*backoff, time.Second)
	}
}

// releaseLater keeps trying until a release holds or the lease has run
// out, when the lock is free whatever the store says.
func (l *Lease) releaseLater(backoff time.Duration) {
	for {
		l.mu.Lock()
		expired := time.Now().After(l.expires)
		l.mu.Unlock()
		if expired {
			return
		}
		time.Sleep(backoff)
		if l.tryRelease() {
			return
		}
		backoff = min(2*backoff, time.Second)
	}
}

func (l *Lease) tryRelease() bool {
	ctx, cancel := context.WithTimeout(context.Background(), l.ttl/2)
	defer cancel()
	if err := l.calls.unlock(ctx); err != nil {
		l.onErr("release", err)
		return false
	}
	return true
}
