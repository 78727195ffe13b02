package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	// The pure-Go SQLite driver, registered as "sqlite".
	_ "modernc.org/sqlite"
)

// SQLite is a Store in one SQLite file (pure Go, no cgo), in WAL mode so
// that reads never wait for a write. Several processes on one host may
// open the same file (WAL needs shared memory, so not over a network file
// system): writes are serialized by SQLite's file lock, waited for up to
// the busy timeout, and Lock is a single conditional UPDATE, so the turn
// lock holds across processes.
//
// Within a process, writes go to one goroutine that commits them in groups:
// the writes waiting when a transaction begins share it (one that fails is
// answered alone and the others run again without it), and a caller is
// answered once its group has committed. With synchronous=FULL every
// commit is an fsync; a group of many turns' writes pays one, so turns
// starting together do not queue behind each other's fsyncs, and nothing is
// acknowledged before it is on disk. Reads go through a separate read-only
// pool.
type SQLite struct {
	w, r      *sql.DB
	writes    chan *sqliteWrite
	closing   sync.RWMutex // held for reading while a write is handed over
	closed    bool
	wdone     chan struct{}
	stmtMu    sync.Mutex
	stmts     map[string]*sql.Stmt // prepared once per pool and query
	toPrepare []string             // write statements to prepare between transactions
	noStmts   bool                 // set by Close
	closeOnce sync.Once
	closeErr  error
	sync      string // the writer connection's synchronous setting (writer goroutine only)
}

var _ Store = (*SQLite)(nil)

// sqliteBusyTimeout is how long a write waits for another process's write
// to finish before failing with SQLITE_BUSY.
const sqliteBusyTimeout = 5 * time.Second

// schemaVersion is the user_version of a database with the current
// schema; migrations[v] brings version v to v+1.
const schemaVersion = 2

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
}

// schemaProbes prepare against every column the store uses, so that a file
// holding other tables of the same names is refused on open.
var schemaProbes = []string{
	`SELECT seq, id, owner, created_at, data, lock_holder, lock_until FROM sessions LIMIT 0`,
	`SELECT session_id, position, data FROM history LIMIT 0`,
	`SELECT owner, id, updated_at, data FROM threads LIMIT 0`,
	`SELECT owner, id, holder, until FROM thread_locks LIMIT 0`,
}

