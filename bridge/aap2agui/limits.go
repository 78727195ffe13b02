package aap2agui

import (
	"time"

	"github.com/aapagui/aapagui/bridge/internal/edge"
)

// Limits are optional per-key limits, each off at zero. A key is one API
// key (Config.APIKeys); without API keys every caller is the same key.
// Over a limit a request gets 429 with Retry-After and a JSON error.
type Limits struct {
	// SessionsPerKey caps the sessions a key holds; deleting one frees its
	// place. The store counts and creates in one step, so it holds across
	// replicas sharing the store.
	SessionsPerKey int
	// TurnsPerKey caps the turns a key runs at once (PUT /session
	// included), counted by each process: replicas each allow this many.
	TurnsPerKey int
	// RequestsPerSecond caps a key's requests (every route behind the
	// key), a token bucket per key in each process, with bursts of Burst
	// (zero: RequestsPerSecond rounded up).
	RequestsPerSecond float64
	Burst             int
}

// sessionRetry is the Retry-After of a key at its limit of sessions: a
// place frees when the client deletes a session, at no foreseeable time.
const sessionRetry = time.Minute

// keyLimits is the limits as both bridges name them (edge.KeyLimits).
func (l Limits) keyLimits() edge.KeyLimits {
	return edge.KeyLimits{Conversations: l.SessionsPerKey, Turns: l.TurnsPerKey, RequestsPerSecond: l.RequestsPerSecond, Burst: l.Burst}
}
