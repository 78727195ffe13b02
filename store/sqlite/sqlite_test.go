package sqlite_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/store/sqlite"
	"github.com/aapagui/aapagui/store/storetest"
)

func TestSQLite(t *testing.T) {
	storetest.Run(t, openSQLite)
}

// openSQLite opens a store in a new file of the test's temp dir.
func openSQLite(t *testing.T) store.Store {
	t.Helper()
	s, err := sqlite.Open(filepath.Join(t.TempDir(), "store.db"))
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, s.Close()) })
	return s
}

func TestThreadsSurviveReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "threads.db")
	s, err := sqlite.Open(path)
	require.NoError(t, err)
	require.NoError(t, s.SaveThread(ctx, &store.Thread{Owner: "k", ID: "t", SessionID: "sess", Delivered: []string{"a", "b"}}, ""))
	require.NoError(t, s.Close())
	s, err = sqlite.Open(path)
	require.NoError(t, err)
	defer s.Close()
	got, err := s.GetThread(ctx, "k", "t")
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, got.Delivered)
}

func openFile(t *testing.T, path string) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, s.Close()) })
	return s
}

// migrated is the store of a file that held what fill stored, taken back
// to an earlier schema by before (SQL), then opened again (and so
// migrated); db is the file opened directly.
func migrated(t *testing.T, before string, fill func(t *testing.T, s store.Store)) (*sqlite.Store, *sql.DB) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "store.db")
	s, err := sqlite.Open(path)
	require.NoError(t, err)
	fill(t, s)
	require.NoError(t, s.Close())
	db := rawDB(t, path)
	_, err = db.Exec(before)
	require.NoError(t, err)
	return openFile(t, path), db
}

// rawDB opens the file directly, bypassing the store.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)")
	require.NoError(t, err)
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func TestSQLitePersistsAcrossReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "store.db")
	created := time.Date(2026, 7, 1, 12, 0, 0, 987654321, time.UTC)

	s, err := sqlite.Open(path)
	require.NoError(t, err)
	first := storetest.RichSession("s1", "alice", created)
	require.NoError(t, s.CreateSession(ctx, first, storetest.AllMessages()[:2], 0))
	require.NoError(t, s.AppendHistory(ctx, "s1", storetest.AllMessages()[2:]))
	second := storetest.Session("s2", "alice")
	require.NoError(t, s.CreateSession(ctx, second, nil, 0))
	ok, _, err := s.Lock(ctx, "s1", "replica-a", time.Hour)
	require.NoError(t, err)
	require.True(t, ok)
	wantSess, err := s.GetSession(ctx, "alice", "s1")
	require.NoError(t, err)
	require.NoError(t, s.Close())

	s = openFile(t, path)
	got, err := s.GetSession(ctx, "alice", "s1")
	require.NoError(t, err)
	assert.Equal(t, wantSess, got)
	assert.True(t, got.CreatedAt.Equal(created.Truncate(time.Millisecond)))
	assert.Equal(t, `{"z":[1,2],"a":"<b>&"}`, string(got.State))
	assert.Equal(t, []types.Interrupt{
		{ID: "int-1", Reason: "tool_call", Message: "May I?", ToolCallID: "call-1",
			ResponseSchema: map[string]any{"type": "object"}, ExpiresAt: "2026-07-01T15:00:00Z",
			Metadata: map[string]any{"k": "v", "n": 1.5}},
		{ID: "int-2", Reason: "input"},
	}, got.Interrupts)
	assert.Equal(t, storetest.AllMessages(), storetest.History(t, s, "s1"), "history with its AG-UI ids")

	list, err := s.ListSessions(ctx, "alice", 0, 10)
	require.NoError(t, err)
	assert.Equal(t, []string{"s1", "s2"}, storetest.IDs(list))

	ok, _, err = s.Lock(ctx, "s1", "replica-b", time.Hour)
	require.NoError(t, err)
	assert.False(t, ok, "the lock survives a restart")
	ok, _, err = s.Lock(ctx, "s1", "replica-a", time.Hour)
	require.NoError(t, err)
	assert.True(t, ok, "and its holder still has it")

	third := storetest.Session("s3", "alice")
	require.NoError(t, s.CreateSession(ctx, third, nil, 0))
	assert.Greater(t, third.Seq, second.Seq, "Seq keeps growing after a reopen")
}