// OpenSQLite opens (creating it if needed) the SQLite store in the file at
// path and brings its schema up to date. A file that is not a database, or
// whose schema is newer than this program's, is an error.
func OpenSQLite(path string) (*SQLite, error) {
	if path == "" {
		return nil, errors.New("store: sqlite: empty file path")
	}
	// The driver splits its DSN at the first '?', and an in-memory
	// database would be private to each pooled connection.
	if strings.Contains(path, "?") {
		return nil, fmt.Errorf("store: sqlite: file path %q may not contain '?'", path)
	}
	if strings.Contains(path, ":memory:") {
		return nil, fmt.Errorf("store: sqlite: %q is not a file (use the memory: store)", path)
	}
	busy := fmt.Sprint(sqliteBusyTimeout.Milliseconds())
	common := url.Values{
		"_pragma": {"busy_timeout(" + busy + ")", "foreign_keys(1)", "synchronous(FULL)"},
	}
	wq := cloneValues(common)
	wq.Set("_journal_mode", "WAL")
	// IMMEDIATE takes the write lock at BEGIN, where the busy timeout
	// applies, rather than at the first write, where a stale read snapshot
	// fails at once with SQLITE_BUSY.
	wq.Set("_txlock", "immediate")
	w, err := sql.Open("sqlite", path+"?"+wq.Encode())
	if err != nil {
		return nil, fmt.Errorf("store: sqlite %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	s := &SQLite{w: w, writes: make(chan *sqliteWrite, sqliteMaxGroup), wdone: make(chan struct{}), sync: "FULL"}
	if err := s.migrate(path); err != nil {
		_ = w.Close()
		return nil, err
	}

	rq := cloneValues(common)
	rq.Set("_query_only", "1")
	r, err := sql.Open("sqlite", path+"?"+rq.Encode())
	if err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("store: sqlite %s: %w", path, err)
	}
	n := max(4, runtime.GOMAXPROCS(0))
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	s.r = r
	go s.writer()
	for _, q := range schemaProbes {
		if _, err := r.Exec(q); err != nil {
			_ = s.Close()
			return nil, fmt.Errorf("store: sqlite %s: unexpected schema: %w", path, err)
		}
	}
	return s, nil
}

func cloneValues(v url.Values) url.Values {
	out := make(url.Values, len(v))
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

// migrate creates or upgrades the schema in one IMMEDIATE transaction, so
// that replicas opening a new file at once do not both apply it.
func (s *SQLite) migrate(path string) error {
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
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: sqlite %s: %w", path, err)
	}
	return nil
}

// toMillis and fromMillis convert timestamps to and from their stored form.
func toMillis(t time.Time) int64 { return t.UnixMilli() }

func fromMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// CreateSession implements Store. It sets s.Seq on success.
func (s *SQLite) CreateSession(ctx context.Context, sess *Session, seed []Entry) error {
	return s.CreateSessionWithin(ctx, sess, seed, 0)
}

// CreateSessionWithin implements Store: the owner's sessions are counted
// in the transaction that inserts, and SQLite has one writer at a time.
func (s *SQLite) CreateSessionWithin(ctx context.Context, sess *Session, seed []Entry, max int) error {
	data, err := encodeSession(sess)
	if err != nil {
		return err
	}
	hist, err := encodeEntries(seed)
	if err != nil {
		return err
	}
	var seq int64
	err = s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if max > 0 {
			var n int
			if err := s.txRow(ctx, tx, `SELECT count(*) FROM sessions WHERE owner = ?`, sess.Owner).Scan(&n); err != nil {
				return err
			}
			if n >= max {
				return ErrLimit
			}
		}
		res, err := s.txExec(ctx, tx,
			`INSERT INTO sessions (id, owner, created_at, data) VALUES (?, ?, ?, ?)
			 ON CONFLICT (id) DO NOTHING`,
			sess.ID, sess.Owner, toMillis(sess.CreatedAt), string(data))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return ErrExists
		}
		if seq, err = res.LastInsertId(); err != nil {
			return err
		}
		return s.insertHistory(ctx, tx, sess.ID, 0, hist)
	})
	if err != nil {
		return err
	}
	sess.Seq = seq
	return nil
}

// GetSession implements Store.
func (s *SQLite) GetSession(ctx context.Context, owner, id string) (*Session, error) {
	row := s.readRow(ctx,
		`SELECT seq, created_at, data FROM sessions WHERE id = ? AND owner = ?`, id, owner)
	out := &Session{ID: id, Owner: owner}
	var created int64
	var data []byte
	if err := row.Scan(&out.Seq, &created, &data); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, ErrNotFound
		}
		return nil, fmt.Errorf("store: sqlite: get session: %w", err)
	}
	out.CreatedAt = fromMillis(created)
	if err := decodeSession(out, data); err != nil {
		return nil, err
	}
	return out, nil
}

// ListSessions implements Store. A limit of zero or less lists nothing.
func (s *SQLite) ListSessions(ctx context.Context, owner string, after int64, limit int) ([]*Session, error) {
	if limit <= 0 {
		return nil, nil
	}
	rows, err := s.readRows(ctx,
		`SELECT id, seq, created_at, data FROM sessions
		 WHERE owner = ? AND seq > ? ORDER BY seq LIMIT ?`, owner, after, limit)
	if err != nil {
		return nil, fmt.Errorf("store: sqlite: list sessions: %w", err)
	}
	defer func() { _ = rows.Close() }()
	var out []*Session
	for rows.Next() {
		sess := &Session{Owner: owner}
		var created int64
		var data []byte
		if err := rows.Scan(&sess.ID, &sess.Seq, &created, &data); err != nil {
			return nil, fmt.Errorf("store: sqlite: list sessions: %w", err)
		}
		sess.CreatedAt = fromMillis(created)
		if err := decodeSession(sess, data); err != nil {
			return nil, err
		}
		out = append(out, sess)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: sqlite: list sessions: %w", err)
	}
	return out, nil
}

