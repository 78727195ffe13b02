//go:build unix

package sqlite_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/store/sqlite"
	"github.com/aapagui/aapagui/store/storetest"
)

// withUmask sets the process's umask for the test (not parallel: the
// umask is the process's).
func withUmask(t *testing.T, mask int) {
	old := syscall.Umask(mask)
	t.Cleanup(func() { syscall.Umask(old) })
}

// modes are the permissions of the store file and its -wal and -shm files.
func modes(t *testing.T, path string) map[string]fs.FileMode {
	got := map[string]fs.FileMode{}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		fi, err := os.Stat(path + suffix)
		require.NoError(t, err, "the store has its %q file while open", suffix)
		got[filepath.Base(path+suffix)] = fi.Mode().Perm()
	}
	return got
}

func want0600(path string) map[string]fs.FileMode {
	b := filepath.Base(path)
	return map[string]fs.FileMode{b: 0o600, b + "-wal": 0o600, b + "-shm": 0o600}
}

// TestSQLiteFilesOwnerOnly: under umask 022 (files 0644 by default) the
// store's new file and its -wal and -shm files, written to, are 0600:
// the conversations they hold are the owner's alone.
func TestSQLiteFilesOwnerOnly(t *testing.T) {
	withUmask(t, 0o022)
	path := filepath.Join(t.TempDir(), "store.db")
	s := openFile(t, path)
	require.NoError(t, s.CreateSession(context.Background(), storetest.Session("s1", ""), storetest.AllMessages(), 0))
	assert.Equal(t, want0600(path), modes(t, path))
}

// TestSQLiteNarrowsOpenFiles: a store file, and its -wal and -shm files,
// that others may read (written by an earlier build under umask 022, or
// 0666) are narrowed to 0600 at open, and keep their data.
func TestSQLiteNarrowsOpenFiles(t *testing.T) {
	withUmask(t, 0o022)
	path := filepath.Join(t.TempDir(), "store.db")
	s, err := sqlite.Open(path)
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, s.CreateSession(ctx, storetest.Session("s1", ""), storetest.AllMessages(), 0))
	// Another process still has the file open: its -wal and -shm stay.
	openFile(t, path)
	require.NoError(t, s.Close())
	for suffix, mode := range map[string]fs.FileMode{"": 0o644, "-wal": 0o644, "-shm": 0o666} {
		require.NoError(t, os.Chmod(path+suffix, mode))
	}

	s = openFile(t, path)
	assert.Equal(t, want0600(path), modes(t, path))
	_, err = s.GetSession(ctx, "", "s1")
	require.NoError(t, err)
}
