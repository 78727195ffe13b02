// Package store keeps the bridges' durable state: aap2agui's sessions (with
// their history, AG-UI state and open interrupts), agui2aap's threads (with
// the record of their conversation, given back when the AAP session behind
// a thread is gone), the turn locks that let several replicas share one
// store, and the runs' logs from which a client that lost its stream
// rejoins its run.
//
// Each bridge takes the part it needs: Sessions (aap2agui: SessionStore,
// HistoryStore, SessionLocker, RunLogStore) or Threads (agui2aap:
// ThreadStore, RunLogStore), both with Ping. Store is all of them, what
// every driver is; Memory is for tests and throwaway runs. The durable
// stores are drivers in packages of their own, chosen the way
// database/sql drivers are: store/sqlite (the embedded durable default, a
// single file, pure Go) and store/postgres (replicas on several machines
// sharing one database). Each registers itself when imported (a blank
// import is enough), and Open picks one by the scheme of a spec
// ("memory:", "sqlite:<path>", "postgres://…"), so a program links only
// the drivers it imports. Every method is one statement or one short
// transaction: a session's by its id (owner-checked where the method
// takes an owner), a thread's and a run log's by owner and id. A turn's
// start and end are each one write (SaveSession, SaveThread), the end
// freeing the lock in the same write.
//
// Turn locks are leases (Lease): taken with a short TTL, kept alive by a
// heartbeat while the turn runs, and released with retries.
package store