// UpdateSession implements Store. It leaves Seq and CreatedAt as they were
// stored.
func (s *SQLite) UpdateSession(ctx context.Context, sess *Session) error {
	data, err := encodeSession(sess)
	if err != nil {
		return err
	}
	res, err := s.exec(ctx,
		`UPDATE sessions SET data = ? WHERE id = ? AND owner = ?`, string(data), sess.ID, sess.Owner)
	return affectedOne(res, err, "update session")
}

// SaveSession implements Store in one transaction.
func (s *SQLite) SaveSession(ctx context.Context, sess *Session, appended []Entry) error {
	return s.SaveSessionUnlock(ctx, sess, appended, "")
}

// SaveSessionUnlock implements Store in one transaction.
func (s *SQLite) SaveSessionUnlock(ctx context.Context, sess *Session, appended []Entry, holder string) error {
	data, err := encodeSession(sess)
	if err != nil {
		return err
	}
	hist, err := encodeEntries(appended)
	if err != nil {
		return err
	}
	return s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		// SET sees the row as it was: the lock goes if holder had it.
		res, err := s.txExec(ctx, tx, `UPDATE sessions SET data = ?,
				lock_holder = CASE WHEN lock_holder = ? THEN NULL ELSE lock_holder END,
				lock_until = CASE WHEN lock_holder = ? THEN NULL ELSE lock_until END
			WHERE id = ? AND owner = ?`, string(data), holder, holder, sess.ID, sess.Owner)
		if err := affectedOne(res, err, "save session"); err != nil {
			return err
		}
		var next int64
		if err := s.txRow(ctx, tx, `SELECT coalesce(max(position) + 1, 0) FROM history WHERE session_id = ?`, sess.ID).Scan(&next); err != nil {
			return err
		}
		return s.insertHistory(ctx, tx, sess.ID, next, hist)
	})
}

// DeleteSession implements Store; the history goes with the session (ON
// DELETE CASCADE).
func (s *SQLite) DeleteSession(ctx context.Context, owner, id string) error {
	res, err := s.exec(ctx, `DELETE FROM sessions WHERE id = ? AND owner = ?`, id, owner)
	return affectedOne(res, err, "delete session")
}

// affectedOne turns the result of a statement on one session into
// ErrNotFound when it touched no row.
func affectedOne(res sql.Result, err error, what string) error {
	if err != nil {
		return fmt.Errorf("store: sqlite: %s: %w", what, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("store: sqlite: %s: %w", what, err)
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

// AppendHistory implements Store: the entries get the positions after the
// last one, in one transaction.
func (s *SQLite) AppendHistory(ctx context.Context, id string, entries []Entry) error {
	hist, err := encodeEntries(entries)
	if err != nil {
		return err
	}
	return s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var next int64
		err := s.txRow(ctx, tx,
			`SELECT (SELECT coalesce(max(position) + 1, 0) FROM history WHERE session_id = s.id)
			 FROM sessions s WHERE s.id = ?`, id).Scan(&next)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		return s.insertHistory(ctx, tx, id, next, hist)
	})
}

// ReplaceHistory implements Store: the whole history is the tail from
// position 0.
func (s *SQLite) ReplaceHistory(ctx context.Context, id string, entries []Entry) error {
	return s.ReplaceTail(ctx, id, 0, entries)
}

// ReplaceTail implements Store, in one transaction.
func (s *SQLite) ReplaceTail(ctx context.Context, id string, from int, entries []Entry) error {
	hist, err := encodeEntries(entries)
	if err != nil {
		return err
	}
	return s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var n int64
		err := s.txRow(ctx, tx,
			`SELECT (SELECT count(*) FROM history WHERE session_id = s.id) FROM sessions s WHERE s.id = ?`, id).Scan(&n)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		if from < 0 || int64(from) > n {
			return ErrShortHistory
		}
		if _, err := s.txExec(ctx, tx, `DELETE FROM history WHERE session_id = ? AND position >= ?`, id, from); err != nil {
			return err
		}
		return s.insertHistory(ctx, tx, id, int64(from), hist)
	})
}

