// Package limit holds the optional per-key limits both bridges share:
// requests per second (a token bucket per key, golang.org/x/time/rate)
// and concurrent turns per key. Both are counted in this process; the
// session limit, which must hold across replicas, is the store's
// (store.SessionStore.CreateSession). Fair is one rate shared by many
// clients, of which no single client can take it all.
package limit
