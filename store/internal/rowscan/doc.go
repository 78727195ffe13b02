// Package rowscan is the row-reading loop that the SQL drivers of the store
// (store/sqlite on database/sql, store/postgres on pgx) share: it reads a
// result set row by row into values, wrapping the driver's errors the same
// way, and turns a history's rows into entries.
package rowscan
