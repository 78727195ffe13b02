package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvDSN names the variable holding the test database's DSN (a
// postgres:// URL).
const EnvDSN = "AAPAGUI_TEST_POSTGRES"

// EnvRequire, set to 1, turns a missing DSN from a skip into a failure.
const EnvRequire = "AAPAGUI_REQUIRE_POSTGRES"

// DSN returns the test database's DSN, skipping (or failing) the test
// without one.
func DSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv(EnvDSN)
	if dsn == "" {
		if os.Getenv(EnvRequire) == "1" {
			t.Fatalf("%s=1 but %s is not set: PostgreSQL tests may not be skipped", EnvRequire, EnvDSN)
		}
		t.Skipf("no PostgreSQL: set %s to a postgres:// URL (scripts/pgtemp.sh starts one)", EnvDSN)
	}
	return dsn
}

// Schema creates a schema of its own for the test and returns a DSN whose
// connections use it (search_path); the schema is dropped when the test
// ends.
func Schema(t testing.TB) string {
	t.Helper()
	dsn := DSN(t)
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "test_" + hex.EncodeToString(b[:])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("pgtest: connecting to %s: %v", EnvDSN, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+name); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Errorf("pgtest: dropping schema %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+name+" CASCADE"); err != nil {
			t.Errorf("pgtest: dropping schema %s: %v", name, err)
		}
	})
	return WithParam(dsn, "search_path", name)
}

// WithParam adds a parameter to a postgres:// URL.
func WithParam(dsn, key, value string) string {
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	return dsn + sep + url.QueryEscape(key) + "=" + url.QueryEscape(value)
}

// EnvRestart names a command that restarts the test server; Faults
// appends the shutdown mode (fast, immediate). CI sets it for a cluster of
// the fault tests' own (.ci/pg-restart-test.sh): the other tests share
// theirs, which must not restart under them.
const EnvRestart = "AAPAGUI_TEST_PG_RESTART"

// Tagged is Schema whose connections carry an application_name of their
// own, returned too: Faults drops those connections and no others.
func Tagged(t testing.TB) (dsn, app string) {
	t.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	app = "aapagui_faults_" + hex.EncodeToString(b[:])
	return WithParam(Schema(t), "application_name", app), app
}

// Faults drops every connection of app three times, pause apart (after a
// first pause); where EnvRestart names a restart command, it also
// restarts the server between them, with -m fast and then -m immediate.
func Faults(t testing.TB, app string, pause time.Duration) {
	t.Helper()
	ctx := context.Background()
	faults := []string{"drop", "drop", "drop"}
	if os.Getenv(EnvRestart) != "" {
		faults = []string{"drop", "fast", "drop", "immediate", "drop"}
	}
	for _, f := range faults {
		time.Sleep(pause)
		if f != "drop" {
			out, err := exec.Command("sh", "-c", os.Getenv(EnvRestart)+" "+f).CombinedOutput()
			if err != nil {
				t.Fatalf("pgtest: restart -m %s: %v: %s", f, err, out)
			}
			t.Logf("restarted PostgreSQL (-m %s)", f)
			continue
		}
		conn, err := pgx.Connect(ctx, DSN(t))
		if err != nil {
			t.Fatalf("pgtest: %v", err)
		}
		var dropped int
		err = conn.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&dropped)
		conn.Close(ctx)
		if err != nil {
			t.Fatalf("pgtest: dropping connections: %v", err)
		}
		t.Logf("dropped %d connections", dropped)
	}
}
