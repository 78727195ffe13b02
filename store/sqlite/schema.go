package sqlite

import (
	"context"
	"fmt"
)

// schemaVersion is the user_version of a database with the current
// schema; migrations[v] brings version v to v+1.
const schemaVersion = 9

var migrations = [schemaVersion][]string{
	{
		// seq is the AUTOINCREMENT rowid, so it is never reused, even after
		// the newest session is deleted (a listing cursor stays valid).
		// created_at and lock_until are Unix milliseconds (UTC).
		`CREATE TABLE IF NOT EXISTS sessions (
			seq         INTEGER PRIMARY KEY AUTOINCREMENT,
			id          TEXT    NOT NULL UNIQUE,
			owner       TEXT    NOT NULL,
			created_at  INTEGER NOT NULL,
			data        TEXT    NOT NULL,
			lock_holder TEXT,
			lock_until  INTEGER
		)`,
		`CREATE INDEX IF NOT EXISTS sessions_owner_seq ON sessions (owner, seq)`,
		`CREATE TABLE IF NOT EXISTS history (
			session_id TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
			position   INTEGER NOT NULL,
			data       TEXT    NOT NULL,
			PRIMARY KEY (session_id, position)
		) WITHOUT ROWID`,
	},
	{
		// agui2aap's threads, keyed by owner and thread id, and their run
		// locks (a lock may exist before its thread does).
		`CREATE TABLE IF NOT EXISTS threads (
			owner      TEXT    NOT NULL,
			id         TEXT    NOT NULL,
			updated_at INTEGER NOT NULL,
			data       TEXT    NOT NULL,
			PRIMARY KEY (owner, id)
		) WITHOUT ROWID`,
		`CREATE TABLE IF NOT EXISTS thread_locks (
			owner  TEXT    NOT NULL,
			id     TEXT    NOT NULL,
			holder TEXT    NOT NULL,
			until  INTEGER NOT NULL,
			PRIMARY KEY (owner, id)
		) WITHOUT ROWID`,
	},
	{
		// Session.HistoryVersion: one more with every write of the
		// history (0 for the sessions stored before it).
		`ALTER TABLE sessions ADD COLUMN history_version INTEGER NOT NULL DEFAULT 0`,
	},
	{
		// The runs' logs (store.RunLog) and their batches of frames.
		// started_at and updated_at are Unix milliseconds (UTC). A key's
		// logs are ordered by started_at, then seq (the order they were
		// stored in): seq is the rowid, which VACUUM keeps, as it would
		// not keep an implicit one. The batches are not WITHOUT ROWID:
		// their frames are blobs of up to hundreds of kilobytes, which
		// such a table keeps badly.
		`CREATE TABLE IF NOT EXISTS run_logs (
			seq        INTEGER PRIMARY KEY,
			id         TEXT    NOT NULL UNIQUE,
			owner      TEXT    NOT NULL,
			key        TEXT    NOT NULL,
			run_id     TEXT    NOT NULL,
			form       TEXT    NOT NULL,
			started_at INTEGER NOT NULL,
			updated_at INTEGER NOT NULL,
			events     INTEGER NOT NULL DEFAULT 0,
			finished   INTEGER NOT NULL DEFAULT 0
		)`,
		`CREATE INDEX IF NOT EXISTS run_logs_owner_key_started ON run_logs (owner, key, started_at)`,
		`CREATE TABLE IF NOT EXISTS run_log_batches (
			log_id TEXT    NOT NULL REFERENCES run_logs (id) ON DELETE CASCADE,
			first  INTEGER NOT NULL,
			count  INTEGER NOT NULL,
			frames BLOB    NOT NULL,
			PRIMARY KEY (log_id, first)
		)`,
	},
	{
		// The threads' records (store.Thread.RecordLen, RecordTail): the
		// AG-UI messages of each thread's conversation by position, as
		// blobs, byte for byte. record_len counts them on the thread's
		// row, so that a listing reads it without counting and a save
		// checks its tail against it in one lookup. A thread's messages
		// go with it (ON DELETE CASCADE). WITHOUT ROWID as history: the
		// messages are read in key order, a thread's at a time, and are
		// a few kilobytes, not the run logs' batches of hundreds.
		`ALTER TABLE threads ADD COLUMN record_len INTEGER NOT NULL DEFAULT 0`,
		`CREATE TABLE IF NOT EXISTS thread_records (
			owner    TEXT    NOT NULL,
			id       TEXT    NOT NULL,
			position INTEGER NOT NULL,
			data     BLOB    NOT NULL,
			PRIMARY KEY (owner, id, position),
			FOREIGN KEY (owner, id) REFERENCES threads (owner, id) ON DELETE CASCADE
		) WITHOUT ROWID`,
	},
	{
		// store.RunLog.Input, a blob byte for byte; NULL for none (and for
		// the logs stored before it).
		`ALTER TABLE run_logs ADD COLUMN input BLOB`,
	},
	{
		// A running log asked to stop (StopRunLog); the partial index
		// holds only the running ones, so that the processes' poll
		// (StoppingRunLogs) reads a handful of rows, not the table.
		`ALTER TABLE run_logs ADD COLUMN stopping INTEGER NOT NULL DEFAULT 0`,
		`CREATE INDEX IF NOT EXISTS run_logs_stopping ON run_logs (id) WHERE stopping AND NOT finished`,
	},
	{
		// The ids a thread's session has seen (store.Thread.Delivered,
		// DeliveredFrom), by position, in rows of their own: a run's save
		// writes those it added, not the thread's every id again as part
		// of its row. delivered_len counts them, as record_len counts the
		// record. The ids the threads' rows held move here, and the rows
		// say "apart" instead (store.EncodeThreadApart), which a process
		// of an earlier build refuses to read rather than take the thread
		// for one without ids. A thread such a process (open before the
		// file's schema changed) writes, its ids in its row, has them
		// moved here by the triggers.
		`ALTER TABLE threads ADD COLUMN delivered_len INTEGER NOT NULL DEFAULT 0`,
		`CREATE TABLE IF NOT EXISTS thread_delivered (
			owner      TEXT    NOT NULL,
			id         TEXT    NOT NULL,
			position   INTEGER NOT NULL,
			message_id TEXT    NOT NULL,
			PRIMARY KEY (owner, id, position),
			FOREIGN KEY (owner, id) REFERENCES threads (owner, id) ON DELETE CASCADE
		) WITHOUT ROWID`,
		`INSERT INTO thread_delivered (owner, id, position, message_id)
			SELECT t.owner, t.id, CAST(j.key AS INTEGER), j.value FROM threads t, json_each(t.data, '$.delivered') j
			WHERE json_type(t.data, '$.delivered') = 'array'`,
		`UPDATE threads SET delivered_len = json_array_length(data, '$.delivered'), data = json_set(data, '$.delivered', 'apart')
			WHERE json_type(data, '$.delivered') = 'array'`,
		`CREATE TRIGGER IF NOT EXISTS threads_delivered_inserted AFTER INSERT ON threads
			WHEN json_type(NEW.data, '$.delivered') = 'array'` + sqliteMoveDelivered,
		`CREATE TRIGGER IF NOT EXISTS threads_delivered_updated AFTER UPDATE OF data ON threads
			WHEN json_type(NEW.data, '$.delivered') = 'array'` + sqliteMoveDelivered,
	},
	{
		// The parts of the long texts a stream holds apart as they come
		// (AddHistoryPart, AddRecordPart): a history entry's by its session, a thread
		// record's message's by its thread, which need not be saved yet
		// when its first run's parts come (a trigger drops them with it).
		`CREATE TABLE IF NOT EXISTS history_parts (
			session_id TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
			ref        TEXT    NOT NULL,
			part       INTEGER NOT NULL,
			data       BLOB    NOT NULL,
			PRIMARY KEY (session_id, ref, part)
		)`,
		`CREATE TABLE IF NOT EXISTS record_parts (
			owner TEXT    NOT NULL,
			id    TEXT    NOT NULL,
			ref   TEXT    NOT NULL,
			part  INTEGER NOT NULL,
			data  BLOB    NOT NULL,
			PRIMARY KEY (owner, id, ref, part)
		)`,
		`CREATE TRIGGER IF NOT EXISTS threads_parts_deleted AFTER DELETE ON threads
			BEGIN
				DELETE FROM record_parts WHERE owner = OLD.owner AND id = OLD.id;
			END`,
	},
}

