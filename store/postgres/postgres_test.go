package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/internal/testkit/pgtest"
	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/store/postgres"
	"github.com/aapagui/aapagui/store/storetest"
)

func TestPostgres(t *testing.T) {
	storetest.Run(t, openPostgres)
}

// openPostgres opens a store in a schema of its own in the test database.
func openPostgres(t *testing.T) store.Store {
	t.Helper()
	s, err := postgres.Open(context.Background(), pgtest.Schema(t))
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, s.Close()) })
	return s
}

func openPostgresDSN(t *testing.T, dsn string) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(context.Background(), dsn)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, s.Close()) })
	return s
}

// Two pools on one database are two replicas.
func TestPostgresTwoReplicas(t *testing.T) {
	dsn := pgtest.Schema(t)
	storetest.TwoReplicas(t, openPostgresDSN(t, dsn), openPostgresDSN(t, dsn))
}

// Replicas starting at once on an empty database apply the schema once
// (under an advisory lock) and all start.
func TestPostgresConcurrentMigrations(t *testing.T) {
	dsn := pgtest.Schema(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			s, err := postgres.Open(context.Background(), dsn)
			if err == nil {
				err = s.Close()
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	var version, rows int
	conn := rawPG(t, dsn)
	require.NoError(t, conn.QueryRow(context.Background(), `SELECT max(version), count(*) FROM aapagui_schema`).Scan(&version, &rows))
	assert.Equal(t, 8, version)
	assert.Equal(t, 1, rows)
}

// A database of the schema before history versions (1) opens migrated:
// its sessions at version 0, the next write counted.
func TestPostgresMigratesHistoryVersion(t *testing.T) {
	ctx := context.Background()
	s, _ := pgMigrated(t, pgBeforeRecords+`DROP TABLE run_log_batches, run_logs;
		DROP TRIGGER sessions_history_written ON sessions; DROP FUNCTION aapagui_history_written();
		ALTER TABLE sessions DROP COLUMN history_version; UPDATE aapagui_schema SET version = 1`, func(t *testing.T, s store.Store) {
		require.NoError(t, s.CreateSession(ctx, &store.Session{ID: "s1", Owner: "alice"}, storetest.Users("u1"), 0))
	})
	got, err := s.GetSession(ctx, "alice", "s1")
	require.NoError(t, err)
	assert.Zero(t, got.HistoryVersion)
	assert.Equal(t, storetest.Users("u1"), storetest.History(t, s, "s1"))
	require.NoError(t, s.AppendHistory(ctx, "s1", storetest.Users("u2")))
	got, err = s.GetSession(ctx, "alice", "s1")
	require.NoError(t, err)
	assert.Equal(t, int64(1), got.HistoryVersion, "counted once: by the write, not again by the trigger")
}

// A database of the schema before run logs (2) opens migrated: its
// sessions are there, and it keeps run logs.
func TestPostgresMigratesRunLogs(t *testing.T) {
	ctx := context.Background()
	s, _ := pgMigrated(t, pgBeforeRecords+`DROP TABLE run_log_batches, run_logs; UPDATE aapagui_schema SET version = 2`, func(t *testing.T, s store.Store) {
		require.NoError(t, s.CreateSession(ctx, &store.Session{ID: "s1", Owner: "alice"}, storetest.Users("u1"), 0))
	})
	assert.Equal(t, storetest.Users("u1"), storetest.History(t, s, "s1"))
	storetest.StartLog(t, s, "L1", "alice", "session/s1", time.Time{})
	require.NoError(t, s.AppendRunLog(ctx, "L1", storetest.Batch(1, 2), true))
	got, err := s.ReadRunLog(ctx, "L1", 0, 1<<20)
	require.NoError(t, err)
	assert.Equal(t, []store.RunLogBatch{storetest.Batch(1, 2)}, got)
}

// A run log's batches and its row go together: a log dropped by the
// start of a later run, or by DeleteRunLogs, leaves no batch behind.
func TestPostgresRunLogBatchesGoWithTheirLog(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Schema(t)
	s := openPostgresDSN(t, dsn)
	for _, id := range []string{"r1", "r2", "r3"} {
		storetest.StartLog(t, s, id, "alice", "session/s1", time.Time{})
		require.NoError(t, s.AppendRunLog(ctx, id, storetest.Batch(1, 3), true))
	}
	conn := rawPG(t, dsn)
	count := func() (logs, batches int) {
		t.Helper()
		require.NoError(t, conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM run_logs), (SELECT count(*) FROM run_log_batches)`).Scan(&logs, &batches))
		return logs, batches
	}
	logs, batches := count()
	assert.Equal(t, []int{2, 2}, []int{logs, batches}, "r1 dropped with its batch")
	require.NoError(t, s.DeleteRunLogs(ctx, "alice", "session/s1"))
	logs, batches = count()
	assert.Equal(t, []int{0, 0}, []int{logs, batches})
}

// pgBeforeParts takes a database back to schema 7, before the long texts'
// parts.
const pgBeforeParts = `DROP TRIGGER threads_parts_deleted ON threads; DROP FUNCTION aapagui_thread_deleted();
	DROP TABLE history_parts, record_parts; UPDATE aapagui_schema SET version = 7;`

// pgBeforeDelivered takes a database back to the schema before the
// delivered ids' rows (6), the ids back in their threads' rows.
const pgBeforeDelivered = pgBeforeParts + `DROP TRIGGER threads_delivered ON threads; DROP FUNCTION aapagui_thread_written(); DROP FUNCTION aapagui_thread_delivered(text, text);
	UPDATE threads SET data = jsonb_set(data::jsonb, '{delivered}', (SELECT coalesce(jsonb_agg(convert_from(message_id, 'UTF8') ORDER BY position), '[]')
		FROM thread_delivered d WHERE d.owner = threads.owner AND d.id = threads.id))::text;
	DROP TABLE thread_delivered; ALTER TABLE threads DROP COLUMN delivered_len; UPDATE aapagui_schema SET version = 6;`

// A database of the schema before the delivered ids' rows (6) opens
// migrated: its threads have their ids, and a save adds to them. A
// replica of the earlier build, running all along, that saves a thread
// with its ids in its row has them moved to the rows; and it cannot read
// a thread this build saved, rather than read it without ids.
func TestPostgresMigratesDelivered(t *testing.T) {
	ctx := context.Background()
	s, conn := pgMigrated(t, pgBeforeDelivered, storetest.FillDelivered)
	storetest.DeliveredMigrated(t, s, func() string {
		var data string
		require.NoError(t, conn.QueryRow(ctx, `SELECT data FROM threads WHERE id = 't'`).Scan(&data))
		return data
	}, func() {
		_, err := conn.Exec(ctx, `UPDATE threads SET data = jsonb_set(data::jsonb, '{delivered}', '["o1","o2"]')::text WHERE id = 't'`)
		require.NoError(t, err)
	})
}

// pgBeforeStopping takes a database back to the schema before run logs'
// stop marks (5).
const pgBeforeStopping = pgBeforeDelivered + `DROP INDEX run_logs_stopping; ALTER TABLE run_logs DROP COLUMN stopping; UPDATE aapagui_schema SET version = 5;`

// A database of the schema before run logs' stop marks (5) opens migrated:
// its running log can be asked to stop, and its finished one cannot.
func TestPostgresMigratesRunLogStopping(t *testing.T) {
	s, _ := pgMigrated(t, pgBeforeStopping, storetest.StopMarksMigration.Fill)
	storetest.StopMarksMigration.Check(t, s)
}

// pgBeforeRunLogInput takes a database back to the schema before run
// logs' input (4).
const pgBeforeRunLogInput = pgBeforeStopping + `ALTER TABLE run_logs DROP COLUMN input; UPDATE aapagui_schema SET version = 4;`

// A database of the schema before run logs' input (4) opens migrated: its
// logs are there without an Input, and new logs keep theirs.
func TestPostgresMigratesRunLogInput(t *testing.T) {
	s, _ := pgMigrated(t, pgBeforeRunLogInput, storetest.RunLogInputMigration.Fill)
	storetest.RunLogInputMigration.Check(t, s)
}

// pgBeforeRecords takes a database back to the schema before thread
// records (3).
const pgBeforeRecords = pgBeforeRunLogInput + `DROP TABLE thread_records; ALTER TABLE threads DROP COLUMN record_len; UPDATE aapagui_schema SET version = 3;`

// A database of the schema before thread records (3) opens migrated: its
// threads are there with empty records, which saves then write.
func TestPostgresMigratesThreadRecords(t *testing.T) {
	s, _ := pgMigrated(t, pgBeforeRecords, storetest.ThreadRecordsMigration.Fill)
	storetest.ThreadRecordsMigration.Check(t, s)
}

// A thread's record and its row go together: DeleteThread leaves no
// message behind, and a save's record_len is the count of its messages.
func TestPostgresThreadRecordGoesWithItsThread(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Schema(t)
	s := openPostgresDSN(t, dsn)
	for _, owner := range []string{"k1", "k2"} {
		th := &store.Thread{Owner: owner, ID: "t", RecordTail: &store.RecordTail{Messages: storetest.RecordMessages("m1", "m2", "m3")}}
		require.NoError(t, s.SaveThread(ctx, th, ""))
		th.RecordTail = &store.RecordTail{From: 1, Messages: storetest.RecordMessages("x2")}
		require.NoError(t, s.SaveThread(ctx, th, ""))
	}
	conn := rawPG(t, dsn)
	count := func() (messages, counted int) {
		t.Helper()
		require.NoError(t, conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM thread_records), (SELECT sum(record_len) FROM threads)`).Scan(&messages, &counted))
		return messages, counted
	}
	messages, counted := count()
	assert.Equal(t, []int{4, 4}, []int{messages, counted})
	require.NoError(t, s.DeleteThread(ctx, "k1", "t"))
	messages, counted = count()
	assert.Equal(t, []int{2, 2}, []int{messages, counted}, "k1's messages deleted with its thread")
}

