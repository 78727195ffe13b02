package postgres

import (
	"context"
	"sync"
	"time"

	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/store/internal/rowscan"
)

// Turn starts on PostgreSQL take their locks in groups, as the SQLite
// store commits its writes: the LockLoadSession calls waiting when a
// statement is sent go in one statement, an UPDATE … FROM unnest(…) that
// takes every free lock of the group and returns those sessions with their
// histories. A hundred turns starting at once then cost the database a few
// statements instead of a hundred, each queued for one of the lock pool's
// few connections.
const (
	// pgGroupMax is the most calls one group serves.
	pgGroupMax = 256
	// pgGroupTimeout bounds a group's statement, which serves many
	// callers and so is cancelled by none of them.
	pgGroupTimeout = 10 * time.Second
)

// pgLockCall is one LockLoadSession call waiting for its group.
type pgLockCall struct {
	ctx               context.Context // the caller's: done before its group is sent, nothing is locked
	owner, id, holder string
	known             int64 // the HistoryVersion of the caller's history of the session (0: none)
	ttl               time.Duration
	done              chan pgLockResult // buffered: the group never waits for its caller
}

type pgLockResult struct {
	sess *store.Session
	hist []store.Entry
	ok   bool
	left time.Duration
	err  error
}

// pgGroups queues calls of one kind and sends them in groups of up to
// pgGroupMax, with at most runners groups in flight (the rest of the
// pool is left to other statements). A call that arrives while a group is
// in flight waits for the next one, with every call that arrived meanwhile.
type pgGroups[C any] struct {
	mu      sync.Mutex
	queue   []C
	running int
	runners int
	shared  int // groups of more than one call sent so far (for tests)
}

// join queues c and, when fewer than runners are running, starts one that
// sends groups with send until the queue is empty.
func (g *pgGroups[C]) join(c C, send func([]C)) {
	g.mu.Lock()
	g.queue = append(g.queue, c)
	start := g.running < g.runners
	if start {
		g.running++
	}
	g.mu.Unlock()
	if start {
		go g.run(send)
	}
}

func (g *pgGroups[C]) run(send func([]C)) {
	for {
		g.mu.Lock()
		n := min(len(g.queue), pgGroupMax)
		if n == 0 {
			g.running--
			g.mu.Unlock()
			return
		}
		group := make([]C, n)
		copy(group, g.queue)
		clear(g.queue[:n])
		g.queue = append(g.queue[:0], g.queue[n:]...)
		if n > 1 {
			g.shared++
		}
		g.mu.Unlock()
		send(group)
	}
}

// lockGroup answers each call of group. One call is LockLoadSession's own
// statement; more share one. A group statement that fails (a deadlock with
// another replica's group, say) is not retried as a group: each call then
// gets a statement of its own.
//
// A call whose context ended while it waited (a turn start bounded by a
// deadline) is answered with its context's error and left out.
func (s *Store) lockGroup(group []*pgLockCall) {
	ctx, cancel := context.WithTimeout(context.Background(), pgGroupTimeout)
	defer cancel()
	live := make([]*pgLockCall, 0, len(group))
	for _, c := range group {
		if err := c.ctx.Err(); err != nil {
			c.done <- pgLockResult{err: err}
			continue
		}
		live = append(live, c)
	}
	group = live
	if len(group) > 1 {
		if results, err := s.lockLoadGroup(ctx, group); err == nil {
			for i, c := range group {
				c.done <- results[i]
			}
			return
		}
	}
	for _, c := range group {
		var r pgLockResult
		r.sess, r.hist, r.ok, r.left, r.err = s.lockLoadOne(ctx, c)
		c.done <- r
	}
}

