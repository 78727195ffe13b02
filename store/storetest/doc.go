// Package storetest is the conformance suite of store.Store: the rules
// every store follows, which the tests of each driver (store/sqlite,
// store/postgres, and the memory store's own) run against it with Run,
// and the fixtures those tests share.
package storetest
