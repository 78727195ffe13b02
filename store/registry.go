package store

import (
	"fmt"
	"strings"
	"sync"

	"github.com/aapagui/aapagui/internal/redact"
)

// Opener opens a store from a spec whose scheme (the part before the first
// ':') it was registered for; it gets the whole spec ("sqlite:a.db",
// "postgres://…").
type Opener func(spec string) (Store, error)

var (
	driversMu sync.RWMutex
	drivers   = map[string]Opener{"memory": func(string) (Store, error) { return NewMemory(), nil }}
)

// driverImports names the package that registers each scheme of this
// module's drivers, for the error of a program that did not import it.
var driverImports = map[string]string{
	"sqlite":     "github.com/aapagui/aapagui/store/sqlite",
	"postgres":   "github.com/aapagui/aapagui/store/postgres",
	"postgresql": "github.com/aapagui/aapagui/store/postgres",
}

// Register makes a store driver available to Open under scheme, as
// database/sql.Register does: a driver package calls it in its init, so
// that importing the package (a blank import is enough) is what links it
// into a program. Registering a scheme twice, or a nil opener, panics.
func Register(scheme string, open Opener) {
	driversMu.Lock()
	defer driversMu.Unlock()
	if open == nil {
		panic("store: Register of a nil opener for " + scheme)
	}
	if _, dup := drivers[scheme]; dup {
		panic("store: Register called twice for " + scheme)
	}
	drivers[scheme] = open
}

// Open opens a store from a URL-like spec: "memory:", "sqlite:<path>" or a
// PostgreSQL URL ("postgres://…" or "postgresql://…"). The scheme picks
// the driver registered for it (Register); memory is always there, SQLite
// and PostgreSQL when the program imports store/sqlite and store/postgres.
// A scheme of theirs that the program did not import is an error naming
// the import it needs.
func Open(spec string) (Store, error) {
	scheme, _, _ := strings.Cut(spec, ":")
	driversMu.RLock()
	o, ok := drivers[scheme]
	driversMu.RUnlock()
	if ok {
		return o(spec)
	}
	return nil, unregistered(scheme, spec)
}

// unregistered is Open's error for a scheme no driver registered.
func unregistered(scheme, spec string) error {
	if imp, ok := driverImports[scheme]; ok {
		return fmt.Errorf("store %q: no %s driver in this program (import _ %q)", redactSpec(spec), scheme, imp)
	}
	return fmt.Errorf("store %q: unknown kind (want memory:, sqlite:<path> or postgres://…)", redactSpec(spec))
}

// redactSpec hides what may be secret in a store spec shown in an error:
// a password (in a URL or key=value DSN) and a URL's query values.
func redactSpec(spec string) string { return redact.DSN(spec) }
