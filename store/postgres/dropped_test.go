package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/internal/testkit/pgtest"
	"github.com/aapagui/aapagui/store"
)

// When PostgreSQL drops every connection (a restart, a failover, a proxy
// that closes idle connections), the calls on a dropped connection fail,
// and the store works again on fresh ones: no queue of locks or writes is
// left stuck, and nothing is stored twice.
func TestPostgresSurvivesDroppedConnections(t *testing.T) {
	ctx := context.Background()
	var b [6]byte
	_, _ = rand.Read(b[:])
	app := "aapagui_dropped_" + hex.EncodeToString(b[:])
	dsn := pgtest.WithParam(pgtest.Schema(t), "application_name", app)
	s := openPG(t, dsn)
	const n = 20
	turn := func(id, text string) error {
		sess, _, ok, _, err := s.LockLoadSession(ctx, "alice", id, "h-"+text, 0, time.Minute)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%s: lock held", id)
		}
		if err := s.SaveSession(ctx, sess, userEntries(text), "h-"+text); err != nil {
			_ = s.Unlock(ctx, id, "h-"+text) // as Lease.ReleaseWith does
			return err
		}
		return nil
	}
	for i := range n {
		id := fmt.Sprint("s", i)
		require.NoError(t, s.CreateSession(ctx, &store.Session{ID: id, Owner: "alice"}, nil, 0))
		require.NoError(t, turn(id, id+"-before"))
	}

	admin, err := pgx.Connect(ctx, pgtest.DSN(t))
	require.NoError(t, err)
	defer admin.Close(ctx)
	var dropped int
	require.NoError(t, admin.QueryRow(ctx,
		`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&dropped))
	require.Positive(t, dropped, "no connection of the store's was dropped")

	// Every session takes a turn; a call that fails on a dropped
	// connection is tried again, a few times at most.
	var wg sync.WaitGroup
	failures := make([]int, n)
	for i := range n {
		wg.Go(func() {
			id := fmt.Sprint("s", i)
			for attempt := range 5 {
				err := turn(id, fmt.Sprintf("%s-after-%d", id, attempt))
				if err == nil {
					return
				}
				failures[i]++
			}
			t.Errorf("%s: no turn succeeded after the connections were dropped", id)
		})
	}
	wg.Wait()
	total := 0
	for i := range n {
		id := fmt.Sprint("s", i)
		total += failures[i]
		_, hist, err := s.loadSession(ctx, "alice", id)
		require.NoError(t, err)
		// A failed attempt stored nothing.
		want := []string{id + "-before", fmt.Sprintf("%s-after-%d", id, failures[i])}
		assert.Equal(t, entryTexts(t, userEntries(want...)), entryTexts(t, hist), id)
	}
	t.Logf("%d connections dropped; %d calls failed on them", dropped, total)
}
