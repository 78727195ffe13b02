// Package pgtest gives tests a PostgreSQL database of their own: a fresh
// schema in the database named by AAPAGUI_TEST_POSTGRES, dropped when the
// test ends. Without that variable the test is skipped, unless
// AAPAGUI_REQUIRE_POSTGRES=1 (as in CI), when it fails.
package pgtest