// Thread saves sent in one batch: one whose tail leaves a gap saves
// nothing and rolls nothing back, the others are stored.
func TestPostgresRecordGapsInABatch(t *testing.T) {
	ctx := context.Background()
	s := openPostgresDSN(t, pgtest.Schema(t))
	var wg sync.WaitGroup
	errs := make([]error, 40)
	for i := range 40 {
		wg.Go(func() {
			from := 0
			if i%4 == 1 {
				from = 1 // past the end of a new thread's record
			}
			th := &store.Thread{Owner: "k", ID: fmt.Sprint("t", i), RecordTail: &store.RecordTail{From: from, Messages: storetest.RecordMessages("m")}}
			errs[i] = s.SaveThread(ctx, th, "")
		})
	}
	wg.Wait()
	for i, err := range errs {
		_, gerr := s.GetThread(ctx, "k", fmt.Sprint("t", i))
		rec, rerr := s.ThreadRecord(ctx, "k", fmt.Sprint("t", i))
		if i%4 == 1 {
			assert.ErrorIs(t, err, store.ErrRecordGap, "save %d", i)
			assert.ErrorIs(t, gerr, store.ErrNotFound, "save %d: no thread", i)
			assert.ErrorIs(t, rerr, store.ErrNotFound, "save %d: no record", i)
			continue
		}
		assert.NoError(t, err, "save %d", i)
		assert.NoError(t, gerr, "save %d", i)
		assert.Equal(t, storetest.RecordMessages("m"), rec, "save %d", i)
	}
}

