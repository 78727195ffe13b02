package store_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/internal/pgtest"
	"github.com/aapagui/aapagui/store"
)

func openPostgresDSN(t *testing.T, dsn string) *store.Postgres {
	t.Helper()
	s, err := store.OpenPostgres(context.Background(), dsn)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, s.Close()) })
	return s
}

// Two pools on one database are two replicas.
func TestPostgresTwoReplicas(t *testing.T) {
	dsn := pgtest.Schema(t)
	testTwoReplicas(t, openPostgresDSN(t, dsn), openPostgresDSN(t, dsn))
}

// Replicas starting at once on an empty database apply the schema once
// (under an advisory lock) and all start.
func TestPostgresConcurrentMigrations(t *testing.T) {
	dsn := pgtest.Schema(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			s, err := store.OpenPostgres(context.Background(), dsn)
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
	assert.Equal(t, 1, version)
	assert.Equal(t, 1, rows)
}

func TestPostgresRefusesNewerSchema(t *testing.T) {
	dsn := pgtest.Schema(t)
	openPostgresDSN(t, dsn)
	_, err := rawPG(t, dsn).Exec(context.Background(), `UPDATE aapagui_schema SET version = 99`)
	require.NoError(t, err)
	_, err = store.OpenPostgres(context.Background(), dsn)
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

// rawPG connects to the test database directly, bypassing the store.
func rawPG(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}
