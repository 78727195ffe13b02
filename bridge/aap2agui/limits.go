package aap2agui

import (
	"errors"
	"fmt"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/aapagui/aapagui/bridge/internal/web"
	"github.com/aapagui/aapagui/internal/limit"
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

// Retry-After for the limits that free at no foreseeable time: a turn
// place frees when one of the key's turns ends; a session place when the
// client deletes a session.
const (
	turnRetry    = time.Second
	sessionRetry = time.Minute
)

func (l *Limits) check() error {
	if l.SessionsPerKey < 0 || l.TurnsPerKey < 0 || l.RequestsPerSecond < 0 || l.Burst < 0 {
		return errors.New("aap2agui: Config.Limits: a limit is zero (off) or positive")
	}
	return nil
}

func newLimits(l Limits) *limit.Keys { return limit.New(l.RequestsPerSecond, l.Burst, l.TurnsPerKey) }

// turnPlace holds one of the caller's turn places (Limits.TurnsPerKey)
// for the rest of the request, or fails with a 429.
func (s *Server) turnPlace(c *gin.Context) error {
	release, ok := s.limits.Acquire(owner(c))
	if !ok {
		return web.Throttled("too_many_turns", fmt.Sprintf("this key already runs %d turns at once, its limit; retry once one has ended", s.limits.Turns()), turnRetry)
	}
	defer release()
	c.Next()
	return nil
}