func TestPostgresRefusesNewerSchema(t *testing.T) {
	dsn := pgtest.Schema(t)
	openPostgresDSN(t, dsn)
	_, err := rawPG(t, dsn).Exec(context.Background(), `UPDATE aapagui_schema SET version = 99`)
	require.NoError(t, err)
	_, err = postgres.Open(context.Background(), dsn)
	require.ErrorContains(t, err, "schema version 99 is newer")
}

func TestPostgresOpenErrors(t *testing.T) {
	dsn := pgtest.DSN(t)
	t.Run("a DSN that does not parse hides its password", func(t *testing.T) {
		_, err := store.Open("postgres://u:hunter2@host:notaport/db")
		require.Error(t, err)
		assert.NotContains(t, err.Error(), "hunter2")
	})
	t.Run("a database that does not exist", func(t *testing.T) {
		bad := strings.Replace(dsn, "/aapagui", "/no_such_db", 1)
		if bad == dsn {
			t.Skip("the test DSN does not name the aapagui database")
		}
		_, err := store.Open(bad)
		require.ErrorContains(t, err, "no_such_db")
	})
	t.Run("ping", func(t *testing.T) {
		s := openPostgresDSN(t, pgtest.Schema(t))
		require.NoError(t, s.Ping(context.Background()))
	})
}