func (s *SQLite) insertHistory(ctx context.Context, tx *sql.Tx, id string, first int64, hist [][]byte) error {
	for i, h := range hist {
		if _, err := s.txExec(ctx, tx, `INSERT INTO history (session_id, position, data) VALUES (?, ?, ?)`, id, first+int64(i), string(h)); err != nil {
			return err
		}
	}
	return nil
}

// History implements Store. One statement reads the session and its
// entries, so a concurrent delete is seen whole or not at all.
func (s *SQLite) History(ctx context.Context, id string) ([]Entry, error) {
	rows, err := s.readRows(ctx,
		`SELECT h.data FROM sessions s LEFT JOIN history h ON h.session_id = s.id
		 WHERE s.id = ? ORDER BY h.position`, id)
	if err != nil {
		return nil, fmt.Errorf("store: sqlite: history: %w", err)
	}
	defer func() { _ = rows.Close() }()
	found := false
	var raw [][]byte
	for rows.Next() {
		found = true
		var data []byte // NULL (no entries) scans as nil
		if err := rows.Scan(&data); err != nil {
			return nil, fmt.Errorf("store: sqlite: history: %w", err)
		}
		if data != nil {
			raw = append(raw, data)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: sqlite: history: %w", err)
	}
	if !found {
		return nil, ErrNotFound
	}
	return decodeEntries(raw)
}

// Lock implements Store with one conditional UPDATE, atomic across
// processes sharing the file. A lock whose time has come (until <= now) is
// free.
func (s *SQLite) Lock(ctx context.Context, id, holder string, ttl time.Duration) (bool, time.Duration, error) {
	if holder == "" {
		return false, 0, errors.New("store: lock needs a holder")
	}
	now := time.Now()
	res, err := s.execLock(ctx,
		`UPDATE sessions SET lock_holder = ?, lock_until = ?
		 WHERE id = ? AND (lock_holder IS NULL OR lock_holder = ? OR lock_until <= ?)`,
		holder, toMillis(now.Add(ttl)), id, holder, toMillis(now))
	err = affectedOne(res, err, "lock")
	if !errors.Is(err, ErrNotFound) {
		return err == nil, 0, err
	}
	// No row changed: the session is missing or someone else holds it.
	var until sql.NullInt64
	err = s.readRow(ctx, `SELECT lock_until FROM sessions WHERE id = ?`, id).Scan(&until)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, 0, ErrNotFound
	case err != nil:
		return false, 0, fmt.Errorf("store: sqlite: lock: %w", err)
	}
	return false, leftUntil(until, now), nil
}

