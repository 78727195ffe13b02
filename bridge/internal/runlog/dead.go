package runlog

import (
	"context"
	"errors"
	"time"

	"github.com/aapagui/aapagui/store"
)

// A run whose process is gone (killed, its machine lost) leaves its log
// running: nothing of that process will end it. Whoever follows it ends
// it, on any replica: once the log has been quiet for the lock's TTL, the
// follower asks whether the run's lock is free (Ending.Free); a lock free
// for Ending.Grace while the log still did not move, or a newer run of the
// same key, means the run is over without its end. The follower then
// appends the run's terminal event (Ending.Frame), finishing the log; every
// other follower reads it on its next poll and ends too. What the run
// recorded stays, and so does what it stored of its answer.
//
// The grace is for a run that ends as it should: its lock is freed before
// its last events reach the store (the client must find the conversation
// free as soon as it has the end), so a free lock alone is not a dead run.
// A recorder writes its last batch within finishWait.

// Ending is how a follower ends the log of a run whose process is gone.
type Ending struct {
	// Free reports whether the lock of the run's conversation is free: no
	// live holder has it (a dead holder's lease ran out, or the lock was
	// released). It may take the lock and free it again.
	Free func(ctx context.Context) (bool, error)
	// Frame is the run's terminal event as its client would be sent it,
	// without the id line: RUN_ERROR, turn_stop error.
	Frame []byte
	// Quiet is how long the log may make no progress before the follower
	// asks about the lock, and about how often it asks again: the lock's
	// TTL.
	Quiet time.Duration
	// Grace is how long a free lock must stay free, the log unmoved,
	// before the follower ends the log; zero means DefaultGrace.
	Grace time.Duration

	asked  time.Time // when Free was last asked
	freeAt time.Time // when the lock was first seen free (zero: held)
	events int64     // the log's events then
}

// DefaultGrace is Ending.Grace's default: more than a recorder takes to
// store its last batch once its run freed the lock, on a store that keeps
// up.
const DefaultGrace = 3 * time.Second

// ErrRunInterrupted names the end of a run whose process is gone.
var ErrRunInterrupted = errors.New("the run was interrupted when its server stopped")

// check is called by a follower of log l, quiet since last: it ends the
// log when its run is over without its end. It reports whether it
// appended the terminal event (the follower reads the log again).
func (e *Ending) check(ctx context.Context, st store.RunLogStore, l *store.RunLog, last time.Time) (bool, error) {
	now := time.Now()
	if now.Sub(last) < e.Quiet || now.Sub(e.asked) < e.every() {
		return false, nil
	}
	e.asked = now
	if l.Events != e.events {
		e.freeAt = time.Time{}
	}
	newer := false
	if latest, err := st.LatestRunLog(ctx, l.Owner, l.Key); err == nil {
		newer = latest.ID != l.ID
	} else if !errors.Is(err, store.ErrNotFound) {
		return false, err
	}
	free := newer
	if !free {
		var err error
		if free, err = e.Free(ctx); err != nil {
			return false, err
		}
	}
	if !free {
		e.freeAt = time.Time{}
		return false, nil
	}
	if e.freeAt.IsZero() {
		e.freeAt, e.events = now, l.Events
	}
	if now.Sub(e.freeAt) < e.grace() {
		return false, nil
	}
	var b []byte
	b, _ = appendEvent(b, nil, e.Frame, 0)
	err := st.AppendRunLog(ctx, l.ID, store.RunLogBatch{First: l.Events + 1, Count: 1, Frames: b}, true)
	if errors.Is(err, store.ErrRunLogGap) {
		return true, nil // the run, or another follower, got there first
	}
	return err == nil, err
}

// every is how often the lock is asked about: a few times a Quiet, so
// that a follower learns of a dead run within about Quiet and Grace of
// the lock running out.
func (e *Ending) every() time.Duration {
	return max(e.Quiet/4, 100*time.Millisecond)
}

func (e *Ending) grace() time.Duration {
	if e.Grace > 0 {
		return e.Grace
	}
	return DefaultGrace
}

// EndsWith reports whether log l's last event is frame (without its id
// line): whether a follower ended it (Ending.Frame). A client that had
// events its dead run never got to store has ids past that end, or at
// it, and is sent the end again rather than nothing.
func EndsWith(ctx context.Context, st store.RunLogStore, l *store.RunLog, frame []byte) (bool, error) {
	if !l.Finished || l.Events == 0 {
		return false, nil
	}
	batches, err := st.ReadRunLog(ctx, l.ID, l.Events-1, len(frame)+64)
	if err != nil || len(batches) == 0 {
		return false, err
	}
	b := batches[len(batches)-1]
	if b.First+int64(b.Count)-1 != l.Events {
		return false, nil
	}
	rd := batchReader{batch: b.Frames}
	for {
		ok, err := rd.next()
		if err != nil {
			return false, err
		}
		if !ok {
			return string(rd.frame) == string(frame), nil
		}
	}
}