// pgMigrated is the store of a database that held what fill stored,
// taken back to an earlier schema by before (SQL), then opened again (and
// so migrated); conn is the database connected directly.
func pgMigrated(t *testing.T, before string, fill func(t *testing.T, s store.Store)) (*postgres.Store, *pgx.Conn) {
	t.Helper()
	dsn := pgtest.Schema(t)
	s, err := postgres.Open(context.Background(), dsn)
	require.NoError(t, err)
	fill(t, s)
	require.NoError(t, s.Close())
	conn := rawPG(t, dsn)
	_, err = conn.Exec(context.Background(), before)
	require.NoError(t, err)
	return openPostgresDSN(t, dsn), conn
}

// rawPG connects to the test database directly, bypassing the store.
func rawPG(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

// A turn whose statement began while the session was free, and reached
// its row only after another holder had taken the lock, appended and
// released, reads the history with that append: the statement's snapshot
// predates the append, the row's count after the wait does not. Here the
// other holder's lock, append and release are one open transaction.
func TestPostgresLockLoadSeesTheLastAppend(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Schema(t)
	s := openPostgresDSN(t, dsn)
	require.NoError(t, s.CreateSession(ctx, &store.Session{ID: "s1", Owner: "alice"}, storetest.Users("u1"), 0))
	commit := postgres.AppendInOpenTx(t, dsn, "s1")

	type result struct {
		hist []store.Entry
		ok   bool
		err  error
	}
	done := make(chan result, 1)
	go func() {
		_, hist, ok, _, err := s.LockLoadSession(ctx, "alice", "s1", "next", 0, time.Minute)
		done <- result{hist, ok, err}
	}()
	postgres.WaitForRowLock(t, dsn, "lock_holder = $3")
	commit()

	r := <-done
	require.NoError(t, r.err)
	require.True(t, r.ok, "the lock is free")
	assert.Equal(t, storetest.Users("u1", "u1"), r.hist, "the append committed during the wait is read")
}

// A history rewritten to the same length while a turn start waits for the
// session's row is read as rewritten: the statement's snapshot is older
// than the row, which its history version tells (its length could not).
// The rewrite is made as a replica of an earlier build makes it, without
// the version, which the store's trigger counts all the same.
func TestPostgresLockLoadAfterARewrite(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Schema(t)
	s := openPostgresDSN(t, dsn)
	require.NoError(t, s.CreateSession(ctx, &store.Session{ID: "s1", Owner: "alice"}, storetest.Users("u1"), 0))
	require.NoError(t, s.AppendHistory(ctx, "s1", storetest.Users("u2")))
	before, err := s.GetSession(ctx, "alice", "s1")
	require.NoError(t, err)
	require.Equal(t, int64(2), before.HistoryVersion, "created, then one write")
	commit := postgres.RewriteInOpenTx(t, dsn, "s1")

	type result struct {
		sess *store.Session
		hist []store.Entry
		err  error
	}
	done := make(chan result, 1)
	go func() {
		sess, hist, _, _, err := s.LockLoadSession(ctx, "alice", "s1", "next", before.HistoryVersion, time.Minute)
		done <- result{sess, hist, err}
	}()
	postgres.WaitForRowLock(t, dsn, "lock_holder = $3")
	commit()

	r := <-done
	require.NoError(t, r.err)
	assert.Equal(t, before.HistoryVersion+1, r.sess.HistoryVersion, "the earlier build's write is counted")
	assert.Equal(t, storetest.Users("u2", "u2"), r.hist, "the rewrite committed during the wait is read, though the caller knew the history before it")
}