// LockLoadSession implements SessionLockLoader: Lock's conditional UPDATE,
// limited to owner's session, returns the session's row; the history is
// then read under the lock just taken. One write and one read, instead of
// a read before the lock and two after.
func (s *SQLite) LockLoadSession(ctx context.Context, owner, id, holder string, ttl time.Duration) (*Session, []Entry, bool, time.Duration, error) {
	if holder == "" {
		return nil, nil, false, 0, errors.New("store: lock needs a holder")
	}
	now := time.Now()
	out := &Session{ID: id, Owner: owner}
	var created int64
	var data []byte
	taken := false
	err := s.submitWrite(&sqliteWrite{ctx: ctx, done: make(chan error, 1), lock: true, fn: func(ctx context.Context, tx *sql.Tx) error {
		err := s.txRow(ctx, tx,
			`UPDATE sessions SET lock_holder = ?, lock_until = ?
			 WHERE id = ? AND owner = ? AND (lock_holder IS NULL OR lock_holder = ? OR lock_until <= ?)
			 RETURNING seq, created_at, data`,
			holder, toMillis(now.Add(ttl)), id, owner, holder, toMillis(now)).Scan(&out.Seq, &created, &data)
		if errors.Is(err, sql.ErrNoRows) {
			return nil // not taken: nothing changed
		}
		taken = err == nil
		return err
	}})
	if err != nil {
		return nil, nil, false, 0, fmt.Errorf("store: sqlite: lock and load session: %w", err)
	}
	if !taken {
		var until sql.NullInt64
		err := s.readRow(ctx, `SELECT lock_until FROM sessions WHERE id = ? AND owner = ?`, id, owner).Scan(&until)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return nil, nil, false, 0, ErrNotFound
		case err != nil:
			return nil, nil, false, 0, fmt.Errorf("store: sqlite: lock: %w", err)
		}
		return nil, nil, false, leftUntil(until, now), nil
	}
	out.CreatedAt = fromMillis(created)
	err = decodeSession(out, data)
	var hist []Entry
	if err == nil {
		hist, err = s.History(ctx, id)
	}
	if err != nil {
		_ = s.Unlock(context.WithoutCancel(ctx), id, holder)
		return nil, nil, false, 0, err
	}
	return out, hist, true, 0, nil
}

// leftUntil is the time a lock ending at until (Unix milliseconds) has
// left; a lock released since it was seen taken has a little left, so that
// the caller's Retry-After is never zero.
func leftUntil(until sql.NullInt64, now time.Time) time.Duration {
	if !until.Valid {
		return time.Millisecond
	}
	return max(fromMillis(until.Int64).Sub(now), time.Millisecond)
}

// Unlock implements Store; it does nothing unless holder has the lock.
func (s *SQLite) Unlock(ctx context.Context, id, holder string) error {
	_, err := s.execLock(ctx,
		`UPDATE sessions SET lock_holder = NULL, lock_until = NULL WHERE id = ? AND lock_holder = ?`,
		id, holder)
	if err != nil {
		return fmt.Errorf("store: sqlite: unlock: %w", err)
	}
	return nil
}

// Ping implements Store: it reads the database through both pools.
func (s *SQLite) Ping(ctx context.Context) error {
	for _, db := range []*sql.DB{s.w, s.r} {
		var v int
		if err := db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil {
			return fmt.Errorf("store: sqlite: ping: %w", err)
		}
	}
	return nil
}

// Close implements Store. Calling it again does nothing and returns nil.
func (s *SQLite) Close() error {
	s.closeOnce.Do(func() {
		if s.writes != nil {
			s.closing.Lock()
			s.closed = true
			close(s.writes)
			s.closing.Unlock()
			<-s.wdone
		}
		var errs []error
		s.stmtMu.Lock()
		for _, st := range s.stmts {
			errs = append(errs, st.Close())
		}
		s.stmts, s.noStmts = nil, true
		s.stmtMu.Unlock()
		if s.r != nil {
			errs = append(errs, s.r.Close())
		}
		errs = append(errs, s.w.Close())
		s.closeErr = errors.Join(errs...)
	})
	return s.closeErr
}

// sqliteMaxGroup caps the writes committed in one transaction.
const sqliteMaxGroup = 256

// errClosed reports a write to a closed store.
var errClosed = errors.New("store: closed")

// sqliteWrite is one write waiting for the writer.
type sqliteWrite struct {
	ctx  context.Context // the caller's: done before the write begins, nothing is written
	fn   func(context.Context, *sql.Tx) error
	done chan error
	lock bool // a turn lock's change: committed without an fsync
}

// write runs fn in the writer's next transaction and returns once that
// transaction has committed (or fn failed and was rolled back to its
// savepoint). fn gets a context that is never cancelled: interrupting a
// statement would roll back the whole group's transaction. A caller whose
// ctx is done before its write begins gets ctx's error and nothing is
// written. Sentinel errors from fn pass through unwrapped; fn returns
// ErrNotFound, ErrExists and ErrLimit only before it has changed anything.
func (s *SQLite) write(ctx context.Context, fn func(context.Context, *sql.Tx) error) error {
	err := s.submit(ctx, fn)
	switch {
	case err == nil, errors.Is(err, ErrNotFound), errors.Is(err, ErrExists), errors.Is(err, ErrLimit), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	}
	return fmt.Errorf("store: sqlite: %w", err)
}