// lockLoadGroup takes the locks of group in one statement. A session
// named twice is locked for one of its callers; the others find it held.
// Calls whose lock was not taken (held, or no session of theirs) are
// answered from one more query.
func (s *Store) lockLoadGroup(ctx context.Context, group []*pgLockCall) ([]pgLockResult, error) {
	ids := make([]string, len(group))
	owners := make([]string, len(group))
	holders := make([]string, len(group))
	ttls := make([]int64, len(group))
	known := make([]int64, len(group))
	for i, c := range group {
		ids[i], owners[i], holders[i], ttls[i], known[i] = c.id, c.owner, c.holder, c.ttl.Microseconds(), c.known
	}
	rows, err := s.locks.Query(ctx,
		`WITH req AS (
			SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[]) AS r(id, owner, holder, ttl, known)),
		 l AS (
			UPDATE sessions s SET lock_holder = req.holder, lock_until = clock_timestamp() + req.ttl * interval '1 microsecond'
			FROM req
			WHERE s.id = req.id AND s.owner = req.owner
			  AND (s.lock_holder IS NULL OR s.lock_holder = req.holder OR s.lock_until <= clock_timestamp())
			RETURNING s.id, s.lock_holder, s.seq, s.created_at, s.data, s.history_len, s.history_version, req.known)
		 SELECT l.id, l.lock_holder, l.seq, l.created_at, l.data, l.history_len, l.history_version,
		        `+pgSnapshotHistory+`
		 FROM l`,
		ids, owners, holders, ttls, known)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	won, err := rowscan.Collect(rows, "lock group", func(scan rowscan.Scan) (lockedRow, error) {
		w := lockedRow{sess: &store.Session{}}
		err := scan(&w.sess.ID, &w.holder, &w.sess.Seq, &w.sess.CreatedAt, &w.data, &w.n, &w.sess.HistoryVersion, &w.snap.version, &w.snap.hist)
		return w, err
	})
	if err != nil {
		return nil, err
	}
	rows.Close()
	taken := make(map[string]lockedRow, len(won)) // by holder
	for _, w := range won {
		taken[w.holder] = w
	}

	results := make([]pgLockResult, len(group))
	var missed []int
	for i, c := range group {
		w, ok := taken[c.holder]
		if !ok || w.sess.ID != c.id {
			missed = append(missed, i)
			continue
		}
		w.sess.Owner = c.owner
		sess, entries, err := s.lockedSession(ctx, c, w.sess, w.data, w.n, w.snap)
		results[i] = pgLockResult{sess: sess, hist: entries, ok: err == nil, err: err}
	}
	if len(missed) == 0 {
		return results, nil
	}
	found, err := s.heldLocks(ctx, group, missed)
	if err != nil {
		s.unlockTaken(group, results)
		return nil, err
	}
	for _, i := range missed {
		h, ok := found[group[i].id]
		if !ok || h.owner != group[i].owner {
			results[i] = pgLockResult{err: store.ErrNotFound}
			continue
		}
		results[i] = pgLockResult{left: pgLeft(h.left)}
	}
	return results, nil
}

// lockedRow is a session whose lock a group statement took, for holder,
// with the history that statement read (n is the row's history_len).
type lockedRow struct {
	sess   *store.Session
	holder string
	data   string
	n      int
	snap   pgSnapshot
}

// heldLock is the owner of a session whose lock a group did not take, and
// the time its lock has left (nil: none).
type heldLock struct {
	owner string
	left  *float64
}

// heldLocks reads, by session id, the sessions of the calls of group at
// missed, whose locks the group statement did not take.
func (s *Store) heldLocks(ctx context.Context, group []*pgLockCall, missed []int) (map[string]heldLock, error) {
	missedIDs := make([]string, len(missed))
	for j, i := range missed {
		missedIDs[j] = group[i].id
	}
	rows, err := s.locks.Query(ctx,
		`SELECT id, owner, extract(epoch FROM lock_until - clock_timestamp())::float8 FROM sessions WHERE id = ANY($1)`, missedIDs)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	type row struct {
		id string
		heldLock
	}
	held, err := rowscan.Collect(rows, "lock group", func(scan rowscan.Scan) (row, error) {
		var r row
		err := scan(&r.id, &r.owner, &r.left)
		return r, err
	})
	if err != nil {
		return nil, err
	}
	found := make(map[string]heldLock, len(held))
	for _, r := range held {
		found[r.id] = r.heldLock
	}
	return found, nil
}

// unlockTaken frees the locks a failed group took, before each call is
// sent again on its own.
func (s *Store) unlockTaken(group []*pgLockCall, results []pgLockResult) {
	for i, r := range results {
		if r.ok {
			_ = s.Unlock(context.Background(), group[i].id, group[i].holder)
		}
	}
}
