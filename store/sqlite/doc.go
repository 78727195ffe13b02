// Package sqlite is the store in one SQLite file (pure Go, no cgo): the
// embedded durable default of the bridges. Importing it registers the
// "sqlite:" scheme with store.Open, as a database/sql driver registers
// itself:
//
//	import _ "github.com/aapagui/aapagui/store/sqlite"
//
//	st, err := store.Open("sqlite:aap2agui.db")
//
// or, without the registry, sqlite.Open("aap2agui.db").
//
// The files are laid out as store/postgres's are: store.go (opening,
// closing), schema.go (migrations), sessions.go, history.go, locks.go (turn
// locks), threads.go (threads and their records), runlogs.go (the runs'
// logs), writegroup.go (writes committed in groups), copy.go (the rows read
// by store/transfer); statements.go holds the prepared statements SQLite
// alone caches.
package sqlite
