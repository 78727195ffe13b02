package postgres

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/aapagui/aapagui/store"
)

func init() {
	store.Register("postgres", openSpec)
	store.Register("postgresql", openSpec)
}

// openSpec is the opener of "postgres://…" and "postgresql://…" specs
// (store.Open); it gives up after pgOpenTimeout.
func openSpec(spec string) (store.Store, error) {
	kind, rest, _ := strings.Cut(spec, ":")
	if !strings.HasPrefix(rest, "//") {
		return nil, fmt.Errorf("store: %s needs a URL (%s://user@host/db)", kind, kind)
	}
	ctx, cancel := context.WithTimeout(context.Background(), pgOpenTimeout)
	defer cancel()
	return Open(ctx, spec)
}

// Store is a store.Store in a PostgreSQL database, for replicas on several
// machines sharing one database. Every replica sees the same sessions,
// threads and turn locks.
//
// Turn locks are lease rows (lock_holder and lock_until on sessions, rows
// of thread_locks), not advisory locks: a lease needs no database
// connection held for the length of a turn, so a turn costs a pooled
// connection only for the statements it runs, and it works behind a
// transaction-pooling proxy (PgBouncer). Lock expiry is measured on the
// database's clock, so replicas whose clocks disagree still agree on
// whose lease has run out.
//
// Messages and sessions are stored as text (JSON), byte for byte as they
// were written, as in the SQLite store.
type Store struct {
	pool *pgxpool.Pool
	// locks serves the turn locks' statements with synchronous_commit off:
	// a lock is not worth a WAL flush (after a database crash, a holder
	// still alive takes its lock again at its next heartbeat), and its own
	// pool keeps heartbeats from queueing behind data writes.
	locks *pgxpool.Pool
	// lockGroups gathers the turn starts' LockLoadSession calls into
	// groups of one statement (lockgroup.go).
	lockGroups pgGroups[*pgLockCall]
	// renewGroups gathers lock renewals into groups of one statement,
	// queued apart from everything else (renewgroup.go).
	renewGroups pgGroups[*pgRenewCall]
	// writeGroups gathers the single-statement writes of turns and runs
	// into batches of one commit (writegroup.go).
	writeGroups pgGroups[*pgWrite]
}

var _ store.Store = (*Store)(nil)

// Pool defaults, used when the DSN does not set them (pool_max_conns,
// pool_min_conns, pool_max_conn_lifetime, pool_max_conn_idle_time,
// pool_health_check_period; connect_timeout for dialing).
const (
	pgMaxConnIdle   = 5 * time.Minute
	pgMaxConnLife   = 30 * time.Minute
	pgHealthCheck   = 30 * time.Second
	pgConnectTimout = 5 * time.Second
	// pgOpenTimeout bounds store.Open: connecting and migrating (waiting for
	// another replica's migration included).
	pgOpenTimeout = time.Minute
)

// pgMaxConns is the default pool size: turns hold a connection only for a
// statement, so a few per core serve many concurrent streams.
func pgMaxConns() int32 { return int32(max(8, 4*runtime.GOMAXPROCS(0))) }

// Open connects to the database at dsn (postgres:// or
// postgresql://, or key=value pairs) and brings its schema up to date. It
// fails if the database cannot be reached within the connect timeout or
// its schema is newer than this program's.
func Open(ctx context.Context, dsn string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// pgx's parse errors quote the DSN, password included.
		return nil, errors.New("store: postgres: the DSN does not parse (see https://www.postgresql.org/docs/current/libpq-connect.html#LIBPQ-CONNSTRING)")
	}
	set := dsnKeys(dsn)
	if !set["pool_max_conns"] {
		cfg.MaxConns = pgMaxConns()
	}
	if !set["pool_max_conn_idle_time"] {
		cfg.MaxConnIdleTime = pgMaxConnIdle
	}
	if !set["pool_max_conn_lifetime"] {
		cfg.MaxConnLifetime = pgMaxConnLife
	}
	if !set["pool_health_check_period"] {
		cfg.HealthCheckPeriod = pgHealthCheck
	}
	if !set["connect_timeout"] {
		cfg.ConnConfig.ConnectTimeout = pgConnectTimout
	}
	if cfg.ConnConfig.RuntimeParams["application_name"] == "" {
		cfg.ConnConfig.RuntimeParams["application_name"] = "aapagui"
	}
	lcfg := cfg.Copy()
	lcfg.MaxConns = max(2, cfg.MaxConns/2)
	lcfg.MinConns = 0
	lcfg.ConnConfig.RuntimeParams["synchronous_commit"] = "off"
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: postgres: %w", err)
	}
	s := &Store{pool: pool,
		lockGroups:  pgGroups[*pgLockCall]{runners: int(max(1, lcfg.MaxConns/2))},
		renewGroups: pgGroups[*pgRenewCall]{runners: 1},
		writeGroups: pgGroups[*pgWrite]{runners: int(max(1, cfg.MaxConns/2))}}
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	if s.locks, err = pgxpool.NewWithConfig(ctx, lcfg); err != nil {
		pool.Close()
		return nil, fmt.Errorf("store: postgres: %w", err)
	}
	return s, nil
}

// dsnKeys lists the parameters a DSN sets, in either form.
func dsnKeys(dsn string) map[string]bool {
	out := map[string]bool{}
	if u, err := url.Parse(dsn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		for k := range u.Query() {
			out[k] = true
		}
		return out
	}
	for _, f := range strings.Fields(dsn) {
		if k, _, ok := strings.Cut(f, "="); ok {
			out[k] = true
		}
	}
	return out
}

// pgStorable reports whether every s fits a text column: PostgreSQL's
// text holds valid UTF-8 without NUL. A session or thread id that does not
// fit names nothing the store can hold, so lookups by it find nothing
// (store.ErrNotFound, as with the other stores) rather than fail with the
// server's encoding error; ids come from request paths as clients wrote
// them.
func pgStorable(ss ...string) bool {
	for _, s := range ss {
		if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
			return false
		}
	}
	return true
}

func pgTexts(hist [][]byte) []string {
	out := make([]string, len(hist))
	for i, h := range hist {
		out[i] = string(h)
	}
	return out
}

func pgAffectedOne(tag pgconn.CommandTag, err error, what string) error {
	if err != nil {
		return fmt.Errorf("store: postgres: %s: %w", what, err)
	}
	if tag.RowsAffected() == 0 {
		return store.ErrNotFound
	}
	return nil
}

// exists returns store.ErrNotFound unless session id exists, whoever owns it.
func (s *Store) exists(ctx context.Context, id string) error {
	var one int
	err := s.pool.QueryRow(ctx, `SELECT 1 FROM sessions WHERE id = $1`, id).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("store: postgres: %w", err)
	}
	return nil
}

// tx runs fn in a transaction. Sentinel errors from fn pass through
// unwrapped.
func (s *Store) tx(ctx context.Context, fn func(pgx.Tx) error) error {
	err := pgx.BeginFunc(ctx, s.pool, fn)
	if err == nil || errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrExists) || errors.Is(err, store.ErrLimit) {
		return err
	}
	return fmt.Errorf("store: postgres: %w", err)
}

// Ping implements store.Store: a round trip to the database.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.pool.Ping(ctx); err != nil {
		return fmt.Errorf("store: postgres: ping: %w", err)
	}
	return nil
}

// Close implements store.Store. Calling it again does nothing.
func (s *Store) Close() error {
	s.pool.Close()
	s.locks.Close()
	return nil
}