func TestSQLiteFileSettings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	openFile(t, path)
	db := rawDB(t, path)
	var mode string
	require.NoError(t, db.QueryRow(`PRAGMA journal_mode`).Scan(&mode))
	assert.Equal(t, "wal", mode)
	var version int
	require.NoError(t, db.QueryRow(`PRAGMA user_version`).Scan(&version))
	assert.Equal(t, 9, version)
}

// beforeDelivered takes a file back to the schema before the delivered
// ids' rows (7), the ids back in their threads' rows.
const beforeDelivered = `DROP TRIGGER threads_delivered_inserted; DROP TRIGGER threads_delivered_updated;
	UPDATE threads SET data = json_set(data, '$.delivered',
		json((SELECT json_group_array(message_id ORDER BY position) FROM thread_delivered d WHERE d.owner = threads.owner AND d.id = threads.id)));
	DROP TABLE thread_delivered; ALTER TABLE threads DROP COLUMN delivered_len; PRAGMA user_version = 7;`

// A file of the schema before the delivered ids' rows (7) opens migrated:
// its threads have their ids, and a save adds to them. A process of the
// earlier build, open on the file all along, that saves a thread with its
// ids in its row has them moved to the rows; and it cannot read a thread
// this build saved, rather than read it without ids.
func TestSQLiteMigratesDelivered(t *testing.T) {
	s, db := migrated(t, beforeDelivered, storetest.FillDelivered)
	storetest.DeliveredMigrated(t, s, func() string {
		var data string
		require.NoError(t, db.QueryRow(`SELECT data FROM threads WHERE id = 't'`).Scan(&data))
		return data
	}, func() {
		_, err := db.Exec(`UPDATE threads SET data = json_set(data, '$.delivered', json('["o1","o2"]')) WHERE id = 't'`)
		require.NoError(t, err)
	})
}

// beforeStopping takes a file back to the schema before run logs' stop
// marks (6).
const beforeStopping = beforeDelivered + `DROP INDEX run_logs_stopping; ALTER TABLE run_logs DROP COLUMN stopping; PRAGMA user_version = 6;`

// A file of the schema before run logs' stop marks (6) opens migrated: its
// running log can be asked to stop, and its finished one cannot.
func TestSQLiteMigratesRunLogStopping(t *testing.T) {
	s, _ := migrated(t, beforeStopping, storetest.StopMarksMigration.Fill)
	storetest.StopMarksMigration.Check(t, s)
}

// beforeRunLogInput takes a file back to the schema before run logs' input
// (5).
const beforeRunLogInput = beforeStopping + `ALTER TABLE run_logs DROP COLUMN input; PRAGMA user_version = 5;`

// A file of the schema before run logs' input (5) opens migrated: its logs
// are there without an Input, and new logs keep theirs.
func TestSQLiteMigratesRunLogInput(t *testing.T) {
	s, _ := migrated(t, beforeRunLogInput, storetest.RunLogInputMigration.Fill)
	storetest.RunLogInputMigration.Check(t, s)
}

// beforeRecords takes a file back to the schema before thread records (4).
const beforeRecords = beforeRunLogInput + `DROP TABLE thread_records; ALTER TABLE threads DROP COLUMN record_len; PRAGMA user_version = 4;`

// A file of the schema before thread records (4) opens migrated: its
// threads are there with empty records, which saves then write.
func TestSQLiteMigratesThreadRecords(t *testing.T) {
	s, _ := migrated(t, beforeRecords, storetest.ThreadRecordsMigration.Fill)
	storetest.ThreadRecordsMigration.Check(t, s)
}

// A thread's record and its row go together: DeleteThread leaves no
// message behind, and a save's record_len is the count of its messages.
func TestSQLiteThreadRecordGoesWithItsThread(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "store.db")
	s := openFile(t, path)
	for _, owner := range []string{"k1", "k2"} {
		th := &store.Thread{Owner: owner, ID: "t", RecordTail: &store.RecordTail{Messages: storetest.RecordMessages("m1", "m2", "m3")}}
		require.NoError(t, s.SaveThread(ctx, th, ""))
		th.RecordTail = &store.RecordTail{From: 1, Messages: storetest.RecordMessages("x2")}
		require.NoError(t, s.SaveThread(ctx, th, ""))
	}
	db := rawDB(t, path)
	count := func() (messages, counted int) {
		t.Helper()
		require.NoError(t, db.QueryRow(`SELECT (SELECT count(*) FROM thread_records), (SELECT sum(record_len) FROM threads)`).Scan(&messages, &counted))
		return messages, counted
	}
	messages, counted := count()
	assert.Equal(t, []int{4, 4}, []int{messages, counted})
	require.NoError(t, s.DeleteThread(ctx, "k1", "t"))
	messages, counted = count()
	assert.Equal(t, []int{2, 2}, []int{messages, counted}, "k1's messages deleted with its thread")
}

