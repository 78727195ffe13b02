// Package admit decides whether the process can take a turn's start now
// (Load): its own scheduling delay and the lag of its lock renewals,
// measured as it runs, and a pace for a burst that comes all at once. A
// start refused is answered 503 overloaded with Retry-After before
// anything of it ran.
package admit
