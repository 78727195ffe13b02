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

// allow takes one of owner's requests (Limits.RequestsPerSecond); it
// answers 429 itself and returns false when none is left.
func (s *Server) allow(c *gin.Context, owner string) bool {
	ok, wait := s.limits.Allow(owner)
	if !ok {
		web.TooMany(c, "too_many_requests", fmt.Sprintf("this key is over its limit of %g requests a second", s.cfg.Limits.RequestsPerSecond), wait)
	}
	return ok
}

// turnPlace holds one of the caller's turn places (Limits.TurnsPerKey)
// for the rest of the request, or answers 429.
func (s *Server) turnPlace(c *gin.Context) {
	release, ok := s.limits.Acquire(owner(c))
	if !ok {
		web.TooMany(c, "too_many_turns", fmt.Sprintf("this key already runs %d turns at once, its limit; retry once one has ended", s.limits.Turns()), turnRetry)
		return
	}
	defer release()
	c.Next()
}

// tooManySessions answers a session the store refused (store.ErrLimit).
func (s *Server) tooManySessions(c *gin.Context) {
	web.TooMany(c, "too_many_sessions", fmt.Sprintf("this key holds %d sessions, its limit; delete one to create another", s.cfg.Limits.SessionsPerKey), sessionRetry)
}