// A file of the schema before run logs (3) opens migrated: its sessions
// are there, and it keeps run logs.
func TestSQLiteMigratesRunLogs(t *testing.T) {
	ctx := context.Background()
	s, _ := migrated(t, beforeRecords+`DROP TABLE run_log_batches; DROP TABLE run_logs; PRAGMA user_version = 3`, func(t *testing.T, s store.Store) {
		require.NoError(t, s.CreateSession(ctx, storetest.Session("s1", "alice"), storetest.Users("1"), 0))
	})
	assert.Equal(t, storetest.Users("1"), storetest.History(t, s, "s1"))
	storetest.StartLog(t, s, "L1", "alice", "session/s1", time.Time{})
	require.NoError(t, s.AppendRunLog(ctx, "L1", storetest.Batch(1, 2), true))
	got, err := s.ReadRunLog(ctx, "L1", 0, 1<<20)
	require.NoError(t, err)
	assert.Equal(t, []store.RunLogBatch{storetest.Batch(1, 2)}, got)
}

// A run log's batches and its row go together: a log dropped by the
// start of a later run, or by DeleteRunLogs, leaves no batch behind.
func TestSQLiteRunLogBatchesGoWithTheirLog(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "store.db")
	s := openFile(t, path)
	for _, id := range []string{"r1", "r2", "r3"} {
		storetest.StartLog(t, s, id, "alice", "session/s1", time.Time{})
		require.NoError(t, s.AppendRunLog(ctx, id, storetest.Batch(1, 3), true))
	}
	db := rawDB(t, path)
	count := func() (logs, batches int) {
		t.Helper()
		require.NoError(t, db.QueryRow(`SELECT (SELECT count(*) FROM run_logs), (SELECT count(*) FROM run_log_batches)`).Scan(&logs, &batches))
		return logs, batches
	}
	logs, batches := count()
	assert.Equal(t, []int{2, 2}, []int{logs, batches}, "r1 dropped with its batch")
	require.NoError(t, s.DeleteRunLogs(ctx, "alice", "session/s1"))
	logs, batches = count()
	assert.Equal(t, []int{0, 0}, []int{logs, batches})
}

// A file of the schema before history versions (2) opens migrated: its
// sessions and histories are there, at version 0, and the next write
// counts.
func TestSQLiteMigratesHistoryVersion(t *testing.T) {
	ctx := context.Background()
	s, _ := migrated(t, beforeRecords+`ALTER TABLE sessions DROP COLUMN history_version; PRAGMA user_version = 2`, func(t *testing.T, s store.Store) {
		require.NoError(t, s.CreateSession(ctx, storetest.Session("s1", "alice"), storetest.Users("1", "2"), 0))
	})
	got, err := s.GetSession(ctx, "alice", "s1")
	require.NoError(t, err)
	assert.Zero(t, got.HistoryVersion)
	assert.Len(t, storetest.History(t, s, "s1"), 2)
	require.NoError(t, s.AppendHistory(ctx, "s1", storetest.Users("3")))
	got, err = s.GetSession(ctx, "alice", "s1")
	require.NoError(t, err)
	assert.Equal(t, int64(1), got.HistoryVersion)
}

func TestSQLiteTwoReplicas(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	storetest.TwoReplicas(t, openFile(t, path), openFile(t, path))
}

func TestSQLiteWaitsForAnotherWriter(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "store.db")
	s := openFile(t, path)
	require.NoError(t, s.CreateSession(ctx, storetest.Session("s1", ""), nil, 0))

	// Another process holds the write lock for a while.
	conn, err := rawDB(t, path).Conn(ctx)
	require.NoError(t, err)
	defer func() { _ = conn.Close() }()
	_, err = conn.ExecContext(ctx, `BEGIN IMMEDIATE`)
	require.NoError(t, err)
	released := make(chan struct{})
	go func() {
		time.Sleep(300 * time.Millisecond)
		_, err := conn.ExecContext(ctx, `COMMIT`)
		assert.NoError(t, err)
		close(released)
	}()

	start := time.Now()
	require.NoError(t, s.AppendHistory(ctx, "s1", storetest.Users("a")), "a write waits (busy_timeout) instead of failing")
	ok, _, err := s.Lock(ctx, "s1", "h", time.Minute)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.GreaterOrEqual(t, time.Since(start), 250*time.Millisecond)
	<-released
	assert.Equal(t, storetest.Users("a"), storetest.History(t, s, "s1"))
}

