package agui2aap

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/rs/zerolog"

	"github.com/aapagui/aapagui/bridge/internal/web"
	"github.com/aapagui/aapagui/internal/limit"
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

// Retry-After for the limits that free at no foreseeable time: a run
// place frees when one of the key's runs ends; a thread place when the
// client deletes a thread.
const (
	runRetry    = time.Second
	threadRetry = time.Minute
)

func (l *Limits) check() error {
	if l.ThreadsPerKey < 0 || l.RunsPerKey < 0 || l.RequestsPerSecond < 0 || l.Burst < 0 {
		return errors.New("agui2aap: Config.Limits: a limit is zero (off) or positive")
	}
	return nil
}

func newLimits(l Limits) *limit.Keys { return limit.New(l.RequestsPerSecond, l.Burst, l.RunsPerKey) }

// runPlace holds one of the caller's run places (Limits.RunsPerKey) for
// the rest of the request, or answers 429.
func (s *Server) runPlace(c *gin.Context) {
	release, ok := s.limits.Acquire(c.GetString(ownerKey))
	if !ok {
		s.fail(c, web.Throttled("too_many_runs", fmt.Sprintf("this key already has %d runs going, its limit; retry once one has finished", s.limits.Turns()), runRetry))
		return
	}
	defer release()
	c.Next()
}

// roomForThread returns the 429 of a run about to start a new thread when
// owner already holds Limits.ThreadsPerKey threads.
func (s *Server) roomForThread(ctx context.Context, log *zerolog.Logger, owner string) error {
	max := s.cfg.Limits.ThreadsPerKey
	if max <= 0 {
		return nil
	}
	n, err := s.cfg.Store.CountThreads(ctx, owner)
	if err != nil {
		log.Error().Err(err).Msg("store: count threads")
		return errStore
	}
	if n >= max {
		return web.Throttled("too_many_threads", fmt.Sprintf("this key holds %d threads, its limit; delete one to start another", max), threadRetry)
	}
	return nil
}
