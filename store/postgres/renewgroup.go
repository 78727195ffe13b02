package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aapagui/aapagui/store/internal/rowscan"
)

// Lock renewals (a Lease's heartbeat) have a queue of their own: the
// renewals waiting when one is sent go in one statement (an UPDATE … FROM
// unnest(…) for sessions, and one for threads), on the lock pool, never
// behind a group of turn starts or a batch of writes. Thousands of
// streaming turns then cost a few statements per heartbeat period.

// pgRenewCall is one renewal waiting for its group; owner is set for a
// thread's lock, "" for a session's.
type pgRenewCall struct {
	thread            bool
	owner, id, holder string
	ttl               time.Duration
	done              chan pgRenewResult // buffered: the group never waits for its caller
}

type pgRenewResult struct {
	ok  bool
	err error
}

// RenewLock implements store.SessionLocker: the renewal joins the next
// renewal group.
func (s *Store) RenewLock(ctx context.Context, id, holder string, ttl time.Duration) (bool, error) {
	return s.renew(ctx, &pgRenewCall{id: id, holder: holder, ttl: ttl})
}

// RenewThreadLock implements store.ThreadLocker: the renewal joins the next
// renewal group.
func (s *Store) RenewThreadLock(ctx context.Context, owner, id, holder string, ttl time.Duration) (bool, error) {
	return s.renew(ctx, &pgRenewCall{thread: true, owner: owner, id: id, holder: holder, ttl: ttl})
}

func (s *Store) renew(ctx context.Context, c *pgRenewCall) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if !pgStorable(c.owner, c.id, c.holder) {
		return false, nil
	}
	c.done = make(chan pgRenewResult, 1)
	s.renewGroups.join(c, s.renewGroup)
	r := <-c.done
	return r.ok, r.err
}

// renewGroup answers each renewal of group: one statement for the
// sessions' locks and one for the threads'.
func (s *Store) renewGroup(group []*pgRenewCall) {
	ctx, cancel := context.WithTimeout(context.Background(), pgGroupTimeout)
	defer cancel()
	var sessions, threads []*pgRenewCall
	for _, c := range group {
		if c.thread {
			threads = append(threads, c)
		} else {
			sessions = append(sessions, c)
		}
	}
	for _, part := range []struct {
		calls []*pgRenewCall
		send  func(context.Context, []*pgRenewCall) (map[[3]string]bool, error)
	}{{sessions, s.renewSessions}, {threads, s.renewThreads}} {
		if len(part.calls) == 0 {
			continue
		}
		renewed, err := part.send(ctx, part.calls)
		for _, c := range part.calls {
			if err != nil {
				c.done <- pgRenewResult{err: fmt.Errorf("store: postgres: renew lock: %w", err)}
				continue
			}
			c.done <- pgRenewResult{ok: renewed[[3]string{c.owner, c.id, c.holder}]}
		}
	}
}

// renewSessions renews the sessions' locks of calls in one statement and
// returns those it renewed, by owner (""), id and holder: a lock is
// renewed, late or not, as long as it is still the holder's.
func (s *Store) renewSessions(ctx context.Context, calls []*pgRenewCall) (map[[3]string]bool, error) {
	ids, holders, ttls := renewArgs(calls)
	rows, err := s.locks.Query(ctx,
		`UPDATE sessions s SET lock_holder = r.holder, lock_until = clock_timestamp() + r.ttl * interval '1 microsecond'
		 FROM unnest($1::text[], $2::text[], $3::bigint[]) AS r(id, holder, ttl)
		 WHERE s.id = r.id AND s.lock_holder = r.holder
		 RETURNING '', s.id, s.lock_holder`,
		ids, holders, ttls)
	if err != nil {
		return nil, err
	}
	return renewed(rows)
}

// renewThreads renews the threads' locks of calls in one statement and
// returns those it renewed, by owner, id and holder. A lock row that is
// gone was released: it is not the holder's to renew.
func (s *Store) renewThreads(ctx context.Context, calls []*pgRenewCall) (map[[3]string]bool, error) {
	ids, holders, ttls := renewArgs(calls)
	owners := make([]string, len(calls))
	for i, c := range calls {
		owners[i] = c.owner
	}
	rows, err := s.locks.Query(ctx,
		`UPDATE thread_locks t SET holder = r.holder, until = clock_timestamp() + r.ttl * interval '1 microsecond'
		 FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[]) AS r(owner, id, holder, ttl)
		 WHERE t.owner = r.owner AND t.id = r.id AND t.holder = r.holder
		 RETURNING t.owner, t.id, t.holder`,
		owners, ids, holders, ttls)
	if err != nil {
		return nil, err
	}
	return renewed(rows)
}

func renewArgs(calls []*pgRenewCall) (ids, holders []string, ttls []int64) {
	ids, holders, ttls = make([]string, len(calls)), make([]string, len(calls)), make([]int64, len(calls))
	for i, c := range calls {
		ids[i], holders[i], ttls[i] = c.id, c.holder, c.ttl.Microseconds()
	}
	return ids, holders, ttls
}

func renewed(rows pgx.Rows) (map[[3]string]bool, error) {
	defer rows.Close()
	keys, err := rowscan.Collect(rows, "renew locks", func(scan rowscan.Scan) ([3]string, error) {
		var k [3]string
		err := scan(&k[0], &k[1], &k[2])
		return k, err
	})
	if err != nil {
		return nil, err
	}
	out := make(map[[3]string]bool, len(keys))
	for _, k := range keys {
		out[k] = true
	}
	return out, nil
}