func TestSQLiteOpenRefusesBadFiles(t *testing.T) {
	// A real store file to damage.
	good := filepath.Join(t.TempDir(), "good.db")
	s, err := sqlite.Open(good)
	require.NoError(t, err)
	for i := range 50 {
		require.NoError(t, s.CreateSession(context.Background(), storetest.Session(fmt.Sprint(i), ""), storetest.AllMessages(), 0))
	}
	require.NoError(t, s.Close())
	valid, err := os.ReadFile(good)
	require.NoError(t, err)
	require.Greater(t, len(valid), 4096)
	damaged := func(from, to int, b byte) []byte {
		out := append([]byte(nil), valid...)
		for i := from; i < to; i++ {
			out[i] = b
		}
		return out
	}
	noise := make([]byte, 8192)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range noise {
		noise[i] = byte(rng.Uint32())
	}

	tests := []struct {
		name    string
		content []byte
		setup   func(t *testing.T, path string) string
		wantErr string
	}{
		{name: "text file", content: []byte("this is not a database\n"), wantErr: "not a database"},
		{name: "random bytes", content: noise, wantErr: "not a database"},
		{name: "damaged magic", content: damaged(0, 16, 'x'), wantErr: "not a database"},
		{name: "truncated header", content: valid[:60]},
		{name: "schema page overwritten", content: damaged(100, 4096, 0xAA)},
		{name: "everything after the header zeroed", content: damaged(100, len(valid), 0)},
		{name: "newer schema", setup: func(t *testing.T, path string) string {
			_, err := rawDB(t, path).Exec(`PRAGMA user_version = 99`)
			require.NoError(t, err)
			return path
		}, wantErr: "newer than this program's"},
		{name: "someone else's tables", setup: func(t *testing.T, path string) string {
			_, err := rawDB(t, path).Exec(`CREATE TABLE sessions (name TEXT)`)
			require.NoError(t, err)
			return path
		}, wantErr: "schema"},
		{name: "someone else's tables at our version", setup: func(t *testing.T, path string) string {
			_, err := rawDB(t, path).Exec(`CREATE TABLE sessions (name TEXT); PRAGMA user_version = 1`)
			require.NoError(t, err)
			return path
		}, wantErr: "unexpected schema"},
		{name: "a directory", setup: func(t *testing.T, path string) string {
			require.NoError(t, os.Mkdir(path, 0o755))
			return path
		}},
		{name: "missing directory", setup: func(t *testing.T, path string) string {
			return filepath.Join(path, "no", "such", "dir.db")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bad.db")
			if tt.content != nil {
				require.NoError(t, os.WriteFile(path, tt.content, 0o600))
			}
			if tt.setup != nil {
				path = tt.setup(t, path)
			}
			s, err := sqlite.Open(path)
			require.Error(t, err)
			t.Log(err)
			assert.Nil(t, s)
			assert.Contains(t, err.Error(), "store: sqlite")
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
			}
		})
	}
}

// TestSQLiteDamagedRows checks that a row that no longer decodes is an
// error for the one call that reads it, not a panic.
func TestSQLiteDamagedRows(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "store.db")
	s := openFile(t, path)
	require.NoError(t, s.CreateSession(ctx, storetest.Session("s1", ""), storetest.Users("a", "b"), 0))
	require.NoError(t, s.CreateSession(ctx, storetest.Session("s2", ""), storetest.Users("c"), 0))
	db := rawDB(t, path)
	_, err := db.Exec(`UPDATE sessions SET data = '{"agent":' WHERE id = 's1'`)
	require.NoError(t, err)
	_, err = db.Exec(`UPDATE history SET data = '{"id":"x","message":{"role":"robot"}}' WHERE session_id = 's1' AND position = 1`)
	require.NoError(t, err)

	_, err = s.GetSession(ctx, "", "s1")
	require.Error(t, err)
	_, err = s.ListSessions(ctx, "", 0, 10)
	require.Error(t, err)
	_, err = s.History(ctx, "s1")
	require.Error(t, err)
	assert.Equal(t, storetest.Users("c"), storetest.History(t, s, "s2"), "other sessions are unaffected")
}

