package agui2aap

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/rs/zerolog"

	"github.com/aapagui/aapagui/bridge/internal/fault"
	"github.com/aapagui/aapagui/bridge/internal/turns"
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

// runKey is the run-log key of the runs of agent's thread threadID. The
// agent is part of it, so that a run is joined and stopped only through
// its own agent's routes; its name is escaped (it holds no "/" then), so
// that no two agents and threads share a key.
func runKey(agent, threadID string) string {
	return "agent/" + url.PathEscape(agent) + "/thread/" + threadID
}

// legacyRunKey is the key a thread's runs were kept under before the
// agent was part of it. Logs kept so are still found (findRun, stopAgentRun)
// through the agent the thread is stored with, and only through it.
func legacyRunKey(threadID string) string { return "thread/" + threadID }

// findRun is turns.FindRun for agent's thread id: under its run key, else
// (no run there, or the id names none of it) under the legacy key when
// the thread is stored with agent.
func (s *Server) findRun(ctx context.Context, owner, agent, id, lastID string) (*store.RunLog, int64, error) {
	st := s.cfg.Store
	l, after, err := turns.FindRun(ctx, st, owner, runKey(agent, id), lastID, interruptedRun)
	if !noRun(err) {
		return l, after, err
	}
	if ok, terr := s.cfg.storedWith(ctx, owner, agent, id); terr != nil {
		return nil, 0, terr
	} else if !ok {
		return nil, 0, err
	}
	if ll, la, lerr := turns.FindRun(ctx, st, owner, legacyRunKey(id), lastID, interruptedRun); !noRun(lerr) {
		return ll, la, lerr
	}
	return l, after, err
}

// stopAgentRun is turns.Base.StopRun for agent's thread id, under its run
// key, else under the legacy key when the thread is stored with agent.
func (s *Server) stopAgentRun(ctx context.Context, log *zerolog.Logger, owner, agent, id string) (*turns.RunStopping, error) {
	st := s.cfg.Store
	stopping, err := s.base.StopRun(ctx, log, st, owner, runKey(agent, id))
	if !noRun(err) {
		return stopping, err
	}
	if ok, terr := s.cfg.storedWith(ctx, owner, agent, id); terr != nil {
		return nil, terr
	} else if !ok {
		return nil, err
	}
	return s.base.StopRun(ctx, log, st, owner, legacyRunKey(id))
}

// noRun reports whether err says a run key has no run to join or stop.
func noRun(err error) bool {
	var f *fault.Failure
	return errors.Is(err, turns.ErrNoRun) || errors.As(err, &f) && (f.Code == "run_not_kept" || f.Code == "no_run_in_flight")
}

// storedWith reports whether owner's thread id is stored with agent.
func (cfg *Config) storedWith(ctx context.Context, owner, agent, id string) (bool, error) {
	th, err := cfg.loadThread(ctx, owner, id)
	return th != nil && th.Agent == agent, err
}

// dropRunLogs drops the logs of owner's thread id kept under agent's run
// key and under the legacy key (the thread is deleted, or now another
// agent's).
func (cfg *Config) dropRunLogs(ctx context.Context, log *zerolog.Logger, owner, agent, id string) {
	for _, key := range []string{runKey(agent, id), legacyRunKey(id)} {
		if err := cfg.Store.DeleteRunLogs(ctx, owner, key); err != nil {
			log.Warn().Err(err).Str("thread", id).Msg("the thread's run logs could not be dropped")
		}
	}
}

// runInput is what a run's log keeps of what the run was asked
// (store.RunLog.Input), for a client joining it from nothing: the client's
// messages the thread's record lacks (copyForRecord), to go after the
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