// submit hands fn to the writer and waits for its answer.
func (s *SQLite) submit(ctx context.Context, fn func(context.Context, *sql.Tx) error) error {
	return s.submitWrite(&sqliteWrite{ctx: ctx, fn: fn, done: make(chan error, 1)})
}

func (s *SQLite) submitWrite(w *sqliteWrite) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	s.closing.RLock()
	if s.closed {
		s.closing.RUnlock()
		return errClosed
	}
	s.writes <- w
	s.closing.RUnlock()
	return <-w.done
}

// exec runs one statement as a write; callers wrap its error.
func (s *SQLite) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return s.execWrite(ctx, false, query, args...)
}

// execLock is exec for a statement that changes only a turn lock: it is
// committed with synchronous=NORMAL, without waiting for an fsync (see
// writer).
func (s *SQLite) execLock(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return s.execWrite(ctx, true, query, args...)
}

func (s *SQLite) execWrite(ctx context.Context, lock bool, query string, args ...any) (sql.Result, error) {
	var res sql.Result
	err := s.submitWrite(&sqliteWrite{ctx: ctx, done: make(chan error, 1), lock: lock, fn: func(ctx context.Context, tx *sql.Tx) error {
		var err error
		res, err = s.txExec(ctx, tx, query, args...)
		return err
	}})
	return res, err
}

// writer commits the waiting writes in groups until the store is closed.
//
// A group's turn-lock changes are committed in a transaction of their own
// with synchronous=NORMAL: in WAL mode that commit survives a crash of the
// process, and waits for no fsync; a power loss can undo it, until the next
// commit with synchronous=FULL (any other write) syncs the log. A lock is
// not worth an fsync: a lost lock change leaves a lock that runs out within
// its lease, or a holder that takes its lock again at its next heartbeat.
// Every other write waits for its fsync as before.
func (s *SQLite) writer() {
	defer close(s.wdone)
	group := make([]*sqliteWrite, 0, sqliteMaxGroup)
	var locks, data []*sqliteWrite
	for w := range s.writes {
		group = append(group[:0], w)
	more:
		for len(group) < sqliteMaxGroup {
			select {
			case w, ok := <-s.writes:
				if !ok {
					break more
				}
				group = append(group, w)
			default:
				break more
			}
		}
		locks, data = locks[:0], data[:0]
		for _, w := range group {
			if w.lock {
				locks = append(locks, w)
			} else {
				data = append(data, w)
			}
		}
		if len(locks) > 0 {
			s.commitSync(locks, "NORMAL")
		}
		if len(data) > 0 {
			s.commitSync(data, "FULL")
		}
		s.prepareWrites()
	}
}

// commitSync commits group with the given synchronous setting, set on the
// writer's one connection between transactions. A setting that cannot be
// made leaves FULL, the safe one, in place.
func (s *SQLite) commitSync(group []*sqliteWrite, sync string) {
	if s.sync != sync {
		if _, err := s.w.Exec("PRAGMA synchronous = " + sync); err == nil {
			s.sync = sync
		}
	}
	s.commit(group)
}

// commit runs a group of writes in one IMMEDIATE transaction and answers
// each. A write refused with ErrNotFound or ErrExists has changed nothing
// (every write returns those before changing anything), so the others go
// on. A write that fails otherwise (a full disk) may have changed
// something before failing: it is answered with its error, the transaction
// is rolled back, and the others run again in a new one. So a group
// commits whole without the cost of a savepoint per write.
func (s *SQLite) commit(group []*sqliteWrite) {
	live := group[:0]
	for _, w := range group {
		if err := w.ctx.Err(); err != nil {
			w.done <- err
			continue
		}
		live = append(live, w)
	}
	for len(live) > 0 {
		failed, err := s.tryGroup(live)
		if failed < 0 {
			for _, w := range live {
				if w != nil { // nil: answered by tryGroup
					w.done <- err
				}
			}
			return
		}
		live[failed].done <- err
		live = append(live[:failed], live[failed+1:]...)
	}
}

