package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"time"

	// The pure-Go SQLite driver, registered as "sqlite".
	_ "modernc.org/sqlite"

	"github.com/aapagui/aapagui/store"
)

func init() { store.Register("sqlite", openSpec) }

// openSpec is the opener of "sqlite:<path>" specs (store.Open).
func openSpec(spec string) (store.Store, error) {
	path := strings.TrimPrefix(spec, "sqlite:")
	if path == "" {
		return nil, fmt.Errorf("store %q: sqlite needs a file path (sqlite:aap2agui.db)", spec)
	}
	return Open(path)
}

// Store is a store.Store in one SQLite file (pure Go, no cgo), in WAL mode
// so that reads never wait for a write. Several processes on one host may
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
type Store struct {
	w, r      *sql.DB
	writes    chan *sqliteWrite
	renewals  chan *sqliteWrite // lock renewals, ahead of writes (see writer)
	progress  chan *sqliteWrite // store.Progress writes, after writes (see writer)
	closing   sync.RWMutex      // held for reading while a write is handed over
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

var _ store.Store = (*Store)(nil)

// sqliteBusyTimeout is how long a write waits for another process's write
// to finish before failing with SQLITE_BUSY.
const sqliteBusyTimeout = 5 * time.Second

// Open opens (creating it if needed) the SQLite store in the file at path
// and brings its schema up to date. A file that is not a database, or
// whose schema is newer than this program's, is an error. The file and
// its -wal and -shm files are the owner's alone (mode 0600): created so
// whatever the umask, and narrowed to it when found open to others.
func Open(path string) (*Store, error) {
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
	// The driver opens a file: URI as SQLite's URI, not as the file of
	// that name, which secureFiles would create and narrow.
	if strings.HasPrefix(path, "file:") {
		return nil, fmt.Errorf("store: sqlite: %q is a URI: give the file's path", path)
	}
	if err := secureFiles(path); err != nil {
		return nil, fmt.Errorf("store: sqlite %s: %w", path, err)
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
	s := &Store{w: w, writes: make(chan *sqliteWrite, sqliteMaxGroup), renewals: make(chan *sqliteWrite, sqliteMaxGroup), progress: make(chan *sqliteWrite, sqliteMaxGroup), wdone: make(chan struct{}), sync: "FULL"}
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

// toMillis and fromMillis convert timestamps to and from their stored form.
func toMillis(t time.Time) int64 { return t.UnixMilli() }

func fromMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// affectedOne turns the result of a statement on one session into
// store.ErrNotFound when it touched no row.
func affectedOne(res sql.Result, err error, what string) error {
	if err != nil {
		return fmt.Errorf("store: sqlite: %s: %w", what, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("store: sqlite: %s: %w", what, err)
	}
	if n == 0 {
		return store.ErrNotFound
	}
	return nil
}

// Ping implements store.Store: it reads the database through both pools.
func (s *Store) Ping(ctx context.Context) error {
	for _, db := range []*sql.DB{s.w, s.r} {
		var v int
		if err := db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil {
			return fmt.Errorf("store: sqlite: ping: %w", err)
		}
	}
	return nil
}

// Close implements store.Store. Calling it again does nothing and returns nil.
func (s *Store) Close() error {
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