// sqliteMoveDelivered is the body of the triggers that move the ids a
// thread's row holds (written by an earlier build) to thread_delivered.
const sqliteMoveDelivered = `
	BEGIN
		DELETE FROM thread_delivered WHERE owner = NEW.owner AND id = NEW.id;
		INSERT INTO thread_delivered (owner, id, position, message_id)
			SELECT NEW.owner, NEW.id, CAST(j.key AS INTEGER), j.value FROM json_each(NEW.data, '$.delivered') j;
		UPDATE threads SET delivered_len = json_array_length(NEW.data, '$.delivered'), data = json_set(NEW.data, '$.delivered', 'apart')
			WHERE owner = NEW.owner AND id = NEW.id;
	END`

// schemaProbes prepare against every column the store uses, so that a file
// holding other tables of the same names is refused on open.
var schemaProbes = []string{
	`SELECT seq, id, owner, created_at, data, lock_holder, lock_until, history_version FROM sessions LIMIT 0`,
	`SELECT session_id, position, data FROM history LIMIT 0`,
	`SELECT owner, id, updated_at, data, record_len, delivered_len FROM threads LIMIT 0`,
	`SELECT owner, id, holder, until FROM thread_locks LIMIT 0`,
	`SELECT seq, id, owner, key, run_id, form, started_at, updated_at, events, finished, input, stopping FROM run_logs LIMIT 0`,
	`SELECT log_id, first, count, frames FROM run_log_batches LIMIT 0`,
	`SELECT owner, id, position, data FROM thread_records LIMIT 0`,
	`SELECT owner, id, position, message_id FROM thread_delivered LIMIT 0`,
	`SELECT session_id, ref, part, data FROM history_parts LIMIT 0`,
	`SELECT owner, id, ref, part, data FROM record_parts LIMIT 0`,
}