// tryGroup runs the writes in one transaction. It returns the index of a
// write that failed (the transaction rolled back) with its error, or -1
// with the error of the transaction itself (nil once committed).
func (s *SQLite) tryGroup(group []*sqliteWrite) (int, error) {
	ctx := context.Background()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return -1, fmt.Errorf("begin: %w", err)
	}
	var refused map[int]error
	for i, w := range group {
		err := w.fn(ctx, tx)
		switch {
		case err == nil:
		case errors.Is(err, ErrNotFound), errors.Is(err, ErrExists):
			// A refusal: the write found nothing to change and changed
			// nothing, so the others go on in this transaction.
			if refused == nil {
				refused = map[int]error{}
			}
			refused[i] = err
		default:
			_ = tx.Rollback()
			return i, err
		}
	}
	if err := tx.Commit(); err != nil {
		return -1, fmt.Errorf("commit: %w", err)
	}
	for i, err := range refused {
		group[i].done <- err
		group[i] = nil
	}
	return -1, nil
}

// stmt returns query prepared on db (the read or the write pool), from a
// cache: preparing costs as much as running most of the store's
// statements. nil if it is not prepared (yet): the caller runs the query
// unprepared. Write statements are prepared by the writer between
// transactions (the write pool's one connection is busy during one).
func (s *SQLite) stmt(ctx context.Context, db *sql.DB, pool, query string) *sql.Stmt {
	key := pool + "\x00" + query
	s.stmtMu.Lock()
	defer s.stmtMu.Unlock()
	if st, ok := s.stmts[key]; ok {
		return st
	}
	if s.noStmts {
		return nil
	}
	if pool == "w" {
		if !slices.Contains(s.toPrepare, query) {
			s.toPrepare = append(s.toPrepare, query)
		}
		return nil
	}
	st, err := db.PrepareContext(ctx, query)
	if err != nil {
		return nil
	}
	if s.stmts == nil {
		s.stmts = map[string]*sql.Stmt{}
	}
	s.stmts[key] = st
	return st
}

// prepareWrites prepares the write statements seen since the last call;
// the writer calls it between transactions.
func (s *SQLite) prepareWrites() {
	s.stmtMu.Lock()
	defer s.stmtMu.Unlock()
	if s.noStmts {
		return
	}
	for _, q := range s.toPrepare {
		st, err := s.w.PrepareContext(context.Background(), q)
		if err != nil {
			continue
		}
		if s.stmts == nil {
			s.stmts = map[string]*sql.Stmt{}
		}
		s.stmts["w\x00"+q] = st
	}
	s.toPrepare = nil
}

func (s *SQLite) readRow(ctx context.Context, query string, args ...any) *sql.Row {
	if st := s.stmt(ctx, s.r, "r", query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return s.r.QueryRowContext(ctx, query, args...)
}

func (s *SQLite) readRows(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := s.stmt(ctx, s.r, "r", query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return s.r.QueryContext(ctx, query, args...)
}

func (s *SQLite) txExec(ctx context.Context, tx *sql.Tx, query string, args ...any) (sql.Result, error) {
	if st := s.stmt(ctx, s.w, "w", query); st != nil {
		return tx.StmtContext(ctx, st).ExecContext(ctx, args...)
	}
	return tx.ExecContext(ctx, query, args...)
}

func (s *SQLite) txRow(ctx context.Context, tx *sql.Tx, query string, args ...any) *sql.Row {
	if st := s.stmt(ctx, s.w, "w", query); st != nil {
		return tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
	}
	return tx.QueryRowContext(ctx, query, args...)
}
