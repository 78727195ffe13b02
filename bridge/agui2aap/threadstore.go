package agui2aap

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/rs/zerolog"

	"github.com/aapagui/aapagui/bridge/internal/fault"
	"github.com/aapagui/aapagui/store"
)

// takeThread takes the thread's run lock. A thread a run holds is
// answered 409 run_in_progress, with the message busy gives for the time
// left on the run's lease.
func takeThread(ctx context.Context, st store.ThreadStore, owner, id string, lo store.LeaseOptions, busy func(left time.Duration) string) (*store.Lease, error) {
	lease, err := store.TakeThread(ctx, st, owner, id, lo)
	var held *store.HeldError
	if errors.As(err, &held) {
		return nil, fault.Locked("run_in_progress", busy(held.Left), held.Left)
	}
	if err != nil {
		return nil, &storeError{"lock thread", err}
	}
	return lease, nil
}

// loadThread reads the thread; nil for one the store does not have.
func (cfg *Config) loadThread(ctx context.Context, owner, id string) (*store.Thread, error) {
	th, err := cfg.Store.GetThread(ctx, owner, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, &storeError{"get thread", err}
	}
	return th, nil
}

// runKey is the run-log key of a thread's runs.
func runKey(threadID string) string { return "thread/" + threadID }

// runInput is what a run's log keeps of what the run was asked
// (store.RunLog.Input), for a client joining it from nothing: the client's
// messages the thread's record lacks (keepForRecord), to go after the
// record's first From messages. A new session starts the record again.
type runInput struct {
	From     int             `json:"from"`
	Messages []types.Message `json:"messages"`
}

// roomForThread returns the 429 of a run about to start a new thread when
// owner already holds Limits.ThreadsPerKey threads.
func (cfg *Config) roomForThread(ctx context.Context, log *zerolog.Logger, owner string) error {
	max := cfg.Limits.ThreadsPerKey
	if max <= 0 {
		return nil
	}
	n, err := cfg.Store.CountThreads(ctx, owner)
	if err != nil {
		log.Error().Err(err).Msg("store: count threads")
		return errStore
	}
	if n >= max {
		return fault.Throttled("too_many_threads", fmt.Sprintf("this key holds %d threads, its limit; delete one to start another", max), threadRetry)
	}
	return nil
}

// recorded is the thread's conversation from agui2aap's own record; false
// when it has none.
func (s *Server) recorded(ctx context.Context, th *store.Thread, log *zerolog.Logger) ([]types.Message, bool) {
	if th.RecordLen == 0 {
		return nil, false
	}
	raw, err := s.cfg.Store.ThreadRecord(ctx, th.Owner, th.ID)
	if err != nil {
		log.Warn().Err(err).Str("thread", th.ID).Msg("the thread's record could not be read")
		return nil, false
	}
	msgs := make([]types.Message, 0, len(raw))
	for _, data := range raw {
		var m types.Message
		if err := json.Unmarshal(data, &m); err != nil {
			log.Warn().Err(err).Str("thread", th.ID).Msg("the thread's record holds a message that is not one")
			return nil, false
		}
		msgs = append(msgs, m)
	}
	return msgs, true
}
