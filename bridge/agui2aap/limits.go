package agui2aap

import (
	"time"

	"github.com/aapagui/aapagui/bridge/internal/edge"
)

// Limits are optional per-key limits, each off at zero. A key is one API
// key (Config.APIKeys), or the key a caller forwards (Config.ForwardAuth);
// without either every caller is the same key. Over a limit a request
// gets 429 with Retry-After and a JSON error.
type Limits struct {
	// ThreadsPerKey caps the threads a key holds (each has an AAP session
	// behind it); deleting one frees its place. Counted when a run starts
	// a new thread: new threads started at the same moment may pass it
	// together, by at most the runs starting them.
	ThreadsPerKey int
	// RunsPerKey caps the runs a key has going at once, counted by each
	// process: replicas each allow this many.
	RunsPerKey int
	// RequestsPerSecond caps a key's requests (every route behind the
	// key), a token bucket per key in each process, with bursts of Burst
	// (zero: RequestsPerSecond rounded up).
	RequestsPerSecond float64
	Burst             int
}

// threadRetry is the Retry-After of a key at its limit of threads: a
// place frees when the client deletes a thread, at no foreseeable time.
const threadRetry = time.Minute

// keyLimits is the limits as both bridges name them (edge.KeyLimits).
func (l Limits) keyLimits() edge.KeyLimits {
	return edge.KeyLimits{Conversations: l.ThreadsPerKey, Turns: l.RunsPerKey, RequestsPerSecond: l.RequestsPerSecond, Burst: l.Burst}
}