func BenchmarkStore(b *testing.B) {
	ctx := context.Background()
	stores := []struct {
		name string
		open func(b *testing.B) store.Store
	}{
		{name: "memory", open: func(*testing.B) store.Store { return store.NewMemory() }},
		{name: "sqlite", open: func(b *testing.B) store.Store {
			s, err := sqlite.Open(filepath.Join(b.TempDir(), "bench.db"))
			require.NoError(b, err)
			b.Cleanup(func() { _ = s.Close() })
			return s
		}},
	}
	turn := []store.Entry{
		{AGUIID: "u", Message: aap.UserText("what is the weather in Paris?")},
		{AGUIID: "a", Message: &aap.AssistantMessage{Content: aap.BlockContent(
			&aap.ToolUseBlock{ToolCallID: "c1", Name: "weather", Input: json.RawMessage(`{"city":"Paris"}`)})}},
	}
	for _, st := range stores {
		b.Run(st.name+"/AppendHistory", func(b *testing.B) {
			s := st.open(b)
			require.NoError(b, s.CreateSession(ctx, storetest.Session("s1", ""), nil, 0))
			b.ReportAllocs()
			for b.Loop() {
				if err := s.AppendHistory(ctx, "s1", turn); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(st.name+"/History100", func(b *testing.B) {
			s := st.open(b)
			require.NoError(b, s.CreateSession(ctx, storetest.Session("s1", ""), nil, 0))
			for range 50 {
				require.NoError(b, s.AppendHistory(ctx, "s1", turn))
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.History(ctx, "s1"); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(st.name+"/GetSession", func(b *testing.B) {
			s := st.open(b)
			require.NoError(b, s.CreateSession(ctx, storetest.RichSession("s1", "o", time.Now()), nil, 0))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.GetSession(ctx, "o", "s1"); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(st.name+"/LockUnlock", func(b *testing.B) {
			s := st.open(b)
			require.NoError(b, s.CreateSession(ctx, storetest.Session("s1", ""), nil, 0))
			b.ReportAllocs()
			for b.Loop() {
				if ok, _, err := s.Lock(ctx, "s1", "h", time.Minute); err != nil || !ok {
					b.Fatal(ok, err)
				}
				if err := s.Unlock(ctx, "s1", "h"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// Writes that arrive together share a transaction; one that fails (a
// taken id) is rolled back alone, and the others are all stored.
func TestSQLiteGroupedWritesFailAlone(t *testing.T) {
	ctx := context.Background()
	s := openFile(t, filepath.Join(t.TempDir(), "store.db"))
	require.NoError(t, s.CreateSession(ctx, storetest.Session("taken", ""), storetest.Users("first"), 0))
	var wg sync.WaitGroup
	errs := make([]error, 64)
	for i := range 64 {
		wg.Go(func() {
			id := fmt.Sprintf("s%d", i)
			if i%2 == 1 {
				id = "taken"
			}
			errs[i] = s.CreateSession(ctx, storetest.Session(id, ""), storetest.Users(fmt.Sprint(i)), 0)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if i%2 == 1 {
			require.ErrorIs(t, err, store.ErrExists, "write %d", i)
			continue
		}
		require.NoError(t, err, "write %d", i)
		assert.Equal(t, storetest.Users(fmt.Sprint(i)), storetest.History(t, s, fmt.Sprintf("s%d", i)))
	}
	assert.Equal(t, storetest.Users("first"), storetest.History(t, s, "taken"), "the failed writes changed nothing")
}

func TestSQLiteWriteAfterClose(t *testing.T) {
	s, err := sqlite.Open(filepath.Join(t.TempDir(), "store.db"))
	require.NoError(t, err)
	require.NoError(t, s.Close())
	require.Error(t, s.CreateSession(context.Background(), storetest.Session("s1", ""), nil, 0))
	_, _, err = s.Lock(context.Background(), "s1", "h", time.Second)
	require.Error(t, err)
}

// TestSQLiteRefusesURI: a file: URI would be opened as SQLite's URI, not
// as the file whose mode Open sets.
func TestSQLiteRefusesURI(t *testing.T) {
	_, err := sqlite.Open("file:" + filepath.Join(t.TempDir(), "store.db"))
	assert.ErrorContains(t, err, "URI")
}
