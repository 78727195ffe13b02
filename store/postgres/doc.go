// Package postgres is the store in a PostgreSQL database, for replicas on
// several machines sharing one database. Importing it registers the
// "postgres://" and "postgresql://" schemes with store.Open, as a
// database/sql driver registers itself:
//
//	import _ "github.com/aapagui/aapagui/store/postgres"
//
//	st, err := store.Open("postgres://user@host/aapagui")
//
// or, without the registry, postgres.Open(ctx, dsn).
//
// The files are laid out as store/sqlite's are: store.go (opening,
// closing), schema.go (migrations), sessions.go, history.go, locks.go (turn
// locks), threads.go (threads and their records), runlogs.go (the runs'
// logs), writegroup.go (writes sent in batches), copy.go (the rows written
// by store/transfer); lockgroup.go holds the grouped turn starts PostgreSQL
// alone has.
package postgres
