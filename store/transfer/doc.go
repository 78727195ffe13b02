// Package transfer copies the sessions and threads (with their histories
// and records) of a SQLite store into a PostgreSQL store, for a move from
// one replica on a SQLite file to replicas sharing a PostgreSQL database
// (the programs' --copy-from). It links both drivers; a program that
// copies nothing need not import it.
package transfer