// migrate creates or upgrades the schema in one IMMEDIATE transaction, so
// that replicas opening a new file at once do not both apply it.
func (s *Store) migrate(path string) error {
	ctx := context.Background()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: sqlite %s: %w", path, err)
	}
	defer func() { _ = tx.Rollback() }()
	var v int
	if err := tx.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil {
		return fmt.Errorf("store: sqlite %s: %w", path, err)
	}
	if v > schemaVersion {
		return fmt.Errorf("store: sqlite %s: schema version %d is newer than this program's (%d)", path, v, schemaVersion)
	}
	if v < 0 {
		return fmt.Errorf("store: sqlite %s: invalid schema version %d", path, v)
	}
	for ; v < schemaVersion; v++ {
		for _, q := range migrations[v] {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("store: sqlite %s: migrating schema to version %d: %w", path, v+1, err)
			}
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, v+1)); err != nil {
			return fmt.Errorf("store: sqlite %s: %w", path, err)
		}
	}
	for _, q := range indexes {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("store: sqlite %s: %w", path, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: sqlite %s: %w", path, err)
	}
	return nil
}

// indexes are made whatever the schema's version: they change what no
// row means, so a build from before one still opens the store (and
// leaves it be). threads_owner_updated serves a page of ListThreads,
// which otherwise sorted all of the owner's threads for each page.
var indexes = []string{
	`CREATE INDEX IF NOT EXISTS threads_owner_updated ON threads (owner, updated_at, id)`,
}
