package store

import (
	"context"
	"errors"
	"sync"
	"time"
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
	owner, id, holder string
	ttl               time.Duration
	done              chan pgLockResult // buffered: the group never waits for its caller
}

type pgLockResult struct {
	sess *Session
	hist []Entry
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

// LockLoadSession implements SessionLockLoader: the call joins the next
// group, whose one statement takes its lock, limited to owner's session,
// and reads the session and its history. A caller whose ctx is already
// done gets ctx's error; once queued, the group's answer is the caller's.
func (s *Postgres) LockLoadSession(ctx context.Context, owner, id, holder string, ttl time.Duration) (*Session, []Entry, bool, time.Duration, error) {
	if holder == "" {
		return nil, nil, false, 0, errors.New("store: lock needs a holder")
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, false, 0, err
	}
	if !pgStorable(owner, id) {
		return nil, nil, false, 0, ErrNotFound
	}
	call := &pgLockCall{owner: owner, id: id, holder: holder, ttl: ttl, done: make(chan pgLockResult, 1)}
	s.lockGroups.join(call, s.lockGroup)
	r := <-call.done
	return r.sess, r.hist, r.ok, r.left, r.err
}

// lockGroup answers each call of group. One call is LockLoadSession's own
// statement; more share one. A group statement that fails (a deadlock with
// another replica's group, say) is not retried as a group: each call then
// gets a statement of its own.
func (s *Postgres) lockGroup(group []*pgLockCall) {
	ctx, cancel := context.WithTimeout(context.Background(), pgGroupTimeout)
	defer cancel()
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
		r.sess, r.hist, r.ok, r.left, r.err = s.lockLoadOne(ctx, c.owner, c.id, c.holder, c.ttl)
		c.done <- r
	}
}

// lockLoadGroup takes the locks of group in one statement. A session
// named twice is locked for one of its callers; the others find it held.
// Calls whose lock was not taken (held, or no session of theirs) are
// answered from one more query.
func (s *Postgres) lockLoadGroup(ctx context.Context, group []*pgLockCall) ([]pgLockResult, error) {
	ids := make([]string, len(group))
	owners := make([]string, len(group))
	holders := make([]string, len(group))
	ttls := make([]int64, len(group))
	for i, c := range group {
		ids[i], owners[i], holders[i], ttls[i] = c.id, c.owner, c.holder, c.ttl.Microseconds()
	}
	rows, err := s.locks.Query(ctx,
		`WITH req AS (
			SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[]) AS r(id, owner, holder, ttl)),
		 l AS (
			UPDATE sessions s SET lock_holder = req.holder, lock_until = clock_timestamp() + req.ttl * interval '1 microsecond'
			FROM req
			WHERE s.id = req.id AND s.owner = req.owner
			  AND (s.lock_holder IS NULL OR s.lock_holder = req.holder OR s.lock_until <= clock_timestamp())
			RETURNING s.id, s.lock_holder, s.seq, s.created_at, s.data, s.history_len)
		 SELECT l.id, l.lock_holder, l.seq, l.created_at, l.data, l.history_len,
		        coalesce((SELECT array_agg(h.data ORDER BY h.position) FROM history h WHERE h.session_id = l.id), '{}')
		 FROM l`,
		ids, owners, holders, ttls)
	if err != nil {
		return nil, err
	}
	type won struct {
		sess *Session
		data string
		n    int
		hist []string
	}
	taken := map[string]won{} // by holder
	for rows.Next() {
		var id, holder string
		w := won{sess: &Session{}}
		if err := rows.Scan(&id, &holder, &w.sess.Seq, &w.sess.CreatedAt, &w.data, &w.n, &w.hist); err != nil {
			rows.Close()
			return nil, err
		}
		w.sess.ID = id
		taken[holder] = w
	}
	if err := rows.Err(); err != nil {
		return nil, err
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
		sess, entries, err := s.lockedSession(ctx, c.holder, w.sess, w.data, w.n, w.hist)
		results[i] = pgLockResult{sess: sess, hist: entries, ok: err == nil, err: err}
	}
	if len(missed) == 0 {
		return results, nil
	}
	missedIDs := make([]string, len(missed))
	for j, i := range missed {
		missedIDs[j] = group[i].id
	}
	type held struct {
		owner string
		left  *float64
	}
	found := map[string]held{}
	rows, err = s.locks.Query(ctx,
		`SELECT id, owner, extract(epoch FROM lock_until - clock_timestamp())::float8 FROM sessions WHERE id = ANY($1)`, missedIDs)
	if err != nil {
		s.unlockTaken(group, results)
		return nil, err
	}
	for rows.Next() {
		var id string
		var h held
		if err := rows.Scan(&id, &h.owner, &h.left); err != nil {
			rows.Close()
			s.unlockTaken(group, results)
			return nil, err
		}
		found[id] = h
	}
	if err := rows.Err(); err != nil {
		s.unlockTaken(group, results)
		return nil, err
	}
	for _, i := range missed {
		h, ok := found[group[i].id]
		if !ok || h.owner != group[i].owner {
			results[i] = pgLockResult{err: ErrNotFound}
			continue
		}
		results[i] = pgLockResult{left: pgLeft(h.left)}
	}
	return results, nil
}

// unlockTaken frees the locks a failed group took, before each call is
// sent again on its own.
func (s *Postgres) unlockTaken(group []*pgLockCall, results []pgLockResult) {
	for i, r := range results {
		if r.ok {
			_ = s.Unlock(context.Background(), group[i].id, group[i].holder)
		}
	}
}
