package sqlite

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
)

// secureFiles makes the store's files readable by their owner alone,
// whatever the umask: they hold whole conversations. It runs before
// SQLite opens path. A database file that does not exist yet is created
// empty with mode 0600 (an empty file is an empty database); SQLite's unix
// VFS creates the -wal and -shm files with the database file's mode, so
// they are 0600 too. The database and its -wal and -shm files that exist
// with any permission for group or others lose it (0644 becomes 0600); a
// file that cannot be narrowed (another user's) is an error naming it.
// Windows has no such modes: there only the file is created.
func secureFiles(path string) error {
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if runtime.GOOS == "windows" {
		return nil
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if err != nil {
			if p != path && errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return err
		}
		if perm := fi.Mode().Perm(); perm&0o077 != 0 {
			if err := os.Chmod(p, perm&^0o077); err != nil {
				return fmt.Errorf("%s is open to other users (%v) and could not be made the owner's alone (chmod 600 it): %w", p, perm, err)
			}
		}
	}
	return nil
}
